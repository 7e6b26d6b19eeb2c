"""Bytes per step on each parallel dimension and the fabric choice, by hand."""

import pytest

from gpuplan.estimator.architecture import for_model
from gpuplan.estimator.network import compare_fabrics, step_traffic


def test_ddp_allreduce_volume(cat):
    a = for_model("llama-2-7b")
    t = step_traffic(a, True, 2048, gpus=8, tp=1, pp=1, zero=0, ckpt=0, micro_batch=1, micro_batches=8)
    # ring all-reduce: 2 (n-1)/n x 2-byte gradients of every parameter, once per step
    assert float(t["dp"]) == pytest.approx(2 * 7 / 8 * a.params * 2)
    assert float(t["tp"]) == 0 and float(t["pp"]) == 0


def test_zero3_gathers_twice_and_scatters_each_microbatch(cat):
    a = for_model("llama-2-7b")
    t = step_traffic(a, True, 2048, gpus=8, tp=1, pp=1, zero=3, ckpt=0, micro_batch=1, micro_batches=4)
    assert float(t["dp"]) == pytest.approx(4 * 3 * 7 / 8 * a.params * 2)


def test_lora_under_zero3_moves_no_gradients_of_the_frozen_weights(cat):
    a = for_model("llama-2-7b")
    t = step_traffic(a, False, 2048, gpus=8, tp=1, pp=1, zero=3, ckpt=0, micro_batch=1, micro_batches=1)
    assert float(t["dp"]) == pytest.approx(2 * 7 / 8 * a.params * 2)
    adapters = a.lora_params(16)
    t = step_traffic(
        a, False, 2048, gpus=8, tp=1, pp=1, zero=3, ckpt=0, micro_batch=1, micro_batches=1, adapter_params=adapters
    )
    # the adapters are gathered twice like the frozen weights and their gradients reduce-scattered
    assert float(t["dp"]) == pytest.approx(2 * 7 / 8 * (a.params + adapters) * 2 + 7 / 8 * adapters * 2)


def test_lora_data_parallel_all_reduces_the_adapter_gradients(cat):
    """LoRA over 4 data-parallel GPUs (DDP or ZeRO-1/2): only the adapters' 2-byte gradients move,
    2 (n-1)/n of them once a step."""
    a = for_model("qwen2.5-7b")
    adapters = a.lora_params(16)
    t = step_traffic(
        a, False, 2048, gpus=4, tp=1, pp=1, zero=0, ckpt=0, micro_batch=1, micro_batches=16, adapter_params=adapters
    )
    assert float(t["dp"]) == pytest.approx(2 * 3 / 4 * adapters * 2)
    assert 40e6 < adapters < 41e6  # r=16 on every linear projection of Qwen2.5-7B: 40.4M


def test_tensor_parallel_collectives(cat):
    """Sequence parallelism: 4 all-gathers / reduce-scatters forward, 6 backward, 4 more for the
    recomputed forward, each moving 7/8 of a 4,096 x 8,192 x 2-byte activation per GPU."""
    a = for_model("llama-2-70b")
    t = step_traffic(a, True, 4096, gpus=8, tp=8, pp=1, zero=0, ckpt=2, micro_batch=1, micro_batches=2)
    per_layer = (4 + 6 + 4) * 7 / 8 * 4096 * 8192 * 2
    assert float(t["tp"]) == pytest.approx(per_layer * 80 * 2)
    plain = step_traffic(a, True, 4096, gpus=8, tp=8, pp=1, zero=0, ckpt=1, micro_batch=1, micro_batches=2)
    assert float(plain["tp"]) == pytest.approx(10 / 14 * float(t["tp"]))  # selective: no replayed collectives


def test_megatron_issues_four_tensor_parallel_collectives_asynchronously():
    from gpuplan.estimator.network import tensor_parallel_async_share

    assert float(tensor_parallel_async_share(0)) == pytest.approx(4 / 10)
    assert float(tensor_parallel_async_share(1)) == pytest.approx(4 / 10)
    assert float(tensor_parallel_async_share(2)) == pytest.approx(4 / 14)


def test_asynchronous_tensor_parallel_collectives_hide_behind_their_gemms():
    from gpuplan.estimator.network import Overlap, exposed_comm

    comm = {"tp": 1.0, "dp": 0.0, "pp": 0.0}
    # 0.4 s issued asynchronously beside 2 s of column-parallel backward GEMMs: only 0.6 s waits
    assert float(exposed_comm(comm, 10.0, 1, Overlap(tp_async=0.4, tp_hidden=2.0))[0]) == pytest.approx(0.6)
    # beside 0.1 s of GEMMs, 0.3 s of the 0.4 waits as well
    assert float(exposed_comm(comm, 10.0, 1, Overlap(tp_async=0.4, tp_hidden=0.1))[0]) == pytest.approx(0.9)
    assert float(exposed_comm(comm, 10.0, 1)[0]) == pytest.approx(1.0)  # nothing beside: all waits


