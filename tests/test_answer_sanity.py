"""Nothing absurd, nothing contradictory, on one screen: checked over every labelled real question in
the repository (training and evaluation sets, about 2,800, in English and Chinese).

Each answer is computed once (module fixture) and every check reports all the questions that break it."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
import yaml

from gpuplan.bot import render
from gpuplan.bot.answer import Answer
from gpuplan.bot.pipeline import QuestionError, answer
from gpuplan.estimator import capacity

ROOT = Path(__file__).parents[1]
MOST_LINES = 30  # the default answer fits one screen
SLOWEST = 10.0  # no alternative slower than the plan by more than this


def _labelled() -> list[tuple[str, str]]:
    out = []
    for folder in ("train", "eval"):
        for path in sorted((ROOT / folder / "questions").glob("*.yaml")):
            if not path.name.startswith("spec"):
                out += [(q["id"], q["text"]) for q in yaml.safe_load(path.read_text(encoding="utf-8"))]
    return out


@pytest.fixture(scope="module")
def answers() -> list[tuple[str, str, Answer, str]]:
    """(id, question, plan, the default terminal answer) for every labelled question that reads."""
    import os

    os.environ["GPUPLAN_HF_LOOKUP"] = "0"
    out = []
    for qid, text in _labelled():
        try:
            plan = answer(text)
        except QuestionError:  # a gpuplan setting with a bad value: refused, said elsewhere
            continue
        out.append((qid, text, plan, render.text_answer(plan)))
    return out


def _planned(answers):
    return [(qid, plan, text) for qid, _, plan, text in answers if plan.estimate is not None]


def test_every_answer_opens_with_its_headline_on_one_screen(answers):
    long = [(qid, len(text.splitlines())) for qid, _, plan, text in answers if plan.intent != "help"]
    over = [row for row in long if row[1] > MOST_LINES]
    assert not over, over[:10]
    wrong = [
        qid for qid, _, plan, text in answers if plan.intent != "help" and text.splitlines()[0] != render.headline(plan)
    ]
    assert not wrong, wrong[:10]
    assert all(render.headline(plan).strip() for _, _, plan, _ in answers)


def test_no_job_of_zero_time_or_cost(answers):
    absurd = [
        (qid, plan.estimate.compute.days * 86400, plan.estimate.compute.cost_usd)
        for qid, plan, text in _planned(answers)
        if plan.estimate.resolved.method != "infer"
        and (plan.estimate.compute.days * 86400 < 1 or plan.estimate.compute.cost_usd <= 0 or "$0.00" in text)
    ]
    assert not absurd, absurd[:10]


def test_fits_only_within_the_usable_memory(answers):
    wrong = []
    for qid, plan, _ in _planned(answers):
        m = plan.estimate.memory
        if m.fits != (m.per_gpu_gib <= m.usable_gib) or (
            m.tight and not (m.fits and m.per_gpu_gib > 0.95 * m.usable_gib)
        ):
            wrong.append((qid, m.per_gpu_gib, m.usable_gib, m.fits, m.tight))
    assert not wrong, wrong[:10]


def test_the_answer_never_says_both_fits_and_does_not(answers):
    """The memory line, the assumptions and the headline agree on whether the plan fits."""
    both = []
    for qid, plan, _ in _planned(answers):
        fits = plan.estimate.memory.fits
        details = render.plan_text(plan, details=True)
        memory_line = next(line for line in details.splitlines() if line.startswith(("Memory per GPU", "单卡显存")))
        if fits and ("DOES NOT FIT" in memory_line or "装不下" in memory_line):
            both.append((qid, "fits, yet says it does not"))
        if not fits and ("that fits)" in details or "能装下且" in details):
            both.append((qid, "does not fit, yet chose 'the cheapest that fits'"))
    assert not both, both[:10]


def test_no_alternative_nobody_would_take(answers):
    """None slower than the plan by more than 10x, none that misses the user's deadline or budget
    by more than the plan does."""
    wrong = []
    for qid, plan, _ in _planned(answers):
        est = plan.estimate
        r, c = est.resolved, est.compute
        if r.method == "infer" or not est.memory.fits:
            continue
        for alt in est.alternatives:
            slow = alt.days > SLOWEST * c.days
            late = r.deadline_days and alt.days > max(r.deadline_days, c.days) * 1.02
            dear = r.budget_usd and alt.cost_usd > max(r.budget_usd, c.cost_usd) * 1.02
            if slow or late or dear:
                wrong.append((qid, alt.reason, alt.days, c.days))
    assert not wrong, wrong[:10]


def test_a_data_parallel_launcher_gets_no_model_parallel_layout(answers):
    """A pasted launch line of the Hugging Face Trainer, LLaMA-Factory, axolotl, TRL or ms-swift (data
    parallel with ZeRO or FSDP only) is never planned with tensor or pipeline parallelism."""
    wrong = [
        (qid, plan.estimate.resolved.tp, plan.estimate.resolved.pp)
        for qid, plan, _ in _planned(answers)
        if any(n.code == "data_parallel_stack" for n in plan.read)
        and (plan.estimate.resolved.tp > 1 or plan.estimate.resolved.pp > 1)
    ]
    read = sum(any(n.code == "data_parallel_stack" for n in plan.read) for _, plan, _ in _planned(answers))
    assert read > 50 and not wrong, (read, wrong[:10])


def test_no_figure_at_a_search_bound(answers):
    wrong = []
    for qid, _, plan, text in answers:
        for row in (plan.largest.methods if plan.largest else {}).values():
            if row and row.params_b >= capacity.LARGEST_B and not row.at_least:
                wrong.append(qid)
        if "about 3,000.0B" in text or "约 3,000.0B" in text:
            wrong.append(qid)
    assert not wrong, wrong[:10]


def test_traffic_inside_and_between_servers_is_named_apart(answers):
    wrong = []
    for qid, plan, text in _planned(answers):
        net = plan.estimate.network
        says_between = "between servers" in text or "在服务器之间" in text
        if net is not None and not net.single_node and not says_between:
            wrong.append((qid, "multi-node traffic not named"))
        if (net is None or net.single_node) and says_between:
            wrong.append((qid, "one server, yet traffic between servers"))
    assert not wrong, wrong[:10]


def test_each_thing_is_said_once(answers):
    repeated = []
    for qid, _, _, text in answers:
        lines = [line.strip() for line in text.splitlines() if len(line.strip()) > 20]
        twice = {line for line in lines if lines.count(line) > 1}
        if twice:
            repeated.append((qid, sorted(twice)[:2]))
    assert not repeated, repeated[:10]


def test_line_counts(answers):
    """The distribution the README quotes (python eval/answer_lines.py prints it)."""
    counts = [len(text.splitlines()) for _, _, plan, text in answers if plan.intent != "help"]
    assert statistics.median(counts) <= 25 and max(counts) <= MOST_LINES
