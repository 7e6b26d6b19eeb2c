"""Every message exists in both languages, and every code the code base emits has a message."""

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _catalog(lang):
    return yaml.safe_load((ROOT / "templates" / lang / "messages.yaml").read_text(encoding="utf-8"))


def test_both_languages_have_the_same_codes():
    en, zh = _catalog("en"), _catalog("zh")
    assert set(en) == set(zh), set(en) ^ set(zh)


def test_every_template_exists_in_both_languages():
    en = {p.name for p in (ROOT / "templates" / "en").iterdir()}
    zh = {p.name for p in (ROOT / "templates" / "zh").iterdir()}
    assert en == zh


def _emitted_codes():
    pattern = re.compile(r"""(?:code=|assume\(|warn\(|reject\()["']([a-z_0-9]+)["']""")
    codes = set()
    for path in [*ROOT.glob("estimator/*.py"), *ROOT.glob("bot/*.py")]:
        codes |= set(pattern.findall(path.read_text(encoding="utf-8")))
    return codes


def test_every_emitted_code_has_a_message():
    codes = _emitted_codes()
    assert len(codes) > 40
    missing = codes - set(_catalog("en"))
    assert not missing, missing


def test_chinese_messages_contain_chinese():
    for code, text in _catalog("zh").items():
        if code.startswith(("ckpt.", "offload.", "method.", "setting.")) and not re.search(r"[\u4e00-\u9fff]", text):
            continue  # labels such as "PPO / RLHF" are the same in both languages
        assert re.search(r"[\u4e00-\u9fff]", text), code


def test_shortfall_codes_have_messages():
    """search.choose reports shortfalls by kind; training.py turns each into a `short_<kind>` warning."""
    import inspect

    from gpuplan.estimator import search

    kinds = set(re.findall(r'\(\s*"([a-z]\w*)",\s*\{', inspect.getsource(search)))
    assert kinds >= {"stock", "deadline", "budget", "deadline_and_budget"}
    kinds.add("memory")
    for lang in ("en", "zh"):
        catalog = _catalog(lang)
        assert all(f"short_{k}" in catalog for k in kinds), lang


def test_labels_cover_every_value():
    from gpuplan.estimator.schema import CKPTS, DATA_KINDS, METHODS, OFFLOADS

    for lang in ("en", "zh"):
        catalog = _catalog(lang)
        for kind, values in (("method", METHODS), ("ckpt", CKPTS), ("offload", OFFLOADS), ("data", DATA_KINDS)):
            assert all(f"{kind}.{v}" in catalog for v in values), (lang, kind)
        assert all(
            f"alt.{r}" in catalog
            for r in ("other_gpu", "fewer_gpus_offload", "with_offload", "faster", "cheaper_slower")
        )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_message_compiles(lang):
    """Messages are compiled when first used: each must still compile."""
    from gpuplan.bot import render

    assert all(render.message_template(lang, code) is not None for code in render.messages(lang))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_rule_answer_compiles(lang):
    from gpuplan.bot import render
    from gpuplan.knowledge import catalog

    for rule in catalog().rules:
        title, answer, _ = render._rule_template(lang, rule.id)
        assert title and answer is not None
        assert render.cached_environment().get_template(f"{lang}/rules/{rule.id}/headline") is not None


@pytest.mark.parametrize(
    "question",
    ["70b full", "700亿 全参微调 8张H100", "NCCL timeout during training on 16 nodes", "训练时 loss 出现 nan"],
)
def test_an_answer_compiles_only_the_templates_it_shows(question):
    """A terminal answer shows a dozen messages of some 330 and a few rules of some 50: compiling
    them all cost a first answer about 0.2 s."""
    from gpuplan.bot import render
    from gpuplan.bot.pipeline import answer

    render.message_template.cache_clear()
    render._rule_template.cache_clear()
    plan = answer(question)
    render.text_answer(plan)
    assert render.message_template.cache_info().currsize < len(render.messages(plan.lang)) / 4
    assert render._rule_template.cache_info().currsize <= len(plan.diagnoses)


_COUNT_COMPILES = """
import sys, jinja2
from gpuplan.bot import render
from gpuplan.bot.pipeline import answer
plan = answer(sys.argv[1])
compiled = []
original = jinja2.Environment.compile
jinja2.Environment.compile = lambda self, *a, **k: compiled.append(1) or original(self, *a, **k)
out = render.text_answer(plan, details=True) + render.help_text(plan.lang)
print(len(compiled), len(out))
"""


@pytest.mark.parametrize(
    "question",
    [
        "70b full",
        "700亿 全参微调 8张H100",
        "qwen2.5-72b infer",
        "我们想QLoRA微调33B，单卡48G够吗？",
        "NCCL timeout during training on 16 nodes",
        "训练时 loss 出现 nan",
    ],
)
def test_a_second_process_compiles_no_template(tmp_path, question):
    """Compiled templates and messages are kept on disk (Jinja's bytecode cache): the first process
    compiles them, the next reads them (compiling them took some 0.03 s of every answer)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "GPUPLAN_KNOWLEDGE_CACHE": str(tmp_path)}
    runs = [
        subprocess.run([sys.executable, "-c", _COUNT_COMPILES, question], env=env, capture_output=True, text=True)
        for _ in range(2)
    ]
    (first, size), (second, same_size) = (map(int, run.stdout.split()) for run in runs)
    assert first > 0 and second == 0 and size == same_size, runs[-1].stderr


@pytest.mark.parametrize("setting", ["off", "/dev/null/not-a-folder"])
def test_without_a_usable_cache_templates_are_compiled_in_the_process(monkeypatch, setting):
    from gpuplan.bot import render
    from gpuplan.bot.pipeline import answer

    expected = render.text_answer(answer("70b full"))
    monkeypatch.setenv("GPUPLAN_KNOWLEDGE_CACHE", setting)
    render.cached_environment.cache_clear()
    render.message_template.cache_clear()
    try:
        assert render.cached_environment().bytecode_cache is None
        assert render.cached_environment(trim=False).bytecode_cache is None
        assert render.text_answer(answer("70b full")) == expected
    finally:
        render.cached_environment.cache_clear()
        render.message_template.cache_clear()


def test_the_slack_environment_keeps_no_compiled_template_on_disk():
    """Jinja keys its bytecode cache by name and source only, and the Slack environment compiles the
    same sources otherwise (every value escaped): it must not read the text environment's."""
    from gpuplan.bot import render
    from gpuplan.bot.slack import blocks

    assert blocks.slack_environment().bytecode_cache is None
    assert render.environment().bytecode_cache is None
