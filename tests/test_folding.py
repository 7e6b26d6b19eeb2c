"""MoE parallel folding (Megatron-Core): routed experts laid out as expert parallel x expert tensor
parallel over a pipeline stage's GPUs, apart from attention's tensor x context x data parallel ranks,
so ep may exceed the data-parallel size. Layouts, memory, traffic and expert GEMMs by hand."""

from __future__ import annotations

import numpy as np
import pytest

from gpuplan.estimator import kernels, memory, network
from gpuplan.estimator.architecture import for_model
from gpuplan.estimator.errors import RequestError
from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request


@pytest.mark.parametrize(
    "request_fields, etp",
    [
        # Megatron-Bridge 26.04.01: Qwen3-235B-A22B on 256 H100, TP 2 PP 8 EP 32 (16 data-parallel ranks)
        (
            dict(model="qwen3-235b-a22b", method="pretrain", gpu="h100-80gb", gpus=256, seq_len=4096, global_batch=8192)
            | dict(micro_batch=1, tp=2, pp=8, ep=32, precision="fp8-mixed"),
            1,
        ),
        # issue 37: TP 4 PP 2 EP 16 on 64 GPUs (8 data-parallel ranks)
        (dict(model="qwen3-30b-a3b", method="pretrain", gpu="h100-80gb", gpus=64, tp=4, pp=2, ep=16), 1),
        # ep x tp fits the stage: Megatron-Core's default, the experts' tensor parallel is tp
        (dict(model="qwen3-30b-a3b", method="pretrain", gpu="h100-80gb", gpus=16, tp=2, ep=8), 2),
        # the user's own expert tensor parallel
        (dict(model="qwen3-30b-a3b", method="pretrain", gpu="h100-80gb", gpus=64, tp=4, pp=2, ep=8, etp=2), 2),
    ],
)
def test_published_folded_layouts_are_planned(request_fields, etp):
    est = estimate(Request(**request_fields))
    r = est.resolved
    assert (r.tp, r.pp, r.ep, r.etp) == (request_fields["tp"], request_fields.get("pp", 1), request_fields["ep"], etp)
    assert est.compute.tokens_per_s_per_gpu > 0
    folded = "expert_folding" in [n.code for n in est.assumptions]
    assert folded == (etp != r.tp)


@pytest.mark.parametrize(
    "request_fields, code",
    [
        # ep x etp = 32 GPUs of experts on a stage of 16
        (dict(model="mixtral-8x7b", method="full", gpus=16, tp=4, ep=8, etp=4), "parallel_not_dividing"),
        # 64 expert ranks on a stage of 32 GPUs, whatever the tensor parallel
        (dict(model="qwen3-30b-a3b", method="pretrain", gpus=64, tp=4, pp=2, ep=64), "parallel_not_dividing"),
        (dict(model="llama-3-8b", method="full", gpus=8, etp=2), "etp_not_planned"),
        (dict(model="deepseek-v3", method="infer", gpu="h200-141gb", gpus=8, ep=8, etp=2), "etp_not_planned"),
    ],
)
def test_layouts_no_framework_runs_are_refused(request_fields, code):
    with pytest.raises(RequestError) as err:
        estimate(Request(**request_fields))
    assert code in [n.code for n in err.value.notes]


@pytest.fixture(scope="module")
def qwen3_30b():
    return for_model("qwen3-30b-a3b")


def test_folded_routed_experts_are_split_over_ep_times_etp(qwen3_30b):
    """TP 4 PP 2 EP 16 ETP 1 on 64 GPUs, no ZeRO: each GPU holds its stage's dense weights / 4 and
    its routed experts / 16, in bf16 (2 bytes), against / (16 x 4) with the experts' tp at 4."""
    a = qwen3_30b
    job = memory.Job(a, "pretrain", "bf16-mixed", "adamw", 4096)
    over = memory.Overheads(0.0, 0.0, 0.0)
    lay = dict(gpus=64, tp=4, pp=2, zero=0, ep=16, micro_batch=1)
    folded = memory.training_memory(job, memory.Layout(**lay, etp=1), over)
    first, last = memory._stage_params(a, np.array(2.0), np.array(4.0))
    stage = np.maximum(first, last) * 4  # the larger stage's parameters before tensor parallelism
    r = a.routed_expert_share
    expected = stage * ((1 - r) / 4 + r / 16) * 2.0
    assert float(folded["weights"]) == pytest.approx(float(expected), rel=1e-9)
    spread = memory.training_memory(job, memory.Layout(**lay, etp=4), over)
    assert float(spread["weights"]) == pytest.approx(float(stage * ((1 - r) / 4 + r / 64) * 2.0), rel=1e-9)


