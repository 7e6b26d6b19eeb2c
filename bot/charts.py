"""Pictures of a plan, as one PNG: memory per GPU as a stacked bar against what the GPU can use,
and the plan with its alternatives (or a comparison's options) as time against cost.

One figure with two panels rather than two figures: a reply carries one picture (one upload, one
file in the Slack thread, one `--chart FILE.png`), and the panels answer the two questions a plan
is read for side by side: does it fit, and what else would it cost.

`chart_data` is a pure function from a Plan to the values drawn; `draw` turns them into PNG bytes
with matplotlib's Agg backend (no display) and keeps them in the PNG's text metadata under
METADATA_KEY, so a reader (tests/test_charts.py) can check the picture against the plan.
"""

from __future__ import annotations

import functools
import io
import json
import logging
import re
import threading
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gpuplan.bot import render
from gpuplan.bot.answer import Answer
from gpuplan.estimator.answer_schema import ComparisonRow
from gpuplan.estimator.schema import Alternative, Estimate, Note

log = logging.getLogger("gpuplan.charts")

FIGSIZE = (10.0, 5.0)  # inches: at DPI a 1000 x 500 PNG, readable in a Slack thread without opening it
DPI = 100
# Each panel's place in the figure (left, bottom, width, height as fractions), fixed rather than
# laid out, so a bar's pixels follow from its value alone
MEMORY_AXES = (0.07, 0.08, 0.12, 0.82)
OPTIONS_AXES = (0.57, 0.34, 0.40, 0.56)  # its legend below it
BAR_XLIM = (-0.7, 0.7)  # the memory bar stands at x = 0
BAR_WIDTH = 0.8
HEADROOM = 1.15  # axes reach 15% above the highest value: the memory bar or card, an option
PARTS = ("weights", "gradients", "optimizer", "activations", "adapters", "kv_cache", "overhead")
# Okabe & Ito's colour-blind-safe palette (jfly.uni-koeln.de/color), one colour per part
PART_COLORS = {
    "weights": "#0072B2",
    "gradients": "#56B4E9",
    "optimizer": "#E69F00",
    "activations": "#009E73",
    "adapters": "#CC79A7",
    "kv_cache": "#D55E00",
    "overhead": "#999999",
}
PLAN_COLOR, NO_FIT_COLOR = "#000000", "#999999"
OTHER_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9")  # the same palette
OTHER_MARKERS = ("o", "s", "D", "^", "v", "P")
LOG_SPREAD = 30  # an axis whose values span more than this factor is drawn on a log scale
HOURS_BELOW_DAYS = 2  # training times under two days are drawn in hours
METADATA_KEY = "gpuplan"
FILENAME = "gpuplan-plan.png"
# CJK fonts by preference; matplotlib falls back to the first one found for glyphs DejaVu Sans lacks
CJK_FAMILIES = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Noto Sans CJK JP",
    "Droid Sans Fallback",
)
_CJK_FILE = re.compile(r"cjk|wqy|wenquanyi|sourcehan|notosanssc|droidsansfallback", re.I)
_DRAW_LOCK = threading.Lock()  # matplotlib's font cache and rcParams are process-wide, not thread-safe


@dataclass(frozen=True)
class Point:
    """One option on the time-against-cost panel."""

    label: str
    x: float
    y: float
    kind: str  # plan | alternative | option
    fits: bool = True


@dataclass(frozen=True)
class ChartData:
    """What one chart shows, in the plan's language and units."""

    lang: str
    parts: dict[str, float]  # GiB per GPU of each part of the breakdown that holds any, in PARTS order
    per_gpu_gib: float
    usable_gib: float
    capacity_gib: float
    card: str
    points: list[Point]
    x_axis: str  # hours | days | speed
    y_axis: str  # cost | price
    title: str  # alternatives | compare

    @property
    def memory_top(self) -> float:
        """The memory axis's upper limit in GiB."""
        return max(self.per_gpu_gib, self.capacity_gib) * HEADROOM


