"""A plan fits within the usable memory (estimator/fit.py), one rule wherever a fit is judged: the
plan's report, the layout search, the fallbacks that suggest a fix, and the footprint's cards."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplan.bot.render import message
from gpuplan.estimator import fit
from gpuplan.estimator.assemble import memory_estimate
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.memory import BREAKDOWN_KEYS
from gpuplan.estimator.schema import Request


@pytest.mark.parametrize(
    "gpu, per_gpu_gib, serving, fits, tight",
    [
        ("h100-80gb", 79.3, False, False, False),  # 79.3 of the card's 79.6 GiB: over the 75.6 a plan may fill
        ("h100-80gb", 76.0, False, False, False),  # just over 0.95 x 79.6 = 75.62
        ("h100-80gb", 0.93 * 79.6, False, True, True),  # 97.9% of the usable memory
        ("h100-80gb", 0.80 * 79.6, False, True, False),  # 84% of it
        ("l40s-48gb", 44.9, False, False, False),  # 44.9 of 45.0 GiB
        ("l40s-48gb", 42.0, False, True, True),  # of 42.75 usable
        ("h100-80gb", 0.92 * 79.6, True, False, False),  # over the engine's 0.9
        ("h100-80gb", 0.88 * 79.6, True, True, True),  # 97.8% of the engine's share
        ("h100-80gb", 0.80 * 79.6, True, True, False),
    ],
)
def test_fits_within_the_usable_memory_and_tight_near_it(cat, gpu, per_gpu_gib, serving, fits, tight):
    breakdown = dict.fromkeys(BREAKDOWN_KEYS, 0.0) | {"weights": per_gpu_gib}
    m = memory_estimate(breakdown, per_gpu_gib, cat.gpus[gpu], 0.0, 0.0, cat.defaults, serving=serving)
    share = 0.9 if serving else 0.95
    assert m.usable_gib == pytest.approx(share * cat.gpus[gpu].memory_gib)
    assert (m.fits, m.tight) == (fits, tight)
    assert m.engine_limit_gib == (m.usable_gib if serving else None)


@pytest.mark.parametrize(
    "lang, words",
    [
        ("en", ["75.6 GiB a training job can use", "79.6 GiB"]),
        ("zh", ["训练可用的 75.6 GiB", "共 79.6 GiB"]),
    ],
)
def test_does_not_fit_quotes_the_usable_memory_it_was_compared_with(lang, words):
    est = estimate(Request(model="llama-3-70b", method="full", gpu="h100-80gb", gpus=8, zero=3, seq_len=4096))
    note = next(w for w in est.warnings if w.code == "does_not_fit")
    assert note.params["usable"] == pytest.approx(est.memory.usable_gib)
    text = message(note, lang)
    assert all(w in text for w in words), text


def test_suggested_fixes_fit_within_the_usable_memory(cat):
    """fits_with_offload's figure and fits_with_more_gpus' count are judged by the same limit."""
    est = estimate(Request(model="llama-3-70b", method="full", gpu="h100-80gb", gpus=8, zero=3, seq_len=4096))
    offload = next(w for w in est.warnings if w.code == "fits_with_offload")
    assert offload.params["per_gpu"] <= est.memory.usable_gib
    more = next(w for w in est.warnings if w.code == "fits_with_more_gpus")
    fixed = estimate(
        Request(model="llama-3-70b", method="full", gpu="h100-80gb", gpus=more.params["gpus"], zero=3, ckpt="full")
    )
    assert fixed.memory.fits and fixed.memory.per_gpu_gib <= fixed.memory.usable_gib


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    params_b=st.floats(0.5, 700),
    gpu=st.sampled_from([None, "h100-80gb", "a100-40gb", "rtx-4090-24gb", "l40s-48gb", "mi300x-192gb"]),
    method=st.sampled_from(["pretrain", "full", "lora", "qlora", "infer"]),
    gpus=st.one_of(st.none(), st.integers(1, 64)),
)
def test_the_search_never_calls_a_plan_over_the_usable_memory_a_fit(cat, params_b, gpu, method, gpus):
    try:
        est = estimate(Request(params_b=params_b, method=method, gpu=gpu, gpus=gpus))
    except RequestError:
        return
    m = est.memory
    assert m.fits == (m.per_gpu_gib <= m.usable_gib) and m.usable_gib < m.capacity_gib
    for alt in est.alternatives:
        if alt.reason != "full_load_layout":  # that one quotes the engine's whole share
            assert fit.fits(alt.per_gpu_gib, cat.gpus[alt.gpu].memory_gib, cat.defaults, method == "infer"), alt
