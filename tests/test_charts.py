"""A plan's chart: the PNG's size, the values it carries against the plan's, the memory bar
measured in pixels, Chinese labels in a CJK font, and `gpuplan --chart FILE.png`."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
import warnings
from dataclasses import asdict

import pytest
from PIL import Image

from gpuplan.bot import charts
from gpuplan.bot.cli import main
from gpuplan.bot.pipeline import answer

# question, language, what the time-against-cost panel shows
QUESTIONS = [
    ("70b full", "en", "alternatives"),
    ("700亿 全参微调 8张H100", "zh", "alternatives"),  # does not fit: the bar stands above the lines
    ("qwen2.5-72b infer", "en", "alternatives"),
    ("llama-3-8b qlora gpu=4090", "en", "alternatives"),
    ("A100 or H100 for 70b lora", "en", "compare"),
    ("A100还是H100部署 llama-3-70b", "zh", "compare"),
]
SIZE = (round(charts.FIGSIZE[0] * charts.DPI), round(charts.FIGSIZE[1] * charts.DPI))
CJK = "\u4e00-\u9fff"


@pytest.fixture(scope="module")
def drawn():
    """question -> (plan, PNG bytes), each drawn once."""
    out = {}
    for question, _, _ in QUESTIONS:
        plan = answer(question)
        out[question] = (plan, charts.png(plan))
    return out


def _image(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    image.load()
    return image


def _expected_points(plan) -> list[tuple[float, float]]:
    """(x, y) of every option, straight from the plan, in the chart's units."""
    est = plan.estimate
    if plan.comparison:
        infer = est.serving is not None
        keys = ("tokens_per_s_per_sequence", "usd_per_million_tokens") if infer else ("days", "cost_usd")
        return [(getattr(row, keys[0]), getattr(row, keys[1])) for row in plan.comparison]
    if est.serving is not None:
        points = [(est.serving.tokens_per_s_per_sequence, est.compute.cost_per_million_tokens_usd)]
        per_sequence = [a.tokens_per_s_per_gpu * a.gpus / a.micro_batch for a in est.alternatives]
        return points + [
            (x, a.cost_per_million_tokens_usd) for x, a in zip(per_sequence, est.alternatives, strict=True)
        ]
    return [(est.compute.days, est.compute.cost_usd)] + [(a.days, a.cost_usd) for a in est.alternatives]


@pytest.mark.parametrize("question,lang,title", QUESTIONS)
def test_the_png_carries_the_plans_numbers(drawn, question, lang, title):
    plan, png = drawn[question]
    image = _image(png)
    assert image.format == "PNG" and image.size == SIZE
    shown = json.loads(image.text[charts.METADATA_KEY])
    memory = plan.estimate.memory
    breakdown = memory.breakdown_gib.model_dump()
    assert shown["parts"] == {part: gib for part, gib in breakdown.items() if gib > 0}
    assert list(shown["parts"]) == [p for p in charts.PARTS if p in shown["parts"]]  # bottom to top
    assert sum(shown["parts"].values()) == pytest.approx(memory.per_gpu_gib, rel=1e-6)
    assert (shown["usable_gib"], shown["capacity_gib"]) == (memory.usable_gib, memory.capacity_gib)
    assert shown["lang"] == lang and shown["title"] == title
    scale = 24 if shown["x_axis"] == "hours" else 1
    points = [value for p in shown["points"] for value in (p["x"] / scale, p["y"])]
    assert points == pytest.approx([value for point in _expected_points(plan) for value in point], rel=1e-9)
    assert [p["kind"] for p in shown["points"]].count("plan") == 1
    assert shown == json.loads(json.dumps(asdict(charts.chart_data(plan)) | {"memory_top": shown["memory_top"]}))


def _memory_pixels(image: Image.Image, top: float):
    """The memory panel's centre column, and the pixel row of a value in GiB."""
    width, height = image.size
    left, bottom, span, tall = charts.MEMORY_AXES
    low, high = charts.BAR_XLIM
    column = round((left + span * (0 - low) / (high - low)) * width)
    return column, lambda gib: height - (bottom + tall * gib / top) * height