def test_folded_traffic_by_hand(qwen3_30b):
    """The same layout's bytes per GPU: routed-expert gradients reduced over the 64 / (2 x 16 x 1) = 2
    GPUs holding the same experts, dense ones over the 8 data-parallel ranks; the all-to-all sends
    this rank's 4,096 / 4 tokens' 8 copies, and each of the expert's etp ranks takes them (NVLink
    carries etp times that inside a node)."""
    a = qwen3_30b
    kw = dict(gpus=64, tp=4, pp=2, zero=0, ckpt=0, micro_batch=1, micro_batches=4, ep=16, grad_bytes=4.0)
    traffic = network.step_traffic(a, True, 4096, **kw, etp=1)
    dense, routed = a.params - a.routed_expert_params, a.routed_expert_params
    ring_shard = dense * (7 / 8) / (4 * 2) + routed / 16 * (1 / 2) / 2
    assert float(traffic["dp"]) == pytest.approx(2 * ring_shard * 4.0, rel=1e-9)
    tokens_on_rank = 4096 / 4
    per_layer = 2 * 8 * tokens_on_rank * a.hidden * 2.0 * 15 / 16
    assert float(traffic["ep"]) == pytest.approx(per_layer * 2 * a.moe_layers / 2 * 4, rel=1e-9)
    links = network.Links(intra_node=100e9, inter_node=50e9, gpus_per_node=8)
    small = network.step_traffic(a, True, 4096, **{**kw, "gpus": 16, "pp": 1, "ep": 2}, etp=2)
    seconds = network.step_comm_seconds(small, links, 16, 4, ep=2, etp=2)  # 2 x 2 GPUs: inside a node
    assert float(seconds["ep"]) == pytest.approx(float(small["ep"]) * 2 / 100e9, rel=1e-9)


def test_folded_expert_gemms_take_the_expert_groups_shape(qwen3_30b):
    """Each rank holds 4,096 / 4 tokens; 16 x 1 ranks share their 8 copies over 128 experts, so an
    expert gets 16 x 1,024 x 8 / 128 = 1,024 rows (x the load) and computes its whole width (etp 1)."""
    a = qwen3_30b
    work = kernels.Work(
        tokens=np.array(4096.0),
        sequences=np.array(1.0),
        seq_len=4096.0,
        tp=np.array(4.0),
        ep=np.array(16.0),
        cp=np.array(1.0),
        expert_load=1.0,
        etp=np.array(1.0),
    )
    table = kernels.GemmTable(work)
    kernels._moe_linears(table, a, 1.0)
    grouped = [row for row in table.rows if float(np.max(row[3])) > 1]
    assert {float(np.max(row[0])) for row in grouped[::3]} == {1024.0}
    assert float(np.max(grouped[0][1])) == pytest.approx(2 * a.moe_ffn_hidden)  # gate and up, not split
    assert float(np.max(grouped[0][3])) == 128 / 16


@pytest.mark.parametrize(
    "question, flag",
    [
        (
            "pretrain qwen3-235b-a22b gpu=h100 gpus=256 tp=2 pp=8 ep=32 seq=4096 gbs=8192",
            "--expert-tensor-parallel-size 1",
        ),
        ("预训练 qwen3-30b-a3b gpu=h100 gpus=16 tp=2 ep=8", None),  # etp = tp: Megatron-LM's default, not written
    ],
)
def test_the_megatron_script_sets_the_experts_tensor_parallel_where_it_differs(question, flag):
    from gpuplan.bot.configs import export
    from gpuplan.bot.pipeline import answer

    text = export(answer(question), "megatron")["pretrain_megatron.sh"]
    if flag:
        assert flag in text
    else:
        assert "--expert-tensor-parallel-size" not in text and "--expert-model-parallel-size 8" in text
