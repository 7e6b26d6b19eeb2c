"""The pipeline's schedule as the question fixes it: vpp=1 plain 1F1B, vpp=N interleaved over N
chunks a GPU (Megatron's --virtual-pipeline-model-parallel-size), open: the search's choice."""

import pytest

from gpuplan.bot.language.parser import parse
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request

LAYOUT = dict(
    model="llama-3.1-405b",
    method="pretrain",
    gpu="h100-80gb",
    gpus=512,
    seq_len=8192,
    global_batch=64,
    micro_batch=1,
    tp=8,
    pp=8,
    precision="fp8-mixed",
    train_tokens=1e9,
)


@pytest.mark.parametrize("text, vpp", [("vpp=4", 4), ("vp=8", 8), ("vpp=1", 1), ("", None)])
def test_the_key_reads(text, vpp):
    assert parse(f"pretrain llama 3.1 405b on 512 h100 tp=8 pp=8 {text}").request.vpp == vpp


def test_a_fixed_schedule_is_planned_as_fixed():
    open_plan = estimate(Request(**LAYOUT)).resolved.vpp
    plain = estimate(Request(**LAYOUT, vpp=1))
    eight = estimate(Request(**LAYOUT, vpp=8))
    assert open_plan > 1 and plain.resolved.vpp == 1 and eight.resolved.vpp == 8
    # 8 micro-batches over 8 stages: plain 1F1B idles (p - 1) / m of the ideal time, interleaving 1/v of that
    assert plain.compute.tokens_per_s_per_gpu < eight.compute.tokens_per_s_per_gpu


@pytest.mark.parametrize(
    "fields, code",
    [
        (dict(vpp=4, pp=1), "vpp_needs_pipeline"),
        (dict(vpp=4, method="infer"), "vpp_needs_pipeline"),
        (dict(vpp=0), "not_positive"),
    ],
)
def test_a_schedule_that_cannot_be_is_refused(fields, code):
    base = {k: v for k, v in LAYOUT.items() if k not in fields}
    with pytest.raises(RequestError) as err:
        estimate(Request(**base, **fields))
    assert code in [n.code for n in err.value.notes]


def test_more_chunks_than_layers_leave_no_layout():
    """126 layers, the embedding and the loss over 8 stages hold at most 16 chunks a GPU."""
    with pytest.raises(RequestError) as err:
        estimate(Request(**LAYOUT, vpp=17))
    assert [n.code for n in err.value.notes] == ["no_layout"]