def test_pipeline_point_to_point(cat):
    a = for_model("llama-2-70b")
    t = step_traffic(a, True, 4096, gpus=64, tp=8, pp=8, zero=1, ckpt=0, micro_batch=1, micro_batches=16)
    assert float(t["pp"]) == pytest.approx(2 * 4096 * 8192 * 2 / 8 * 16)


def test_moe_all_to_all(cat):
    a = for_model("mixtral-8x7b")
    t = step_traffic(a, True, 4096, gpus=8, tp=1, pp=1, zero=3, ckpt=0, micro_batch=1, micro_batches=1, ep=8)
    # each token's hidden state to its 2 experts and back, forward and backward, 7/8 leave the GPU
    assert float(t["ep"]) == pytest.approx(2 * 2 * 4096 * 4096 * 2 * 7 / 8 * 2 * 32)
    alone = step_traffic(a, True, 4096, gpus=8, tp=1, pp=1, zero=3, ckpt=0, micro_batch=1, micro_batches=1)
    assert float(alone["ep"]) == 0  # every expert on every GPU: no all-to-all


def test_expert_parallel_ranks_send_less_gradient(cat):
    """Routed experts split over ep ranks: an expert's gradient is all-reduced only among the
    dp / ep ranks that hold it (none when ep = dp), the dense parameters' over all dp."""
    a = for_model("mixtral-8x7b")
    dense = a.params - a.routed_expert_params
    t = step_traffic(a, True, 4096, gpus=8, tp=1, pp=1, zero=1, ckpt=0, micro_batch=1, micro_batches=1, ep=8)
    assert float(t["dp"]) == pytest.approx(2 * 7 / 8 * dense * 2)
    t = step_traffic(a, True, 4096, gpus=16, tp=1, pp=1, zero=1, ckpt=0, micro_batch=1, micro_batches=1, ep=8)
    two_holders = a.routed_expert_params / 8 * (1 / 2)  # each expert on 2 of the 16 ranks
    assert float(t["dp"]) == pytest.approx(2 * (15 / 16 * dense + two_holders) * 2)


def test_all_to_all_stays_in_the_node_while_it_fits(cat):
    from gpuplan.estimator.network import Links, step_comm_seconds

    links = Links(intra_node=400e9, inter_node=50e9, gpus_per_node=8)
    traffic = {"tp": 0.0, "dp": 0.0, "pp": 0.0, "ep": 100e9}
    inside = step_comm_seconds(traffic, links, 64, 1, ep=8)["ep"]
    across = step_comm_seconds(traffic, links, 64, 2, ep=8)["ep"]  # 2 x 8 GPUs span two nodes
    assert float(inside) == pytest.approx(100e9 / 400e9)
    assert float(across) == pytest.approx(100e9 / 50e9)


def test_fabric_choice_is_the_cheapest_within_five_percent(cat):
    gpu = cat.gpus["h100-80gb"]
    fabrics = list(cat.fabrics.values())
    # 50 GB of gradients per step and 10 s of compute across 4 nodes, tensor parallel over each node:
    # one gradient rank a node, whose own NIC carries the whole buffer
    traffic = {"tp": 0.0, "dp": 50e9, "pp": 0.0}
    report = compare_fabrics(traffic, gpu, fabrics, 0.8, gpus=32, tp=8, zero=0, t_compute=10.0, other_seconds=10.0)
    by_id = {o.fabric: o for o in report.options}
    best = min(o.step_s for o in report.options)
    assert by_id[report.fabric].step_s <= best * 1.05
    slower = [f for f in fabrics if f.gb_s < cat.fabrics[report.fabric].gb_s]
    assert all(by_id[f.id].step_s > best * 1.05 for f in slower)
    # on 25 GbE: 50 GB / 2.5 GB/s = 20 s, minus 2/3 x 10 s hidden behind backward = 13.3 s exposed
    assert by_id["eth-25"].step_s == pytest.approx(10 + 50e9 / (3.125e9 * 0.8) - 10 * 2 / 3)


