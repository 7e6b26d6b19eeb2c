"""Serving figures that count the prompts' prefill (issue 37): the prompt/output split of a request,
chunked prefill inside the decode steps, and prefill on GPUs apart (disaggregated) with both pools in
every per-GPU figure and the cost."""

from __future__ import annotations

import pytest

from gpuplan.bot.jsonout import plan_json
from gpuplan.bot.pipeline import answer
from gpuplan.bot.render import error_text, headline, plan_text
from gpuplan.estimator import compute, prefill
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request


def _serve(**fields):
    return estimate(Request(model="llama-3-70b", method="infer", gpu="h100-80gb", **fields))


def _codes(notes) -> list[str]:
    return [n.code for n in notes]


def test_the_prompt_split_defaults_to_half_and_says_so():
    load = compute.served(4096)
    assert (load.prompt, load.output, load.held) == (2048, 2048, 3072)
    est = _serve(seq_len=4096)
    assert est.serving.prompt_tokens == 2048 and "default_prompt_split" in _codes(est.assumptions)


@pytest.mark.parametrize("objective", ["cheapest", "fastest"])
def test_long_prompts_generate_fewer_tokens_than_half_and_half(objective):
    """The same 5,500-token context: 5,000 prompt tokens for 500 generated bring ten prompt tokens
    into the steps for each generated one, against one at half and half: at 16 sequences 176 tokens a
    step, still near the weights' streaming time; at full load, compute-bound."""
    half = _serve(seq_len=5500, prefill="chunked", objective=objective)
    long = _serve(seq_len=5500, prompt_tokens=5000, prefill="chunked", objective=objective)
    assert long.compute.tokens_per_s_per_gpu < 0.9 * half.compute.tokens_per_s_per_gpu
    assert long.serving.max_tokens_per_s_per_gpu < 0.5 * half.serving.max_tokens_per_s_per_gpu
    assert long.serving.prompt_tokens == 5000 and long.serving.prefill == "chunked"


def test_a_prompt_without_a_context_gets_the_default_output():
    est = _serve(prompt_tokens=5000)
    assert est.resolved.seq_len == 5000 + 4096 // 2
    assert "default_output" in _codes(est.assumptions)


def test_a_prompt_as_long_as_the_context_is_refused():
    with pytest.raises(RequestError) as err:
        _serve(seq_len=4096, prompt_tokens=4096)
    assert "prompt_not_shorter" in _codes(err.value.notes)


