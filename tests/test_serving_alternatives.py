"""Serving plans offer another GPU type, a quantized precision and fewer GPUs at lower concurrency."""

from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request


def _by_reason(est):
    return {a.reason: a for a in est.alternatives}


def test_a_70b_deployment_gets_all_three():
    est = estimate(Request(model="llama-3.1-70b", method="infer"))
    plan_gpus, batch = est.resolved.gpus, est.resolved.micro_batch
    per_million = est.compute.cost_per_million_tokens_usd
    alts = _by_reason(est)
    assert set(alts) == {"other_gpu", "quantized", "fewer_gpus"}
    assert alts["other_gpu"].gpu != est.resolved.gpu
    assert alts["quantized"].precision == "fp8" and alts["quantized"].cost_per_million_tokens_usd < per_million
    fewer = alts["fewer_gpus"]
    assert fewer.gpus < plan_gpus and fewer.micro_batch < batch and fewer.gpu == est.resolved.gpu
    assert all(a.per_gpu_gib <= 80 for a in est.alternatives)


def test_what_the_user_fixed_bounds_the_alternatives():
    est = estimate(Request(model="llama-3.1-70b", method="infer", gpus=4, precision="int4"))
    alts = _by_reason(est)
    assert "quantized" not in alts  # nothing below 4-bit
    assert "fewer_gpus" not in alts  # the GPU count was the user's