def chart_data(plan: Answer) -> ChartData | None:
    """The values a plan's chart draws; None when the answer has no estimate (a troubleshooting
    answer, a question back)."""
    est = plan.estimate
    if est is None:
        return None
    memory, serving = est.memory, est.serving is not None
    breakdown = memory.breakdown_gib.model_dump()
    compared = _compared(plan, serving)
    points = compared or _alternatives(plan, est)
    hours = not serving and max(p.x for p in points) < HOURS_BELOW_DAYS
    if hours:  # drawn in hours: a day is 24 of them
        points = [Point(p.label, p.x * 24, p.y, p.kind, p.fits) for p in points]
    return ChartData(
        lang=plan.lang,
        parts={part: breakdown[part] for part in PARTS if breakdown[part] > 0},
        per_gpu_gib=memory.per_gpu_gib,
        usable_gib=memory.usable_gib,
        capacity_gib=memory.capacity_gib,
        card=render.card(est.resolved.gpu_name),
        points=points,
        x_axis="speed" if serving else "hours" if hours else "days",
        y_axis="price" if serving else "cost",
        title="compare" if compared else "alternatives",
    )


def _alternatives(plan: Answer, est: Estimate) -> list[Point]:
    """The plan and the estimator's alternatives: days and dollars for training; for serving the
    speed of one sequence and the price of a million generated tokens."""
    r, c = est.resolved, est.compute
    own = _point_label(plan.lang, r.gpus, r.gpu_name, "", True, mine=True)
    if est.serving is not None:
        points = [Point(own, est.serving.tokens_per_s_per_sequence, c.cost_per_million_tokens_usd or 0.0, "plan")]
    else:
        points = [Point(own, c.days, c.cost_usd, "plan")]
    return points + [_alternative_point(plan.lang, a, est.serving is not None) for a in est.alternatives]


def _alternative_point(lang: str, alt: Alternative, serving: bool) -> Point:
    name = render.label("alt", alt.reason, lang)
    text = _point_label(lang, alt.gpus, alt.gpu_name, name, True)
    if serving:
        # a sequence's speed: the replica's tokens/s over the sequences it serves at once
        # (estimator/serving_alternatives.py `_worth_offering`)
        per_sequence = (alt.tokens_per_s_per_gpu or 0.0) * alt.gpus / max(alt.micro_batch, 1)
        return Point(text, per_sequence, alt.cost_per_million_tokens_usd or 0.0, "alternative")
    return Point(text, alt.days, alt.cost_usd, "alternative")


def _compared(plan: Answer, serving: bool) -> list[Point]:
    """A comparison's options, the one the plan picked marked as the plan. Left out: an option
    measured otherwise than the plan (serving beside training) and one without a figure."""
    r = plan.estimate.resolved
    points = []
    for row in plan.comparison:
        if (row.method == "infer") != serving:
            continue
        x, y = (row.tokens_per_s_per_sequence, row.usd_per_million_tokens) if serving else (row.days, row.cost_usd)
        if x is None or y is None:
            continue
        mine = (row.gpu, row.gpus, row.method, row.model_name) == (r.gpu, r.gpus, r.method, r.model_name)
        name = _option_name(row, plan.lang)
        text = _point_label(plan.lang, row.gpus, row.gpu_name, name, row.fits, mine=mine)
        points.append(Point(text, x, y, "plan" if mine else "option", row.fits))
    return points


def _option_name(row: ComparisonRow, lang: str) -> str:
    """What a compared option is called beside its GPUs: the method or the model; a GPU names itself."""
    if row.kind == "method":
        return render.label("method", row.method, lang)
    return row.model_name if row.kind == "model" else ""


def _point_label(lang: str, gpus: int, gpu_name: str, name: str, fits: bool, mine: bool = False) -> str:
    params = {"gpus": gpus, "card": render.card(gpu_name), "option": name, "fits": fits, "mine": mine}
    return render.message(Note(code="chart.point", params=params), lang)