def test_a_node_sends_the_gradients_once_through_all_its_nics(cat):
    """Eight data-parallel ranks a node: NCCL's rings leave it through their eight NICs, so the 50 GB
    take 50 GB / (8 x 2.5 GB/s) on 25 GbE, hidden behind the backward pass; with one rank a node
    (tensor parallel 8) its one NIC carries them all."""
    from gpuplan.estimator.network import Links, between_nodes_gb, step_comm_seconds

    links = Links(intra_node=360e9, inter_node=2.5e9, gpus_per_node=8)
    traffic = {"tp": 0.0, "dp": 50e9, "pp": 0.0}
    assert float(step_comm_seconds(traffic, links, 32, 1)["dp"]) == pytest.approx(50e9 / (8 * 2.5e9))
    assert float(step_comm_seconds(traffic, links, 32, 8)["dp"]) == pytest.approx(50e9 / 2.5e9)
    assert float(step_comm_seconds(traffic, links, 32, 2)["dp"]) == pytest.approx(50e9 / (4 * 2.5e9))
    # never faster than NVLink carries the rest; a group inside one node (pipeline across nodes) stays there
    fast = Links(intra_node=360e9, inter_node=50e9, gpus_per_node=8)
    assert float(step_comm_seconds(traffic, fast, 32, 1)["dp"]) == pytest.approx(50e9 / 360e9)
    assert float(step_comm_seconds(traffic, links, 32, 1, pp=4)["dp"]) == pytest.approx(50e9 / 360e9)
    # a PCIe server's GPUs share its NICs: one NIC's worth for the node, as each GPU alone had before
    shared = Links(intra_node=25e9, inter_node=2.5e9, gpus_per_node=8, nic_per_gpu=False)
    assert float(step_comm_seconds(traffic, shared, 32, 1)["dp"]) == pytest.approx(50e9 / 2.5e9)
    assert between_nodes_gb(traffic, 32, 1, 8) == pytest.approx(50 / 8)
    assert between_nodes_gb(traffic, 32, 8, 8) == pytest.approx(50)
    assert between_nodes_gb(traffic, 32, 1, 8, pp=4) == 0


def test_a_nic_per_gpu_is_an_nvlink_server_on_rdma(cat):
    from gpuplan.estimator.network import nic_per_gpu

    h100, l40s = cat.gpus["h100-80gb"], cat.gpus["l40s-48gb"]
    assert nic_per_gpu(h100, cat.fabrics["ib-ndr400"]) and nic_per_gpu(h100, cat.fabrics["roce-100"])
    assert not nic_per_gpu(h100, cat.fabrics["eth-25"])  # TCP Ethernet: the node's NICs, shared
    assert not nic_per_gpu(l40s, cat.fabrics["roce-200"])  # a PCIe server


def test_single_node_needs_no_fabric(cat):
    report = compare_fabrics(
        {"tp": 0.0, "dp": 1e9, "pp": 0.0},
        cat.gpus["h100-80gb"],
        list(cat.fabrics.values()),
        0.8,
        gpus=8,
        tp=1,
        zero=0,
        t_compute=1.0,
        other_seconds=1.0,
    )
    assert report.single_node and report.fabric == "nvlink" and report.options == []


def test_context_parallel_gathers_keys_and_values(cat):
    """Per layer: all-gather K and V forward and backward, reduce-scatter their gradients: 3 x
    (cp-1) x this rank's K and V; the tensor-parallel all-reduces carry 1/cp of the tokens."""
    a = for_model("llama-3-8b")  # 32 layers, 8 KV heads of 128: 2 x 8 x 128 K and V values a token
    one = step_traffic(a, True, 65536, gpus=8, tp=2, pp=1, zero=3, ckpt=0, micro_batch=1, micro_batches=1)
    t = step_traffic(a, True, 65536, gpus=8, tp=2, pp=1, zero=3, ckpt=0, micro_batch=1, micro_batches=1, cp=4)
    rank_kv = 65536 / 4 * 2 * 8 * 128 * 2 / 2  # bytes of this rank's K and V, split over tp 2
    assert float(t["cp"]) == pytest.approx(3 * 3 * rank_kv * 32)
    assert float(t["tp"]) == pytest.approx(float(one["tp"]) / 4)
    assert "cp" not in one


