"""Property tests: user text never crashes the parser; key=value always wins; estimates add up."""

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplan.bot.language.parser import parse
from gpuplan.bot.pipeline import QuestionError, answer
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request

WORDS = st.sampled_from(
    [
        "70b",
        "7b",
        "700亿",
        "full",
        "lora",
        "qlora",
        "全参",
        "微调",
        "推理",
        "8卡",
        "H100",
        "a100",
        "4090",
        "gpus=8",
        "seq=4k",
        "zero=3",
        "<@U1>",
        "<!channel>",
        "&",
        "x",
        "llama3 70b",
        "qwen2.5-72b",
        "2台8卡",
        "=",
        "==",
        "=5",
        "offload=cpu",
        "tokens=2T",
        "mfu=0.4",
        "deadline=2周",
        "budget=$5k",
        "\u200f",
        "🙂",
        "{{7*7}}",
        "NaN",
        "1e308",
    ]
)
TEXT = st.one_of(st.text(max_size=4000), st.lists(WORDS, max_size=30).map(" ".join))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_parse_never_raises(text):
    parsed = parse(text)
    assert parsed.lang in ("en", "zh")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXT)
def test_answer_returns_a_plan_or_a_clear_error(text):
    try:
        plan = answer(text)
    except QuestionError as exc:
        assert exc.notes and exc.lang in ("en", "zh")
        return
    # a plan with figures, a question back, diagnoses, the help text or what gpuplan is for
    assert plan.estimate is not None or plan.clarify or plan.diagnoses or plan.intent in ("help", "other")


@settings(max_examples=200, deadline=None)
@given(st.lists(WORDS, max_size=12).map(" ".join), st.integers(1, 4096), st.sampled_from(["lora", "full", "infer"]))
def test_key_value_always_wins(text, gpus, method):
    parsed = parse(f"{text} gpus={gpus} method={method}")
    assert parsed.request.gpus == gpus and parsed.request.method == method


REQUESTS = st.builds(
    Request,
    params_b=st.one_of(st.none(), st.floats(0.05, 2000)),
    model=st.sampled_from([None, "llama-3-8b", "mixtral-8x7b", "deepseek-v3", "qwen2.5-72b", "gemma-2-9b"]),
    method=st.sampled_from([None, "pretrain", "continue", "full", "lora", "qlora", "dpo", "ppo", "infer"]),
    gpu=st.sampled_from([None, "h100-80gb", "a100-40gb", "rtx-4090-24gb", "v100-32gb", "mi300x-192gb", "l40s-48gb"]),
    gpus=st.one_of(st.none(), st.integers(1, 512)),
    seq_len=st.one_of(st.none(), st.integers(128, 32768)),
    zero=st.one_of(st.none(), st.integers(0, 3)),
    ckpt=st.sampled_from([None, "none", "selective", "full"]),
    offload=st.sampled_from([None, "none", "cpu", "nvme", "cpu-all"]),
    micro_batch=st.one_of(st.none(), st.integers(1, 16)),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(REQUESTS)
def test_estimates_are_consistent_or_refused(req):
    if req.model is None and req.params_b is None:
        req = req.model_copy(update={"params_b": 7.0})
    try:
        est = estimate(req)
    except RequestError as exc:
        assert exc.notes
        return
    m, c = est.memory, est.compute
    assert math.isclose(m.per_gpu_gib, sum(m.breakdown_gib.model_dump().values()), rel_tol=1e-9)
    assert all(v >= 0 for v in m.breakdown_gib.model_dump().values())
    assert m.usable_gib < m.capacity_gib and m.engine_limit_gib in (None, m.usable_gib)  # serving: the engine's share
    assert m.fits == (m.per_gpu_gib <= m.usable_gib) and (not m.tight or m.fits)
    assert c.days > 0 and c.gpu_hours > 0 and c.cost_usd > 0 and 0 < c.mfu < 1
    assert math.isfinite(c.total_flops)