def png(plan: Answer) -> bytes | None:
    """The plan's chart as PNG bytes, or None when the answer has nothing to draw."""
    data = chart_data(plan)
    return draw(data) if data is not None else None


@dataclass(frozen=True)
class ChartFile:
    """A plan's chart as a file to post: its bytes, name, title, and the text read out in its place."""

    data: bytes
    filename: str
    title: str
    alt_text: str


# files.getUploadURLExternal answers alt_txt_too_large past 1000 characters (api.slack.com/methods)
ALT_TEXT_MAX = 1000


def chart_file(plan: Answer) -> ChartFile | None:
    """The chart as a file, titled in the plan's language, its alt text the answer's headline."""
    image = png(plan)
    if image is None:
        return None
    title = render.label("chart", "file_title", plan.lang)
    return ChartFile(image, FILENAME, title, (render.headline(plan) or title)[:ALT_TEXT_MAX])


def write_chart(plan: Answer, path: str) -> tuple[bool, str]:
    """`gpuplan --chart FILE.png`: write the chart; whether nothing failed, and what became of it
    in the plan's language (a path that cannot be written is named with the system's reason)."""
    image = png(plan)
    if image is None:
        return True, render.message(Note(code="chart.none"), plan.lang)
    try:
        Path(path).write_bytes(image)
    except OSError as exc:
        params = {"path": path, "error": exc.strerror or type(exc).__name__}
        return False, render.message(Note(code="chart.not_written", params=params), plan.lang)
    return True, render.message(Note(code="chart.written", params={"path": path}), plan.lang)


def draw(data: ChartData) -> bytes:
    """The chart as PNG bytes, with `data` as JSON in the PNG's text metadata."""
    # matplotlib is imported on the first chart, not at start-up: it and its font cache take a second
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # lazy, as matplotlib above

    with _DRAW_LOCK:
        cjk = cjk_font()
        fonts = {"font.family": ["DejaVu Sans", *([cjk] if cjk else [])]}  # per glyph, the first that has it
        with matplotlib.rc_context(fonts), warnings.catch_warnings():
            if cjk is None:  # said once in the log (cjk_font): not again for every missing glyph
                warnings.filterwarnings("ignore", message="Glyph .* missing from font")
            figure = Figure(figsize=FIGSIZE, dpi=DPI)
            _memory_panel(figure.add_axes(MEMORY_AXES), data)
            _options_panel(figure.add_axes(OPTIONS_AXES), data)
            out = io.BytesIO()
            metadata = {METADATA_KEY: json.dumps(asdict(data) | {"memory_top": data.memory_top})}
            figure.savefig(out, format="png", dpi=DPI, metadata=metadata)
    return out.getvalue()


def _text(code: str, lang: str, **params: Any) -> str:
    return render.message(Note(code=code, params=params), lang)


def _memory_panel(ax: Any, data: ChartData) -> None:
    """One stacked bar, bottom to top in PARTS order, over the usable memory (solid line) and the
    card's capacity (dashed); the lines run behind the bar, so where the bar passes them shows."""
    lang, bottom, handles = data.lang, 0.0, []
    for part, gib in data.parts.items():
        label = f"{render.label('part', part, lang)} {render.gib(gib)}"
        handles.append(ax.bar(0, gib, BAR_WIDTH, bottom=bottom, color=PART_COLORS[part], label=label, zorder=2))
        bottom += gib
    usable = _text("chart.usable", lang, gib=data.usable_gib)
    capacity = _text("chart.capacity", lang, card=data.card, gib=data.capacity_gib)
    lines = [
        ax.axhline(data.capacity_gib, color=PLAN_COLOR, linewidth=1.2, linestyle="--", zorder=1, label=capacity),
        ax.axhline(data.usable_gib, color=PLAN_COLOR, linewidth=1.5, zorder=1, label=usable),
    ]
    needs = _text("chart.needs", lang, gib=data.per_gpu_gib)
    ax.text(0, data.per_gpu_gib, needs, ha="center", va="bottom", fontsize=8, zorder=3)
    ax.set_xlim(*BAR_XLIM)
    ax.set_ylim(0, data.memory_top)
    ax.set_xticks([])
    ax.set_ylabel(render.label("chart", "memory_axis", lang))
    ax.set_title(render.label("chart", "memory_title", lang), fontsize=11)
    # the lines, then the parts top first, as they stand in the bar
    ax.legend(handles=lines + handles[::-1], loc="center left", bbox_to_anchor=(1.05, 0.5), fontsize=8, frameon=False)