def test_an_all_to_all_beyond_a_pod_shares_the_oversubscribed_links(cat):
    """RoCE as Llama 3's cluster: full bisection in pods of 3,072 GPUs, 1:7 above them. An expert
    group of 8 x 1,024 = 8,192 GPUs spans 3 pods: 2/3 of its all-to-all leaves its pod at 1/7 of the
    rate, 1 + 2/3 x 6 = 5 times the time; inside one pod nothing changes."""
    from gpuplan.estimator.network import links_for, step_comm_seconds

    gpu = cat.gpus["h100-80gb"]
    roce, ib = (links_for(gpu, cat.fabrics[f], 0.8) for f in ("roce-400", "ib-ndr400"))
    traffic = {"tp": 0.0, "dp": 0.0, "pp": 0.0, "ep": 100e9}
    wide = step_comm_seconds(traffic, roce, 16384, 8, ep=1024)["ep"]
    narrow = step_comm_seconds(traffic, roce, 16384, 8, ep=256)["ep"]  # 2,048 GPUs: one pod
    flat = step_comm_seconds(traffic, ib, 16384, 8, ep=1024)["ep"]
    assert float(narrow) == pytest.approx(100e9 / (50e9 * 0.8))
    assert float(wide) == pytest.approx(5 * float(narrow))
    assert float(flat) == pytest.approx(float(narrow))  # InfiniBand fat tree: non-blocking


def test_interleaved_pipelines_wait_only_on_the_fill_and_drain_hops():
    """Plain 1F1B waits on every send; interleaved (Megatron-Core's --overlap-p2p-communication,
    Llama 3's asynchronous p2p) only on the bubble's share (p-1)/(v m): 15 / (8 x 32) for Llama 3
    405B's 16 stages, 8 chunks and 32 micro-batches; never more than all of it."""
    from gpuplan.estimator.network import pipeline_exposed_share

    assert float(pipeline_exposed_share(16, 1, 32)) == 1.0
    assert float(pipeline_exposed_share(16, 8, 32)) == pytest.approx(15 / 256)
    assert float(pipeline_exposed_share(16, 2, 4)) == 1.0  # (15 / 8 capped)


def test_pipeline_hops_beyond_the_compute_they_hide_behind_wait(cat):
    from gpuplan.estimator.network import Overlap, exposed_comm

    comm = {"tp": 0.0, "dp": 0.0, "pp": 2.0}
    interleaved = Overlap(pp_share=0.1)
    # 10 s of compute hides the overlapped 1.8 s; the fill's and drain's 0.2 s wait
    assert float(exposed_comm(comm, 10.0, 1, interleaved)[0]) == pytest.approx(0.2)
    # 1 s of compute hides 1 s of the 1.8: 0.2 + 0.8 wait
    assert float(exposed_comm(comm, 1.0, 1, interleaved)[0]) == pytest.approx(1.0)
    assert float(exposed_comm(comm, 10.0, 1)[0]) == pytest.approx(2.0)  # plain 1F1B: all of it
    assert float(exposed_comm(comm, 10.0, 1, interleaved)[1]) == pytest.approx(2.0)  # total unchanged


def test_a_token_crosses_the_fabric_once_per_other_node_its_experts_are_on():
    """DeepEP's dispatch over an expert group of 8 nodes: a token's 8 experts under uniform routing
    land on 8 x (1 - (7/8)^8) = 5.25 nodes, 7/8 of them others: 4.59 fabric copies of the 8 x 63/64
    an all-to-all without forwarding sends. DeepSeek-V3 routes to 4 of 8 groups (a node each):
    4 x 7/8 = 3.5. Inside one node nothing crosses (share 1: all on NVLink)."""
    from gpuplan.estimator.network import expert_fabric_share

    mixtral_like = for_model("qwen3-235b-a22b")  # top-8 of 128, no router groups
    v3 = for_model("deepseek-v3")  # top-8 of 256, 8 groups, 4 per token
    copies = 8 * 63 / 64
    uniform = 8 * (1 - (7 / 8) ** 8) * 7 / 8
    assert float(expert_fabric_share(mixtral_like, 8, 64)) == pytest.approx(uniform / copies)
    assert float(expert_fabric_share(v3, 8, 64)) == pytest.approx(3.5 / copies)
    # 16 nodes: a group spans two of them, so up to 4 x 2 = 8 nodes; uniform reaches 16 x (1 - (15/16)^8) = 6.0
    reached16 = 16 * (1 - (15 / 16) ** 8)
    assert float(expert_fabric_share(v3, 16, 128)) == pytest.approx(reached16 * 15 / 16 / (8 * 127 / 128))
    assert float(expert_fabric_share(v3, 1, 8)) == 1.0


