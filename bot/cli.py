"""The command line: `gpuplan [--json] [--lang en|zh] "<question>"`.

Exit codes (DESIGN.md): 0 answered (a plan, or a question back); 2 the question could not be
read (stderr names what and shows an example); 1 a bug.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import os
import sys
import traceback

from gpuplan.bot import config_cli, configs, render
from gpuplan.bot.charts import write_chart
from gpuplan.bot.jsonout import plan_json
from gpuplan.bot.language.parser import detect_lang
from gpuplan.bot.pipeline import QuestionError, answer
from gpuplan.estimator.schema import Note
from gpuplan.knowledge import SettingError, catalog

EXIT_OK, EXIT_BUG, EXIT_UNREADABLE = 0, 1, 2


def is_serve(argv: list[str], word: str = "serve") -> bool:
    """`gpuplan serve [--options]` starts the app; `gpuplan "serve llama-3-70b ..."` is a question.
    The same rule tells `gpuplan manifest [--options]` from a question."""
    return bool(argv) and argv[0] == word and (len(argv) == 1 or argv[1].startswith("-"))


def _build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gpuplan",
        description="Size GPUs for training, fine-tuning and serving LLMs. / 估算大模型训练、微调和推理所需的 GPU。",
        epilog='examples: gpuplan "70b full"   gpuplan "llama-3-8b qlora gpu=4090"\n'
        '          gpuplan --json "qwen2.5-72b infer"   gpuplan "700亿 全参微调 8张H100"\n'
        "lists:    gpuplan gpus   gpuplan models\n"
        'configs:  gpuplan config deepspeed "70b full"   (formats: ' + ", ".join(configs.FORMATS) + ")\n"
        "slack:    gpuplan serve [--socket] [--port 3000]   gpuplan manifest --url https://your.host",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--json", action="store_true", help="print the JSON contract instead of text")
    p.add_argument("--lang", choices=("en", "zh"), help="answer language (default: the question's)")
    p.add_argument(
        "--details",
        action="store_true",
        help="the whole plan: every assumption, data pipeline, storage, network, tiers, the full diagnosis",
    )
    p.add_argument(
        "--ticket",
        action="store_true",
        help="treat the text as a customer's message: print a reply for the customer and an internal note",
    )
    p.add_argument(
        "--config",
        metavar="FORMAT",
        choices=configs.FORMATS,
        help="also write the plan's files in FORMAT (with --json: a configs object {filename: text})",
    )
    p.add_argument(
        "--chart",
        metavar="FILE.png",
        help="also draw the plan as a PNG: memory per GPU against the usable memory, time against cost of its options",
    )
    p.add_argument("question", nargs="+", help='the question, e.g. "70b full" or "model=llama-3-70b method=lora"')
    return p


def _list_gpus() -> str:
    rows = [f"{'id':16} {'memory':>8} {'bf16 TFLOP/s':>13} {'HBM GB/s':>9} {'$/h':>6}  name"]
    for g in catalog().gpus.values():
        bf16 = f"{g.bf16_tflops:g}" if g.bf16_tflops else "-"
        rows.append(
            f"{g.id:16} {g.memory_gib:>6.1f}Gi {bf16:>13} {g.hbm_gb_s:>9g} {g.price_usd_per_hour:>6.2f}  {g.name}"
        )
    return "\n".join(rows)


def _list_models() -> str:
    rows = [f"{'id':18} {'params':>8} {'layers':>6} {'hidden':>6} {'context':>8}  name"]
    for m in catalog().models.values():
        rows.append(f"{m.id:18} {m.params_b:>7g}B {m.layers:>6} {m.hidden:>6} {m.max_context:>8}  {m.name}")
    return "\n".join(rows)


def _short_lived() -> None:
    """What the imports made lives until the process ends: the garbage collector need not walk it at
    every full collection, nor at exit (Python's gc docs, `freeze`). Its walks over some 50,000 objects
    took about 0.09 s of a terminal answer: 0.05 s during the answer, 0.04 s at exit."""
    gc.freeze()
    atexit.register(gc.freeze)  # at exit, before the interpreter's last collection: the answer's objects too


def _utf8(stream) -> bool:
    """Whether a text stream holds any character: UTF-8, or in memory (io.StringIO has no encoding)."""
    encoding = getattr(stream, "encoding", None)
    return encoding is None or encoding.lower().replace("-", "").replace("_", "") in ("utf8", "utf8sig")


def _tolerant_streams() -> None:
    """An output stream that cannot hold Chinese (PYTHONIOENCODING=ascii, an old terminal) gets
    escapes for what it cannot print instead of failing every answer; JSON is then ASCII-escaped."""
    for stream in (sys.stdout, sys.stderr):
        if not _utf8(stream) and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the program itself, one command per process (callers in a process of theirs pass argv)
        _short_lived()
    argv = sys.argv[1:] if argv is None else argv
    _tolerant_streams()
    if is_serve(argv):
        from gpuplan.bot.slack import serve  # lazy: Slack's settings (pydantic-settings, asyncio), for `serve` only

        return serve.main(argv[1:])
    if is_serve(argv, word="manifest"):
        from gpuplan.bot.slack import manifest  # lazy: the Slack app manifest, for `manifest` only

        return manifest.main(argv[1:])
    if config_cli.is_config(argv):
        return _config(argv[1:])
    args = _build_parser().parse_args(argv)
    text = " ".join(args.question)
    try:
        if text.strip().lower() in ("gpus", "models"):
            _print_to_pipe(_list_gpus() if text.strip().lower() == "gpus" else _list_models())
            return EXIT_OK
        plan, files = answer(text, lang=args.lang), None
        if args.config:  # the plan the files are written for: planned again where the format needs it
            plan, files = configs.export_answered(text, plan, args.config)
        if args.ticket:
            reply, note = render.ticket(plan, text)
            output = reply + "\n" + "-" * 72 + "\n" + note
        elif args.json:
            output = json.dumps(plan_json(plan, configs=files), ensure_ascii=not _utf8(sys.stdout), indent=2)
        else:
            output = render.text_answer(plan, details=args.details)
        if files is not None and not args.json:
            output += "\n\n" + config_cli.listing(files)
        written, said = write_chart(plan, args.chart) if args.chart else (True, "")
        if said:  # on stderr: stdout stays the answer (and valid JSON with --json)
            print(said, file=sys.stderr)
    except QuestionError as exc:
        print(render.error_text(exc.notes, exc.lang), file=sys.stderr)
        return EXIT_UNREADABLE
    except configs.ConfigError as exc:
        note = Note(code=exc.code, params=exc.params)
        print(render.message(note, args.lang or detect_lang(text)), file=sys.stderr)
        return EXIT_UNREADABLE
    except SettingError as exc:  # a deployer's environment variable gpuplan cannot use: named, not a bug
        print(f"gpuplan: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    except Exception:  # a bug: say so plainly, keep the traceback for debugging only
        lang = args.lang or detect_lang(text)
        msg = (
            "内部错误，请把问题原文报告给 gpuplan 维护者。"
            if lang == "zh"
            else "Internal error: please report the question to the gpuplan maintainers."
        )
        print(msg, file=sys.stderr)
        if os.environ.get("GPUPLAN_DEBUG"):
            traceback.print_exc()
        return EXIT_BUG
    _print_to_pipe(output)
    return EXIT_OK if written else EXIT_UNREADABLE  # a chart path that cannot be written is named, not a bug


def _config(argv: list[str]) -> int:
    """`gpuplan config ...`, with the same answer to a bug as a question gets."""
    try:
        code, out, err = config_cli.main(argv)
    except Exception:
        print("Internal error: please report the command to the gpuplan maintainers.", file=sys.stderr)
        if os.environ.get("GPUPLAN_DEBUG"):
            traceback.print_exc()
        return EXIT_BUG
    if err:
        print(err, file=sys.stderr)
    if out:
        _print_to_pipe(out)
    return code


def _print_to_pipe(output: str) -> None:
    """Print; a reader that stops early (`gpuplan ... | head`) is not an error."""
    try:
        print(output)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout again at exit


if __name__ == "__main__":
    sys.exit(main())
