"""`gpuplan config FORMAT "<question>"`: the files that run the plan's layout, printed or written.

Exit codes as the main command's: 0 written, 2 the question or the format cannot give files
(stderr says why and names the formats that can), 1 a bug.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from gpuplan.bot import configs, render
from gpuplan.bot.configs import ConfigError
from gpuplan.bot.language.parser import detect_lang
from gpuplan.bot.pipeline import QuestionError
from gpuplan.estimator.schema import Note

EXIT_OK, EXIT_UNREADABLE = 0, 2


def is_config(argv: list[str]) -> bool:
    """`gpuplan config deepspeed "70b full"` is the subcommand; `gpuplan "config for 70b"` a question."""
    return len(argv) >= 2 and argv[0] == "config"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gpuplan config",
        description="Write the files that run a plan's layout. / 生成按方案布局直接运行的配置文件。",
        epilog='examples: gpuplan config deepspeed "70b full"   gpuplan config vllm "llama-3.1-70b infer on 2 H100"\n'
        '          gpuplan config llamafactory --out ./run "qwen2.5-7b qlora gpu=4090"',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("format", help="one of: " + ", ".join(configs.FORMATS))
    p.add_argument("--lang", choices=("en", "zh"), help="language of the comments (default: the question's)")
    p.add_argument("--out", type=Path, help="write the files into this directory instead of printing them")
    p.add_argument("question", nargs="+")
    return p


def main(argv: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `gpuplan config ...` (argv without the word `config`)."""
    args = _parser().parse_args(argv)
    text = " ".join(args.question)
    try:
        _plan, files = configs.export_for_question(text, args.format, lang=args.lang)
    except QuestionError as exc:
        return EXIT_UNREADABLE, "", render.error_text(exc.notes, exc.lang)
    except ConfigError as exc:  # said in the question's language
        lang = args.lang or detect_lang(text)
        return EXIT_UNREADABLE, "", render.message(Note(code=exc.code, params=exc.params), lang)
    if args.out:
        return EXIT_OK, "\n".join(write(files, args.out)), ""
    return EXIT_OK, listing(files), ""


def listing(files: dict[str, str]) -> str:
    """Every file under a header line with its name, as one text."""
    return "\n".join(f"===== {name} =====\n{text}" for name, text in files.items())


def write(files: dict[str, str], out: Path) -> list[str]:
    """Write the files into `out` (scripts executable); the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        if name.endswith(".sh"):
            os.chmod(path, 0o755)
        written.append(str(path))
    return written