def test_a_disaggregated_plan_counts_both_pools_in_its_gpus_speed_and_cost():
    est = _serve(seq_len=5500, prompt_tokens=5000, prefill="disaggregated")
    s, c = est.serving, est.compute
    assert s.prefill == "disaggregated" and est.resolved.prefill == "disaggregated"
    assert s.prefill_gpus >= s.replica_gpus and s.decode_gpus + s.prefill_gpus == est.resolved.gpus
    # generated tokens/s per GPU: what the decode pool generates, over both pools' GPUs
    decode_rate = s.tokens_per_s_per_sequence * s.concurrency * (s.decode_gpus // s.replica_gpus)
    assert c.tokens_per_s_per_gpu * est.resolved.gpus == pytest.approx(decode_rate, rel=1e-6)
    hourly = c.price_usd_per_gpu_hour * est.resolved.gpus
    assert c.gpu_hours == pytest.approx(c.days * 24 * est.resolved.gpus)
    assert c.cost_per_million_tokens_usd == pytest.approx(hourly / (decode_rate * 3600) * 1e6, rel=1e-6)
    assert "prefill_disaggregated" in _codes(est.assumptions)


def test_disaggregated_on_too_few_fixed_gpus_falls_back_to_chunked_and_says_so():
    est = _serve(gpus=4, seq_len=5500, prompt_tokens=5000, prefill="disaggregated")
    assert est.serving.prefill == "chunked" and est.resolved.gpus == 4
    assert _codes(est.warnings).count("disaggregated_no_room") == 1
    # the steps that prefill too are timed as such: the same figures as the plan that never asked
    chunked = _serve(gpus=4, seq_len=5500, prompt_tokens=5000)
    assert est.compute.tokens_per_s_per_gpu == chunked.compute.tokens_per_s_per_gpu
    assert est.serving.tokens_per_s_per_sequence == chunked.serving.tokens_per_s_per_sequence
    assert [a for a in est.assumptions if a.code == "prefill_chunked"] == [
        a for a in chunked.assumptions if a.code == "prefill_chunked"
    ]


def test_unasked_the_plan_places_the_prefill_where_it_costs_less_per_generated_token():
    est = _serve(seq_len=5500, prompt_tokens=5000)
    chunked = _serve(seq_len=5500, prompt_tokens=5000, prefill="chunked")
    apart = _serve(seq_len=5500, prompt_tokens=5000, prefill="disaggregated")
    best = max(chunked.compute.tokens_per_s_per_gpu, apart.compute.tokens_per_s_per_gpu)
    assert est.compute.tokens_per_s_per_gpu == pytest.approx(best, rel=1e-6)


@pytest.mark.parametrize(
    "decode_rate, share, instance, total, pools",
    [
        # one decode replica of 2 GPUs keeps a quarter of a prefill instance busy: one instance
        (100.0, 0.25, 2, None, (2, 2, 50.0)),
        # 16 GPUs: 6 decode replicas and 2 prefill instances (6 x 0.25 = 1.5, rounded up) fill 8 slots
        (100.0, 0.25, 2, 16, (12, 4, 75.0)),
        # a share of exactly 1: one prefill instance per decode replica
        (100.0, 1.0, 4, 8, (4, 4, 50.0)),
        # two GPUs hold no decode replica of 2 beside its prefill
        (100.0, 0.25, 2, 2, None),
    ],
)
def test_pools_by_hand(decode_rate, share, instance, total, pools):
    got = prefill.size_pools(decode_rate, 1000.0, share, instance, total)
    if pools is None:
        assert got is None
    else:
        assert (got.decode_gpus, got.prefill_gpus, got.tokens_per_s_per_gpu) == pools


def test_prefill_share_by_hand():
    """5,000-token prompts for 500 generated: a decode GPU at 100 tokens/s needs 1,000 prompt
    tokens/s, a quarter of a prefill GPU computing 4,000."""
    load = compute.served(5500, 5000, chunked=False)
    assert float(prefill.prefill_share(100.0, load, 4000.0)) == pytest.approx(0.25)


# --- a decode pool given (decode_gpus): its replicas, and the prefill instances beside them ----------


@pytest.mark.parametrize(
    "share, instance, decode_pool, pools",
    [
        # 8 decode replicas of 2 GPUs at a quarter of an instance each: 2 prefill instances on top
        (0.25, 2, 16, (16, 4, 80.0)),
        # a share of exactly 1: as many prefill instances as decode replicas
        (1.0, 4, 8, (8, 8, 50.0)),
        # one replica keeping a tenth of an instance busy still needs a whole one
        (0.1, 72, 72, (72, 72, 50.0)),
    ],
)
def test_pools_beside_a_decode_pool_by_hand(share, instance, decode_pool, pools):
    got = prefill.size_pools(100.0, 1000.0, share, instance, decode_pool, decode_pool=decode_pool)
    assert (got.decode_gpus, got.prefill_gpus, got.tokens_per_s_per_gpu) == pools
    assert got.decode_tokens_per_s_per_gpu == 100.0


def test_a_decode_pool_keeps_its_gpus_and_adds_the_prefill_pool():
    est = _serve(decode_gpus=8, seq_len=5500, prompt_tokens=5000)
    s = est.serving
    assert s.prefill == "disaggregated" and s.decode_gpus == 8 and s.prefill_gpus >= s.replica_gpus
    assert 8 % s.replica_gpus == 0 and est.resolved.gpus == 8 + s.prefill_gpus
    # generated tokens/s: what the decode pool's replicas generate, over both pools' GPUs
    decode_rate = s.tokens_per_s_per_sequence * s.concurrency * (8 // s.replica_gpus)
    assert est.compute.tokens_per_s_per_gpu * est.resolved.gpus == pytest.approx(decode_rate, rel=1e-6)
    assert s.decode_tokens_per_s_per_gpu * 8 == pytest.approx(decode_rate, rel=1e-6)
    assert est.resolved.dp == 8 // s.replica_gpus


def test_a_decode_pool_is_the_same_plan_as_the_gpus_it_takes_in_all():
    """decode_gpus=8 and gpus= its whole deployment are the same pools, speed and cost."""
    pool = _serve(decode_gpus=8, seq_len=5500, prompt_tokens=5000, micro_batch=16)
    total = _serve(gpus=pool.resolved.gpus, seq_len=5500, prompt_tokens=5000, prefill="disaggregated", micro_batch=16)
    assert (total.serving.decode_gpus, total.serving.prefill_gpus) == (8, pool.serving.prefill_gpus)
    assert total.compute.cost_per_million_tokens_usd == pytest.approx(pool.compute.cost_per_million_tokens_usd)
    assert "disaggregated_no_room" not in _codes(pool.warnings)


def test_a_decode_pool_alone_means_serving():
    est = estimate(Request(model="llama-3-70b", gpu="h100-80gb", decode_gpus=8))
    assert est.resolved.method == "infer" and est.serving.decode_gpus == 8


@pytest.mark.parametrize(
    "fields, code",
    [
        ({"decode_gpus": 0}, "not_positive"),
        ({"decode_gpus": 10**9}, "too_large"),
        ({"decode_gpus": 8, "gpus": 8}, "decode_gpus_over_gpus"),
        ({"decode_gpus": 16, "gpus": 8}, "decode_gpus_over_gpus"),
        ({"decode_gpus": 8, "prefill": "chunked"}, "decode_gpus_chunked"),
        ({"decode_gpus": 6, "tp": 4}, "decode_gpus_not_dividing"),
        ({"decode_gpus": 8, "gpus": 9, "seq_len": 5500, "prompt_tokens": 5000}, "decode_gpus_no_room"),
    ],
)
def test_a_decode_pool_that_cannot_be_is_refused(fields, code):
    with pytest.raises(RequestError) as err:
        _serve(**fields)
    assert code in _codes(err.value.notes)


def test_a_decode_pool_for_training_is_refused():
    with pytest.raises(RequestError) as err:
        estimate(Request(model="llama-3-70b", method="lora", decode_gpus=8))
    assert _codes(err.value.notes) == ["decode_gpus_not_serving"]


@pytest.mark.parametrize("prefill_mode, apart", [("disaggregated", True), ("chunked", False)])
def test_the_json_answer_gives_the_decode_pool_s_own_rate_when_prefill_runs_apart(prefill_mode, apart):
    """serving.decode_tokens_per_s_per_gpu: generated tokens/s per decode-pool GPU, null in one pool."""
    out = plan_json(answer(f"serve llama-3-70b on h100 seq=5500 prompt=5000 prefill={prefill_mode}"))
    serving, compute_ = out["serving"], out["compute"]
    if not apart:
        assert serving["decode_tokens_per_s_per_gpu"] is None
        return
    decode_rate = serving["decode_tokens_per_s_per_gpu"] * serving["decode_gpus"]
    assert compute_["tokens_per_s_per_gpu"] * out["request"]["gpus"] == pytest.approx(decode_rate, rel=1e-9)
    replicas = serving["decode_gpus"] // serving["replica_gpus"]
    assert decode_rate == pytest.approx(serving["tokens_per_s_ceiling"] * replicas, rel=1e-9)


@pytest.mark.parametrize(
    "question, said",
    [
        ("serve deepseek-v3 with a decode pool of 72 h100, ep=72", ["144 x H100", "72 to decode and 72 to prefill"]),
        ("部署 deepseek-v3，解码用72张H100，ep=72", ["144 张 H100", "其中 72 张解码、72 张做预填充"]),
    ],
)
def test_the_first_line_of_a_decode_pool_gives_both_pools_and_the_rate(question, said):
    """The deployment in all, its two pools and what it generates, in all and per decode GPU."""
    got = answer(question)
    v, s = got.verdict, got.estimate.serving
    assert (v.decode_gpus, v.prefill_gpus) == (72, 72) == (s.decode_gpus, s.prefill_gpus)
    assert v.decode_tokens_per_s_per_gpu == s.decode_tokens_per_s_per_gpu
    assert v.tokens_per_s == pytest.approx(s.decode_tokens_per_s_per_gpu * 72)
    first = headline(got)
    assert all(words in first for words in said), first
    assert f"{v.tokens_per_s:,.0f}" in first and f"{v.decode_tokens_per_s_per_gpu:,.0f}" in first


def test_a_plan_that_chose_its_pools_keeps_its_first_line():
    """Only a decode pool asked about puts the pools in the verdict (the plans that prefill apart on
    their own say so in their notes)."""
    v = answer("serve llama-3-70b on h100 seq=5500 prompt=5000 prefill=disaggregated").verdict
    assert v.decode_gpus is None and v.tokens_per_s is None


# --- servers given (nodes=) --------------------------------------------------------------------


def test_servers_given_for_serving_are_the_gpus_it_fills():
    """`nodes=` without a GPU count is that many servers of the type's usual size, as in training:
    "serve Llama 3 70B on 2 nodes of H100" plans 16 GPUs, not the 4 one replica needs."""
    est = _serve(nodes=2)
    assert (est.resolved.gpus, est.resolved.nodes) == (16, 2)
    assert est.resolved.gpus == _serve(gpus=16).resolved.gpus


def test_servers_as_many_as_a_decode_pool_are_its_own():
    """nodes= holding exactly the decode pool's GPUs are the pool's servers: its prefill pool is added
    beside them, as with decode_gpus alone; more servers hold both pools."""
    pool_alone = _serve(decode_gpus=16)
    on_its_servers = _serve(decode_gpus=16, nodes=2)
    assert on_its_servers.resolved.gpus == pool_alone.resolved.gpus > 16
    assert on_its_servers.serving.decode_gpus == 16


def test_servers_fewer_than_a_decode_pool_are_refused_in_both_languages():
    with pytest.raises(RequestError) as err:
        _serve(decode_gpus=32, nodes=2)
    assert _codes(err.value.notes) == ["decode_gpus_over_nodes"]
    en, zh = (error_text(err.value.notes, lang) for lang in ("en", "zh"))
    assert "decode_gpus=32" in en and "16 GPUs" in en
    assert "decode_gpus=32" in zh and "16 张卡" in zh


# --- replicas and the sequences they share ------------------------------------------------------


@pytest.mark.parametrize(
    "lang, question",
    [("en", "serve llama-3-70b on 16 h100 for 64 concurrent users"), ("zh", "在16张h100上部署llama-3-70b，64个并发")],
)
def test_the_sequences_asked_are_shared_by_the_replicas(lang, question):
    """The sequences at once are the deployment's: 64 users on 16 GPUs of 4-GPU replicas are 16 a
    replica, and the first line gives the whole and each replica's share."""
    plan = answer(question)
    r, s = plan.estimate.resolved, plan.estimate.serving
    assert (r.dp, s.concurrency, r.global_batch) == (4, 16, 64)
    text = plan_text(plan)
    first = text.splitlines()[0]
    if lang == "en":
        assert "64 sequences" in first and "(16 on each of 4 replicas)" in first
        assert "64 sequences of up to 4,096 tokens at once (16 a replica)" in text
    else:
        assert "64 条" in first and "4 个副本，每个 16 条" in first
        assert "同时 64 条序列（每个副本 16 条）" in text


def test_the_default_load_is_shared_too():
    """Left open, the 16 sequences assumed are the deployment's, a quarter on each of 4 replicas,
    each faster than one replica serving all 16."""
    shared, one = _serve(gpus=16), _serve(gpus=4)
    assert (shared.resolved.dp, shared.serving.concurrency, shared.resolved.global_batch) == (4, 4, 16)
    assert shared.serving.tokens_per_s_per_sequence > one.serving.tokens_per_s_per_sequence
    assert "default_concurrency" in _codes(shared.assumptions)


def test_one_replica_says_no_share():
    first = plan_text(answer("serve llama-3-70b gpu=h100 gpus=4")).splitlines()[0]
    assert "16 sequences" in first and "replica" not in first


def test_a_decode_pool_left_open_is_planned_near_its_full_load():
    """A pool apart from the prefill is there to be kept busy: with no load given it serves as many
    sequences as its replicas hold with the usual headroom (not at the last gigabyte), said; a load
    given is served as given."""
    pool = _serve(decode_gpus=8)
    full = pool.serving.max_concurrency * pool.resolved.dp
    assert 0.8 * full <= pool.resolved.global_batch <= full
    assert not pool.memory.tight and pool.memory.fits
    assert "pool_full_load" in _codes(pool.assumptions) and "default_concurrency" not in _codes(pool.assumptions)
    given = _serve(decode_gpus=8, micro_batch=32)
    assert given.resolved.global_batch == 32 and "pool_full_load" not in _codes(given.assumptions)


def test_fewer_sequences_than_replicas_leave_the_rest_idle_and_paid_for():
    """10 users on 64 H100 of one-GPU replicas: 10 replicas serve one each, 54 wait; the tokens in
    all are the 10's and the cost per token counts all 64 GPUs."""
    plan = answer("serve llama 3 8b on 64 h100 for 10 users")
    r, s, c = plan.estimate.resolved, plan.estimate.serving, plan.estimate.compute
    assert (r.gpus, r.dp, s.concurrency, r.global_batch) == (64, 64, 1, 10)
    assert c.tokens_per_s_per_gpu * r.gpus == pytest.approx(10 * s.tokens_per_s_per_sequence, rel=0.01)
    first = plan_text(plan).splitlines()[0]
    assert "10 sequences" in first and "1 on each of 10 of the 64 replicas" in first
    busy = answer("serve llama 3 8b on 8 h100 for 10 users").estimate.compute.cost_per_million_tokens_usd
    assert c.cost_per_million_tokens_usd > 4 * busy  # 64 GPUs paid for the 10, not 8
