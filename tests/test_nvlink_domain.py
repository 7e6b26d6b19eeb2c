"""An NVLink domain larger than a server (GB200 / GB300 NVL72: 72 GPUs on one NVLink fabric, in compute
trays of 4): expert and tensor parallel groups inside the rack are timed on NVLink, not on the fabric
between servers, while servers (nodes) stay trays of 4."""

from __future__ import annotations

import pytest

from gpuplan.estimator.estimate import estimate
from gpuplan.estimator.schema import Request


def _moe_run(gpu: str):
    # full recomputation: no combined-1F1B pairing of micro-batches, so the expert all-to-all is not
    # hidden behind another micro-batch's compute and where it runs shows whole (with selective
    # recomputation the pairing hides most of it on either system)
    request = Request(
        model="deepseek-v3", method="pretrain", train_tokens=1e12, gpus=256, gpu=gpu, ep=64, tp=1, ckpt="full"
    )
    return estimate(request)


def test_the_catalog_knows_rack_scale_nvlink(cat):
    for gpu in ("gb200-185gb", "gb300-279gb"):
        assert cat.gpus[gpu].nvlink_gpus == 72 and cat.gpus[gpu].gpus_per_node == 4
    assert cat.gpus["b200-180gb"].nvlink_gpus == 8  # an HGX server: its own 8 GPUs


def test_expert_parallel_inside_the_rack_waits_less_than_across_servers():
    """DeepSeek-V3 with EP 64 on 256 GPUs: on B200 servers of 8 the expert all-to-all crosses the
    fabric; on GB200 NVL72 a group of 64 stays in one rack's NVLink (it had been timed over
    InfiniBand: 'GPUs wait on communication 77% of each step')."""
    rack, servers = _moe_run("gb200-185gb"), _moe_run("b200-180gb")
    assert rack.network.comm_fraction < 0.2 < servers.network.comm_fraction
    assert rack.network.between_nodes_gb < servers.network.between_nodes_gb
    assert rack.compute.tokens_per_s_per_gpu > 1.5 * servers.compute.tokens_per_s_per_gpu
    assert rack.resolved.nodes == 64  # trays of 4: the host RAM, storage and failures count per tray


@pytest.mark.parametrize("ep", [32, 64])
def test_serving_expert_parallel_goes_as_wide_as_the_nvlink_domain(ep):
    """Wide EP (32 or 64 ranks) for serving is planned inside an NVL72 rack."""
    est = estimate(Request(model="deepseek-v3", method="infer", gpu="gb200-185gb", gpus=64, ep=ep))
    assert est.resolved.ep == ep and est.memory.fits


def test_wide_ep_across_servers_is_refused_on_a_network_without_rdma():
    """DeepEP's kernels need RDMA between nodes: EP32 over 4 H100 servers is planned on their
    InfiniBand and refused over 100 GbE TCP."""
    from gpuplan.estimator.errors import RequestError

    request = Request(model="deepseek-v3", method="infer", gpu="h100-80gb", gpus=64, ep=32)
    assert estimate(request).resolved.ep == 32
    with pytest.raises(RequestError) as err:
        estimate(request.model_copy(update={"fabric": "eth-100"}))
    assert err.value.notes[0].code == "serving_ep_beyond_node"