def test_an_expert_group_over_nodes_waits_on_the_fabric_or_on_nvlink_whichever_is_slower(cat):
    """100 GB of copies over 8 nodes for DeepSeek-V3: 3.5 / 7.875 of them over a 50 GB/s fabric
    (0.89 s) beside all of them on 400 GB/s NVLink (0.25 s); without the model's routing the
    whole 100 GB goes over the fabric, as before."""
    from gpuplan.estimator.network import Links, step_comm_seconds

    links = Links(intra_node=400e9, inter_node=50e9, gpus_per_node=8)
    traffic = {"tp": 0.0, "dp": 0.0, "pp": 0.0, "ep": 100e9}
    v3 = for_model("deepseek-v3")
    routed = step_comm_seconds(traffic, links, 512, 1, ep=64, arch=v3)["ep"]
    assert float(routed) == pytest.approx(100e9 * 3.5 / (8 * 63 / 64) / 50e9)
    assert float(step_comm_seconds(traffic, links, 512, 1, ep=64)["ep"]) == pytest.approx(100e9 / 50e9)
    fast_fabric = Links(intra_node=400e9, inter_node=400e9, gpus_per_node=8)
    assert float(step_comm_seconds(traffic, fast_fabric, 512, 1, ep=64, arch=v3)["ep"]) == pytest.approx(100e9 / 400e9)


@pytest.mark.parametrize(
    "ep, pp, vpp, micro_batches, ckpt, share",
    [
        (8, 1, 1, 16, 1, 15 / 16),  # one micro-batch of 16 runs unpaired
        (8, 1, 1, 1, 0, 0.0),  # nothing to pair with
        (8, 1, 1, 16, 2, 0.0),  # full recomputation: Megatron-Bridge advises against it
        (8, 4, 1, 16, 0, 0.0),  # a plain 1F1B pipeline: Megatron asks for interleaving
        (8, 4, 2, 16, 0, 1 - 11 / 32),  # interleaved: 2 x 3 + 4 + 1 of 32 chunks warm up unpaired
        (1, 1, 1, 16, 0, 0.0),  # no expert parallelism, no all-to-all
    ],
)
def test_combined_1f1b_pairs_micro_batches_where_megatron_allows_it(ep, pp, vpp, micro_batches, ckpt, share):
    from gpuplan.estimator.network import paired_micro_batch_share

    assert float(paired_micro_batch_share(ep, pp, vpp, micro_batches, ckpt)) == pytest.approx(share)
    assert float(paired_micro_batch_share(ep, pp, vpp, micro_batches, ckpt, sixteen_bit=False)) == 0.0  # fp32
    assert float(paired_micro_batch_share(ep, pp, vpp, micro_batches, ckpt, asked=False)) == 0.0  # ep_overlap=off


def test_over_tcp_every_copy_crosses_and_tensor_parallel_ranks_share_nvlink():
    """DeepEP's per-node dispatch needs RDMA: over TCP sockets the 100 GB all go over the fabric.
    Inside a node the two tensor-parallel ranks of each expert both take its tokens: 2 x 100 GB on
    400 GB/s NVLink."""
    from gpuplan.estimator.network import Links, step_comm_seconds

    traffic = {"tp": 0.0, "dp": 0.0, "pp": 0.0, "ep": 100e9}
    v3 = for_model("deepseek-v3")
    tcp = Links(intra_node=400e9, inter_node=50e9, gpus_per_node=8, rdma=False)
    assert float(step_comm_seconds(traffic, tcp, 512, 1, ep=64, arch=v3)["ep"]) == pytest.approx(100e9 / 50e9)
    nvlink = Links(intra_node=400e9, inter_node=50e9, gpus_per_node=8)
    assert float(step_comm_seconds(traffic, nvlink, 64, 2, ep=4, arch=v3)["ep"]) == pytest.approx(2 * 100e9 / 400e9)


def test_an_all_to_all_beside_compute_costs_the_sms_it_takes():
    """4 s of all-to-all beside 10 s of compute that may hide it: 15% of the SMs for those 4 s, 0.6 s;
    beside 3 s only: 1 s waits and the 3 s cost 0.45 s."""
    from gpuplan.estimator.network import Overlap, exposed_comm

    comm = {"tp": 0.0, "dp": 0.0, "pp": 0.0, "ep": 4.0}
    exposed, total = exposed_comm(comm, 10.0, 1, Overlap(ep_hidden=10.0, ep_sm_share=0.15))
    assert float(exposed) == pytest.approx(0.6) and float(total) == pytest.approx(4.0)
    exposed, _ = exposed_comm(comm, 10.0, 1, Overlap(ep_hidden=3.0, ep_sm_share=0.15))
    assert float(exposed) == pytest.approx(1.0 + 0.45)