def _near(rgb: tuple[int, ...], hex_color: str, tolerance: int = 12) -> bool:
    want = tuple(int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return all(abs(a - b) <= tolerance for a, b in zip(rgb[:3], want, strict=True))


@pytest.mark.parametrize("question,lang,title", QUESTIONS)
def test_the_bar_is_as_tall_as_the_plans_memory(drawn, question, lang, title):
    """Measured in pixels: each part's colour at the middle of its share, and the bar's top where
    the plan's per-GPU memory puts it (within two pixels)."""
    plan, png = drawn[question]
    image = _image(png).convert("RGB")
    data = charts.chart_data(plan)
    column, row_of = _memory_pixels(image, data.memory_top)
    base = 0.0
    for part, gib in data.parts.items():
        if row_of(base) - row_of(base + gib) >= 6:  # a part a few pixels tall is checked by the top below
            middle = round(row_of(base + gib / 2))
            assert _near(image.getpixel((column, middle)), charts.PART_COLORS[part]), (part, middle)
        base += gib
    colours = list(charts.PART_COLORS.values())
    row = round(row_of(0)) - 2
    while any(_near(image.getpixel((column, row)), c) for c in colours):
        row -= 1
    assert abs(row + 1 - row_of(plan.estimate.memory.per_gpu_gib)) <= 2


def test_chinese_labels_are_drawn_in_a_cjk_font(drawn):
    if charts.cjk_font() is None:
        pytest.skip("no CJK font installed (apt-get install fonts-wqy-microhei): only the glyph check is skipped")
    plan, png = drawn["700亿 全参微调 8张H100"]
    shown = json.loads(_image(png).text[charts.METADATA_KEY])
    assert all(any(CJK[0] <= ch <= CJK[-1] for ch in p["label"]) for p in shown["points"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        charts.draw(charts.chart_data(plan))
    assert not [w for w in caught if "missing from font" in str(w.message)]


def test_without_a_cjk_font_the_log_says_so_once(monkeypatch, caplog):
    from matplotlib import font_manager

    latin = [f for f in font_manager.fontManager.ttflist if f.name not in charts.CJK_FAMILIES]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", latin)
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda *a, **k: [])
    charts.cjk_font.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="gpuplan.charts"):
            assert charts.cjk_font() is None and charts.cjk_font() is None
            assert _image(charts.png(answer("700亿 全参微调"))).size == SIZE  # still drawn
    finally:
        monkeypatch.undo()
        charts.cjk_font.cache_clear()
    assert [r.getMessage() for r in caplog.records].count(caplog.records[0].getMessage()) == 1
    assert "no CJK font" in caplog.records[0].getMessage()


@pytest.mark.parametrize("question", ["nccl timeout", "help", "训练卡住了 NCCL 超时"])
def test_no_chart_without_a_plan(question):
    assert charts.png(answer(question)) is None


@pytest.mark.parametrize(
    "question,said",
    [("llama-3-70b lora", "Chart written to"), ("700亿 全参微调 8张H100", "图已写入")],
)
def test_cli_writes_the_chart_beside_the_answer(tmp_path, capsys, question, said):
    path = tmp_path / "plan.png"
    assert main(["--chart", str(path), question]) == 0
    out, err = capsys.readouterr()
    assert said in err and out.strip()  # the answer on stdout, the chart's line on stderr
    assert _image(path.read_bytes()).size == SIZE
    assert main(["--json", "--chart", str(path), question]) == 0
    assert json.loads(capsys.readouterr().out)["memory"]["per_gpu_gib"] > 0  # stdout stays JSON


@pytest.mark.parametrize(
    "question,path,code,said",
    [
        ("nccl timeout", "plan.png", 0, "No chart"),
        ("70b full", "missing/plan.png", 2, "could not be written"),
        ("700亿 全参微调", "missing/plan.png", 2, "没能写入"),
    ],
)
def test_cli_says_what_became_of_the_chart(tmp_path, capsys, question, path, code, said):
    assert main(["--chart", str(tmp_path / path), question]) == code
    assert said in capsys.readouterr().err
    assert not (tmp_path / path).exists()


def test_matplotlib_stays_off_the_start_up_path():
    """The CLI and the Slack app import matplotlib only when a chart is drawn."""
    probe = "import sys, gpuplan.bot.cli, gpuplan.bot.slack.server; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