def _options_panel(ax: Any, data: ChartData) -> None:
    """Each option as a point of its own colour and shape, named in the legend under the panel (names
    beside the points would cover each other)."""
    lang = data.lang
    others = [p for p in data.points if p.kind != "plan"]
    for point in data.points:
        marker, color, size = _style(point, others.index(point) if point in others else -1)
        ax.scatter(point.x, point.y, marker=marker, s=size, color=color, zorder=3, label=point.label)
    ax.margins(0.15)  # what a log scale keeps around its points
    _scale(ax, "x", [p.x for p in data.points], lang)
    _scale(ax, "y", [p.y for p in data.points], lang)
    ax.grid(True, color="#e5e5e5", linewidth=0.8, zorder=0)
    ax.set_xlabel(render.label("chart.axis", data.x_axis, lang))
    ax.set_ylabel(render.label("chart.axis", data.y_axis, lang))
    ax.set_title(render.label("chart.options_title", data.title, lang), fontsize=11)
    ax.legend(loc="upper left", bbox_to_anchor=(0, -0.14), fontsize=8, frameon=False, scatterpoints=1)


def _style(point: Point, other: int) -> tuple[str, str, float]:
    """Marker, colour and size: the plan a black star, the others a shape and colour each (the
    `other`-th of them), an option that does not fit grey (a cross; the plan keeps its star)."""
    if point.kind == "plan":
        return "*", PLAN_COLOR if point.fits else NO_FIT_COLOR, 240
    if not point.fits:
        return "X", NO_FIT_COLOR, 60
    return OTHER_MARKERS[other % len(OTHER_MARKERS)], OTHER_COLORS[other % len(OTHER_COLORS)], 60


def _scale(ax: Any, name: str, values: list[float], lang: str) -> None:
    """Log scale for values that span more than LOG_SPREAD, else from zero; ticks as the answers
    write numbers (195k, 19.5万)."""
    positive = [v for v in values if v > 0]
    if len(positive) == len(values) and max(positive) > LOG_SPREAD * min(positive):
        getattr(ax, f"set_{name}scale")("log")
    else:  # from zero, so the distance between two options is their difference's true share
        getattr(ax, f"set_{name}lim")(0, max(values) * HEADROOM or 1)
    getattr(ax, f"{name}axis").set_major_formatter(lambda value, _: render.human(value, lang))


@functools.cache
def cjk_font() -> str | None:
    """The family of an installed CJK font (CJK_FAMILIES, by preference), found once per process
    (under `draw`'s lock); None, said once in the log, when there is none and Chinese labels will
    show empty boxes."""
    # matplotlib is imported when the first chart is drawn, not at start-up (see `draw`)
    from matplotlib import font_manager

    found = _first_cjk({f.name for f in font_manager.fontManager.ttflist})
    if found is None:  # installed after matplotlib cached its font list: add the files it missed
        for path in font_manager.findSystemFonts():
            if _CJK_FILE.search(Path(path).name):
                font_manager.fontManager.addfont(path)
        found = _first_cjk({f.name for f in font_manager.fontManager.ttflist})
    if found is None:
        log.warning("no CJK font found (install fonts-wqy-microhei or fonts-noto-cjk): Chinese chart labels show boxes")
    return found


def _first_cjk(installed: set[str]) -> str | None:
    return next((family for family in CJK_FAMILIES if family in installed), None)
