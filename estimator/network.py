"""Bytes each GPU moves per training step, and the time that takes on each link.

Collective volumes follow the ring algorithms NCCL uses (Patarasuk & Yuan 2009): an all-reduce
moves 2(n-1)/n of the buffer per GPU; all-gather and reduce-scatter move (n-1)/n each.
Like memory.py, layout fields may be numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuplan.estimator import memo
from gpuplan.estimator.architecture import Arch
from gpuplan.estimator.schema import FabricOption, NetworkEstimate
from gpuplan.knowledge import GPU, Catalog, Fabric


@dataclass(frozen=True)
class Links:
    """Achievable collective bandwidth in bytes/s per GPU, per direction; scalars or (T, 1) arrays."""

    intra_node: np.ndarray | float  # NVLink (or PCIe) inside one NVLink domain: a server, or an NVL72 rack
    inter_node: np.ndarray | float
    gpus_per_node: np.ndarray | int  # GPUs of one NVLink domain (GPU.nvlink_gpus): a server, or a rack
    pod_gpus: np.ndarray | float = np.inf  # full bisection inside a pod of this many GPUs
    oversubscription: np.ndarray | float = 1.0  # of the fabric above a pod
    rdma: np.ndarray | bool = True  # the fabric carries RDMA (DeepEP's node-deduplicated dispatch)
    # each GPU has a NIC of its own on the fabric: the DGX/HGX design of NVLink servers on an RDMA fabric
    # (DGX H100: eight ConnectX-7 for eight GPUs); a PCIe server's GPUs, and any server's on TCP Ethernet,
    # share the node's few (an estimate: no standard)
    nic_per_gpu: np.ndarray | bool = True


def _pod(fabric: Fabric) -> tuple[float, float]:
    return (float(fabric.pod_gpus) if fabric.pod_gpus else np.inf), fabric.oversubscription


def intra_node_bandwidth(gpu: GPU, efficiency: float) -> float:
    # vendor link figures are bidirectional totals; a ring uses one direction at a time
    return gpu.link_gb_s / 2 * 1e9 * efficiency


def nic_per_gpu(gpu: GPU, fabric: Fabric) -> bool:
    """Each GPU has its own NIC on the fabric (Links.nic_per_gpu): NVLink servers on RDMA."""
    return gpu.link == "nvlink" and fabric.rdma


def links_for(gpu: GPU, fabric: Fabric, efficiency: float) -> Links:
    return Links(
        intra_node_bandwidth(gpu, efficiency),
        fabric.gb_s * 1e9 * efficiency,
        gpu.nvlink_gpus,
        *_pod(fabric),
        rdma=fabric.rdma,
        nic_per_gpu=nic_per_gpu(gpu, fabric),
    )


def links_for_types(gpus: list[GPU], fabrics: list[Fabric], efficiency: float) -> Links:
    """The same figures for several GPU types at once, shaped (T, 1) to broadcast over layouts;
    each type with its own inter-node fabric."""
    return Links(
        np.array([[intra_node_bandwidth(g, efficiency)] for g in gpus]),
        np.array([[f.gb_s * 1e9 * efficiency] for f in fabrics]),
        np.array([[g.nvlink_gpus] for g in gpus], dtype=float),
        np.array([[_pod(f)[0]] for f in fabrics]),
        np.array([[_pod(f)[1]] for f in fabrics]),
        np.array([[f.rdma] for f in fabrics]),
        np.array([[nic_per_gpu(g, f)] for g, f in zip(gpus, fabrics, strict=True)]),
    )


@dataclass(frozen=True)
class DecodeLinks:
    """Per GPU type (a column): bandwidth and latency inside a node and across the fabric."""

    intra: np.ndarray  # bytes/s
    latency: np.ndarray  # s per collective
    inter: np.ndarray
    inter_latency: np.ndarray
    domain: np.ndarray | float = np.inf  # GPUs of one NVLink domain (a server, or an NVL72 rack)
    rdma: np.ndarray | bool = True  # the fabric between domains carries RDMA
    rack: np.ndarray | bool = False  # the NVLink domain spans servers (multi-node NVLink: GB200/GB300 NVL72)


# decode_links by the GPU objects, catalog and fabric (each serving search asks it of the same few)
_DECODE_LINKS = memo.ShapeCache(256)


def decode_links(gpus: list[GPU], cat: Catalog, fabric: str | None) -> DecodeLinks:
    """The links of each GPU type's servers and fabric (read-only, shared: kept by the catalog and
    GPU objects' identities, which the entry keeps alive)."""
    key = (id(cat), *map(id, gpus), fabric)
    return _DECODE_LINKS.get(key, (cat, *gpus), lambda: _read_only(_decode_links(gpus, cat, fabric)))


def _read_only(links: DecodeLinks) -> DecodeLinks:
    for x in vars(links).values():
        if isinstance(x, np.ndarray):
            x.setflags(write=False)
    return links


def _decode_links(gpus: list[GPU], cat: Catalog, fabric: str | None) -> DecodeLinks:
    eff = cat.collective_efficiency
    fabrics = [cat.fabrics[fabric or g.node_fabric] for g in gpus]
    return DecodeLinks(
        intra=np.array([[intra_node_bandwidth(g, eff)] for g in gpus]),
        latency=np.array([[cat.link_latency_us.get(g.link, 30.0) * 1e-6] for g in gpus]),
        inter=np.array([[f.gb_s * 1e9 * eff] for f in fabrics]),
        inter_latency=np.array([[f.latency_us * 1e-6] for f in fabrics]),
        domain=np.array([[g.nvlink_gpus] for g in gpus], dtype=float),
        rdma=np.array([[f.rdma] for f in fabrics]),
        rack=np.array([[g.nvlink_gpus > g.gpus_per_node] for g in gpus]),
    )


def decode_collectives(arch: Arch, batch: int, tp, pp) -> tuple[np.ndarray, np.ndarray, float]:
    """Per decode step: 2 tensor-parallel all-reduces per layer of the batch's hidden states
    (Megatron-LM), and one hop of them per pipeline boundary. Returns (all-reduces, bytes each
    all-reduce moves per GPU (ring), bytes per pipeline hop)."""
    tp, pp = np.asarray(tp, dtype=float), np.asarray(pp, dtype=float)
    hidden_bytes = batch * arch.hidden * 2.0
    allreduces = np.where(tp > 1, 2 * arch.layers / pp, 0.0)
    return allreduces, 2 * (tp - 1) / tp * hidden_bytes, hidden_bytes


def decode_comm_seconds(arch: Arch, batch: int, tp, pp, links: DecodeLinks, ep=1) -> np.ndarray:
    """Seconds per decode step on the network: every all-reduce, pipeline hop and expert-parallel
    all-to-all pays its link's bandwidth and latency. The serving search and the serving report
    both use it."""
    allreduces, per_allreduce, hop = decode_collectives(arch, batch, tp, pp)
    tp_seconds = allreduces * (per_allreduce / links.intra + links.latency)
    pp_seconds = (np.asarray(pp, dtype=float) - 1) * (hop / links.inter + links.inter_latency)
    if not arch.is_moe:  # no all-to-all: 0 seconds
        return tp_seconds + pp_seconds
    return tp_seconds + pp_seconds + expert_all_to_all_seconds(arch, batch, ep, links)


def expert_all_to_all_bytes(arch: Arch, batch: int, ep, gathered=False) -> np.ndarray:
    """Serving with expert parallelism: bytes one GPU sends per decode step. Each MoE layer sends
    every token's hidden state (16-bit) to its k experts and takes the results back (GShard's
    dispatch and combine), the (ep-1)/ep of it held by other GPUs; each GPU sends for its own
    1/ep of the batch. `gathered` (expert_collectives_gathered): every GPU gathers all the step's
    tokens instead and reduce-scatters the experts' outputs back, (ep-1)/ep of the batch's hidden
    states each way, whatever k (16-bit: DeepSeek's block-scaled FP8 gathers BF16; per-tensor FP8
    checkpoints gather FP8, so this is their upper bound)."""
    ep = np.asarray(ep, dtype=float)
    if not arch.is_moe:
        return np.zeros_like(ep)
    sent = batch / ep * arch.experts_per_token * arch.hidden * 2.0 * 2 * (ep - 1) / ep
    gather = batch * arch.hidden * 2.0 * 2 * (ep - 1) / ep
    return arch.moe_layers * np.where(gathered, gather, sent)


def expert_collectives_gathered(ep, links: DecodeLinks) -> np.ndarray:
    """Whether a serving replica's experts exchange tokens by all-gather and reduce-scatter: with
    expert parallelism inside one server's NVLink. TensorRT-LLM's default MoE (CUTLASS) does so
    under attention data parallelism and turns to all-to-all only over multi-node NVLink
    (fused_moe_cutlass.py enable_alltoall: MnnvlMemory.supports_mnnvl()); DeepEP's all-to-all is an
    option of its wide-EP backend, as of SGLang's, which the replicas over several servers run."""
    ep = np.asarray(ep, dtype=float)
    return (ep > 1) & (ep <= links.domain) & ~np.asarray(links.rack, dtype=bool)


def expert_across_share(ep, domain) -> np.ndarray:
    """Share of a serving replica's expert all-to-all bytes bound for GPUs in other NVLink domains:
    the (ep - domain) / ep of the ranks outside a GPU's own, under uniform routing."""
    ep = np.asarray(ep, dtype=float)
    return np.where(ep > domain, 1.0 - domain / np.maximum(ep, 1.0), 0.0)


def expert_all_to_all_seconds(arch: Arch, batch: int, ep, links: DecodeLinks) -> np.ndarray:
    """The all-to-alls of expert_all_to_all_bytes, two per MoE layer (dispatch and combine; inside
    one server, the all-gather and reduce-scatter of expert_collectives_gathered), each paying its
    link's latency. Inside an NVLink domain on NVLink; a replica over several domains
    (wide EP) sends the copies bound for other domains straight over the RDMA fabric beside the
    NVLink ones, as DeepEP's low-latency kernels do (pure RDMA, NVLink for peers in the domain),
    so the slower of the two sets the time. DeepEP's published H800 figures (CX7 400 Gb/s, 128
    tokens a GPU, top-8, hidden 7168) match bytes / (line rate x collective efficiency): EP128
    combine, 14.7 MB in 369 us, 40 GB/s of 50."""
    ep = np.asarray(ep, dtype=float)
    calls = np.where(ep > 1, 2 * arch.moe_layers, 0.0)
    sent = expert_all_to_all_bytes(arch, batch, ep, expert_collectives_gathered(ep, links))
    across = expert_across_share(ep, links.domain)
    nvlink = sent * (1.0 - across) / links.intra + calls * links.latency
    fabric = sent * across / links.inter + calls * links.inter_latency
    return np.where(across > 0, np.maximum(nvlink, fabric), nvlink)


# Tensor-parallel all-gathers and reduce-scatters per layer and micro-batch with sequence
# parallelism (Megatron-Core tensor_parallel/layers.py): 4 forward and 6 backward, of which the
# column-parallel layers' backward input all-gather and input-gradient reduce-scatter (4) are issued
# asynchronously, beside the input- and weight-gradient GEMMs (LinearWithGradAccumulationAndAsyncCommunication)
TP_COLLECTIVES = 10
TP_FORWARD_COLLECTIVES = 4
TP_ASYNC_COLLECTIVES = 4


def tensor_parallel_async_share(ckpt) -> np.ndarray:
    """Share of a step's tensor-parallel collectives that Megatron-Core runs beside GEMMs: 4 of the
    10 per layer and micro-batch, of 14 when every forward is recomputed (the replay's 4 wait)."""
    recomputed = TP_ASYNC_COLLECTIVES / (TP_COLLECTIVES + TP_FORWARD_COLLECTIVES)
    return np.where(np.asarray(ckpt) == 2, recomputed, TP_ASYNC_COLLECTIVES / TP_COLLECTIVES)


def _ring(n: np.ndarray) -> np.ndarray:
    """(n - 1) / n of a buffer moves per GPU in a ring of n; none without one (n <= 1)."""
    return np.maximum(n - 1, 0.0) / np.maximum(n, 1)


def step_traffic(
    a: Arch,
    trained: bool,
    seq_len: int,
    *,
    gpus,
    tp,
    pp,
    zero,
    ckpt,
    micro_batch,
    micro_batches,
    vpp=1,
    ep=1,
    cp=1,
    grad_bytes: np.ndarray | float = 2.0,
    adapter_params: float = 0.0,
    etp=None,
) -> dict[str, np.ndarray]:
    """Bytes per GPU per optimizer step on each parallel dimension.

    tp: Megatron-LM's layers (Shoeybi et al. 2019) with sequence parallelism (Korthikanti et al.
    2022), per layer and micro-batch: 4 all-gathers / reduce-scatters of the activations forward, 6
    backward (the row-parallel layers gather their output gradient, the column-parallel ones gather
    their input again for the weight gradient and reduce-scatter the input gradient: Megatron-Core
    tensor_parallel/layers.py), 4 more when the forward is recomputed. dp: gradient all-reduce
    once per step (ZeRO-1/2 reduce-scatter + all-gather is the same volume); ZeRO-3 gathers
    parameters twice and reduce-scatters gradients on every micro-batch (Rajbhandari et al. 2020,
    Sec. 7); frozen weights (LoRA) are gathered but send no gradients, the `adapter_params` trained
    beside them do (all-reduced, or under ZeRO-3 gathered and reduce-scattered like the rest). pp:
    activations and their gradients between stages, v times over for v interleaved chunks. ep
    (MoE): each token's hidden state goes to its k experts and back by all-to-all, forward and
    backward (GShard, Lepikhin et al. 2020), the (ep-1)/ep of it held by other expert-parallel
    ranks; routed experts split over ep x etp ranks of a stage (etp None: tp) reduce their gradients
    over the stage's gpus / (ep x etp) that hold the same experts (Megatron-Core's expert data
    parallel group, parallel folding). cp: every layer all-gathers the sequence's keys and values
    forward and again backward, and reduce-scatters their gradients (Megatron-Core's context
    parallelism, Llama 3's all-gather variant); tp, pp and ep then carry 1/cp of the tokens.
    """
    gpus, tp, pp, micro_batch, micro_batches = (
        np.asarray(x, dtype=float) for x in (gpus, tp, pp, micro_batch, micro_batches)
    )
    zero, ckpt = np.asarray(zero), np.asarray(ckpt)
    tp_pp = tp * pp
    dp = gpus / tp_pp  # the gradient group: data x context parallel ranks
    ep, cp = np.asarray(ep, dtype=float), np.asarray(cp, dtype=float)
    tokens_mb = micro_batch * seq_len / cp
    # dense parameters move over all dp ranks; a routed expert over the expert data-parallel ranks that hold it
    # (a dense model has no routed term: 0 bytes, which adds nothing to the non-negative dense one)
    ring_dp = _ring(dp)
    ring_shard = (a.params - a.routed_expert_params) * ring_dp / tp_pp
    if a.routed_expert_params:
        experts = ep * (tp if etp is None else np.asarray(etp, dtype=float))
        ring_shard = ring_shard + a.routed_expert_params / experts * _ring(gpus / (pp * experts)) / pp
    full = ckpt == 2

    collectives = np.where(full, float(TP_COLLECTIVES + TP_FORWARD_COLLECTIVES), float(TP_COLLECTIVES))
    activation = tokens_mb * a.hidden * 2.0
    tp_bytes = collectives * _ring(tp) * activation * (a.layers / pp) * micro_batches

    # the adapters trained beside frozen weights (none where the whole model trains: 0 bytes added)
    adapters = adapter_params * ring_dp / tp_pp if adapter_params else 0.0
    gathered = ring_shard + adapters if adapter_params else ring_shard
    gather = 2 * gathered * 2.0 * micro_batches  # forward and backward all-gathers
    scatter = (ring_shard if trained else adapters) * grad_bytes * micro_batches
    allreduce = 2 * (ring_shard if trained else adapters) * grad_bytes
    dp_bytes = np.where(zero >= 3, gather + scatter, allreduce)

    piped = pp > 1
    if piped.any():
        pp_bytes = np.where(piped, 2 * activation / tp * micro_batches * np.asarray(vpp, dtype=float), 0.0)
    else:  # no pipeline: nothing between stages
        pp_bytes = np.zeros(np.broadcast(pp, activation, tp, micro_batches, vpp).shape)
    traffic = {"tp": tp_bytes, "dp": dp_bytes, "pp": pp_bytes}
    context = (cp > 1).any()
    recompute = np.where(full, 1.0, 0.0) if context or a.is_moe else None  # the forward's passes, repeated
    if context:
        kv = a.kv_cache_elems_per_token_layer * tokens_mb * 2.0 / tp  # keys and values of this rank's tokens
        traffic["cp"] = (3 + recompute) * (cp - 1) * kv * a.layers / pp * micro_batches
    if a.is_moe:
        passes = 2 + recompute  # forward, backward, recomputed forward
        per_layer = 2 * a.experts_per_token * activation / tp * _ring(ep)  # dispatch and combine
        traffic["ep"] = per_layer * passes * (a.moe_layers / pp) * micro_batches
    return traffic


def gradient_ranks_per_node(gpus, tp, pp, per_node) -> tuple[np.ndarray, np.ndarray]:
    """(ranks of the gradient group, data x context parallel, in one server; the group's size).
    Ranks are laid out tensor parallel first, then context and data parallel, pipeline last
    (Megatron-Core's default order tp-cp-ep-dp-pp; FSDP and DeepSpeed without model parallelism
    fill a node with data-parallel ranks alike)."""
    gpus, tp, pp = (np.asarray(x, dtype=float) for x in (gpus, tp, pp))
    group = gpus / (tp * pp)
    # np.clip(x, 1, group) as it computes it, without its Python overhead
    return np.minimum(np.maximum(np.floor(np.asarray(per_node, dtype=float) / tp), 1.0), group), group


def gradient_bandwidth(links: Links, gpus, tp, pp=1) -> np.ndarray:
    """Bytes/s per GPU of the gradient group's collectives (all-reduce, ZeRO's all-gathers and
    reduce-scatters). NCCL's rings across nodes leave each node through the NICs of the group's
    ranks there, one per GPU, so a node takes in the buffer once, spread over its k ranks' NICs, and
    passes it on over NVLink: k NICs' worth per GPU, never more than NVLink carries (nccl-tests on
    DGX H100 nodes with eight 400 Gb/s NICs: about 360-400 GB/s bus bandwidth, NVIDIA/nccl issue
    1277; one NIC's worth where k is 1, as with tensor parallelism over a whole node, or where the
    GPUs share the node's NICs, Links.nic_per_gpu). A group inside one node stays on NVLink."""
    members, group = gradient_ranks_per_node(gpus, tp, pp, links.gpus_per_node)
    spans_nodes = (np.asarray(gpus, dtype=float) > links.gpus_per_node) & (members < group)
    nics = np.where(links.nic_per_gpu, members, 1.0)  # a PCIe server's ranks share its NICs: one's worth
    return np.where(spans_nodes, np.minimum(nics * links.inter_node, links.intra_node), links.intra_node)


def step_comm_seconds(
    traffic: dict[str, np.ndarray], links: Links, gpus, tp, ep=1, cp=1, arch: Arch | None = None, etp=None, pp=1
) -> dict[str, np.ndarray]:
    """Seconds per step on each dimension: tp inside a node, pp across nodes when the job spans
    nodes, dp at gradient_bandwidth, ep inside a node while etp x ep GPUs fit in one (expert groups
    are placed there first; etp None: tp). Every expert tensor-parallel rank of an expert takes its
    tokens (Megatron-Core's --expert-tensor-parallel-size, TP by default: the flex dispatcher's etp x
    top-k copies, the all-to-all dispatcher's all-gather), so NVLink carries etp times the dispatched
    bytes; an expert group over several nodes sends `arch`'s expert_fabric_share of its copies over
    an RDMA fabric (all of them over TCP) and forwards them over NVLink beside it."""
    gpus, tp = np.asarray(gpus, dtype=float), np.asarray(tp, dtype=float)
    per_node = np.asarray(links.gpus_per_node, dtype=float)
    multi_node = gpus > per_node
    tp_bw = np.where(tp <= per_node, links.intra_node, links.inter_node)
    outer_bw = np.where(multi_node, links.inter_node, links.intra_node)
    dp_bw = gradient_bandwidth(links, gpus, tp, pp)
    seconds = {"tp": traffic["tp"] / tp_bw, "dp": traffic["dp"] / dp_bw, "pp": traffic["pp"] / outer_bw}
    if "ep" in traffic:
        ep, etp = np.asarray(ep, dtype=float), tp if etp is None else np.asarray(etp, dtype=float)
        group = etp * ep
        nvlink = traffic["ep"] * etp / links.intra_node
        share = expert_fabric_share(arch, group / per_node, ep) if arch is not None else 1.0
        share = np.where(np.asarray(links.rdma, dtype=bool), share, 1.0)
        fabric = traffic["ep"] * share / outer_bw * _beyond_pod(group, links)
        seconds["ep"] = np.where(group <= per_node, nvlink, np.maximum(fabric, nvlink))
    if "cp" in traffic:
        in_node = tp * np.asarray(cp, dtype=float) <= per_node
        seconds["cp"] = traffic["cp"] / np.where(in_node, links.intra_node, outer_bw)
    return seconds


def between_nodes_gb(
    traffic: dict[str, float],
    gpus: int,
    tp: int,
    per_node: int,
    ep: int = 1,
    cp: int = 1,
    etp: int | None = None,
    pp: int = 1,
) -> float:
    """Of a step's traffic per GPU, the GB that crosses the fabric between nodes, by the placement
    step_comm_seconds times: pp across nodes when the job spans several, dp's share that leaves a
    node through each of its gradient ranks there (gradient_bandwidth), tp, ep and cp inside a node
    while their groups fit in one (the rest stays on NVLink or PCIe)."""
    if gpus <= per_node:
        return 0.0
    members, gradient_group = gradient_ranks_per_node(gpus, tp, pp, per_node)
    dp = traffic.get("dp", 0.0) / members if members < gradient_group else 0.0
    crossing = dp + traffic.get("pp", 0.0)
    for dim, group in (("tp", tp), ("ep", (tp if etp is None else etp) * ep), ("cp", tp * cp)):
        if group > per_node:
            crossing += traffic.get(dim, 0.0)
    return float(crossing) / 1e9


def expert_fabric_share(a: Arch, nodes, ep) -> np.ndarray:
    """Share of an expert all-to-all's copies that cross the fabric when its group spans `nodes`
    nodes. DeepEP's dispatch and combine (Megatron-Core's flex dispatcher) send a token once to each
    other node that holds one of its k experts and forward it over NVLink there (DeepSeek-V3,
    arXiv:2412.19437, Sec. 3.2.2): n(1 - (1 - 1/n)^k) nodes under uniform routing, of which (n-1)/n
    are other nodes; node-limited routing (config.json n_group / topk_group) caps the nodes at the
    groups a token may use, times the nodes one group spans."""
    nodes, ep = np.maximum(np.asarray(nodes, dtype=float), 1.0), np.asarray(ep, dtype=float)
    k = a.experts_per_token
    reached = nodes * (1.0 - (1.0 - 1.0 / nodes) ** k)
    if a.expert_groups > 1:
        reached = np.minimum(reached, a.groups_per_token * np.maximum(1.0, nodes / a.expert_groups))
    copies = k * _ring(ep)
    return np.where((nodes > 1) & (copies > 0), reached * (nodes - 1) / nodes / np.maximum(copies, 1e-9), 1.0)


def _beyond_pod(group: np.ndarray, links: Links) -> np.ndarray:
    """Slow-down of an all-to-all over `group` GPUs on a multi-tier fabric: the (pods-1)/pods of it
    that leaves its pod shares links oversubscribed by the given ratio. Rings (data parallel,
    context parallel, pipeline hops) cross a pod boundary once per pod and are not slowed."""
    pods = np.ceil(group / links.pod_gpus)
    leaving = np.where(pods > 1, (pods - 1) / np.maximum(pods, 1), 0.0)
    return 1.0 + leaving * (np.asarray(links.oversubscription, dtype=float) - 1.0)


def pipeline_exposed_share(pp, vpp, micro_batches) -> np.ndarray:
    """Share of the pipeline's point-to-point seconds on the critical path. Plain 1F1B sends and
    receives between its steps (Megatron-LM turns p2p overlap off without interleaving): all of it.
    Interleaved, Megatron-Core's --overlap-p2p-communication (its default; Llama 3's asynchronous
    point-to-point, arXiv:2407.21783, Sec. 3.3.2) runs a chunk's sends beside the next chunk's
    compute, and only the fill's and drain's transfers wait, the bubble's share (p-1)/(v m)."""
    pp, vpp, m = (np.asarray(x, dtype=float) for x in (pp, vpp, micro_batches))
    return np.where(vpp > 1, np.minimum(1.0, (pp - 1) / (vpp * np.maximum(m, 1.0))), 1.0)


def paired_micro_batch_share(ep, pp, vpp, micro_batches, ckpt, sixteen_bit=True, asked=True) -> np.ndarray:
    """Share of a step's compute beside which another micro-batch's expert all-to-alls run under
    Megatron-Core's combined 1F1B (--overlap-moe-expert-parallel-comm: one micro-batch's dispatch and
    combine beside an adjacent one's forward or backward; DeepSeek-V3's DualPipe pairs them the same
    way). It needs expert parallelism, two micro-batches or more, no full recomputation, bf16 or fp16
    and, with a pipeline, an interleaved one (Megatron-Core's checks). The first stage's warm-up runs
    2(p-1) + (v-1)p + 1 forward chunks unpaired of its v m (schedules.py, micro-batch groups of p
    per virtual stage) and the cool-down as many backward ones; 1 of m without a pipeline. None where
    the question turns the overlap off (`asked`: ep_overlap=off, as Megatron-Core's default leaves it)."""
    ep, pp, vpp, m = (np.asarray(x, dtype=float) for x in (ep, pp, vpp, micro_batches))
    able = (ep > 1) & (m >= 2) & (np.asarray(ckpt) != 2) & ((pp == 1) | (vpp > 1)) & bool(sixteen_bit and asked)
    unpaired = (2 * (pp - 1) + (vpp - 1) * pp + 1) / (vpp * np.maximum(m, 1.0))
    return np.where(able, np.clip(1.0 - unpaired, 0.0, 1.0), 0.0)


@dataclass(frozen=True)
class Overlap:
    """What a step's communication runs beside, per layout (scalars or arrays): seconds of compute
    beside the MoE all-to-all (the shared experts', or an adjacent micro-batch's), and the share of
    the GPU's SMs that all-to-all takes from that compute while it runs; the share of tensor-parallel
    collectives issued asynchronously (tensor_parallel_async_share) and the seconds of column-
    parallel backward GEMMs they hide behind; the share of pipeline hops that waits
    (pipeline_exposed_share)."""

    ep_hidden: np.ndarray | float = 0.0
    ep_sm_share: np.ndarray | float = 0.0
    tp_async: np.ndarray | float = 0.0
    tp_hidden: np.ndarray | float = 0.0
    pp_share: np.ndarray | float = 1.0


def _beside(seconds, share, hidden) -> np.ndarray:
    """Seconds that wait when `share` of them runs beside `hidden` seconds of compute."""
    waits = seconds * (1.0 - np.asarray(share, dtype=float))
    return waits + np.maximum(0.0, seconds - waits - hidden)


def exposed_comm(
    comm: dict[str, np.ndarray], t_compute, zero, overlap: Overlap = Overlap()
) -> tuple[np.ndarray, np.ndarray]:
    """(exposed, total) communication seconds per step.

    Context-parallel transfers sit on the critical path; tensor-parallel ones but for the
    asynchronous share that hides behind the column-parallel backward GEMMs; pipeline hops for their
    `pp_share`, the rest beside compute; expert-parallel all-to-alls but for the compute that runs
    beside them, which slows by the SMs they take; data-parallel traffic overlaps the backward pass
    (2/3 of compute), or all of it under ZeRO-3 prefetching.
    """
    overlap_dp = np.where(np.asarray(zero) >= 3, 1.0, 2.0 / 3.0)
    dp_exposed = np.maximum(0.0, comm["dp"] - overlap_dp * t_compute)
    tp_exposed = _beside(comm["tp"], overlap.tp_async, overlap.tp_hidden)
    if np.ndim(overlap.pp_share) == 0 and overlap.pp_share == 1.0:  # every hop waits (no interleaving)
        pp_exposed = comm["pp"]
    else:
        pp_exposed = _beside(comm["pp"], 1.0 - np.asarray(overlap.pp_share, dtype=float), t_compute)
    serial, total = tp_exposed + pp_exposed, comm["tp"] + comm["pp"]
    # context and expert parallelism where the layouts have them (elsewhere they add 0 seconds)
    if "cp" in comm:
        serial, total = serial + comm["cp"], total + comm["cp"]
    if "ep" in comm:
        ep = comm["ep"]
        ep_beside = np.minimum(ep, overlap.ep_hidden)
        serial = serial + (ep - ep_beside + ep_beside * np.asarray(overlap.ep_sm_share, dtype=float))
        total = total + ep
    return serial + dp_exposed, total + comm["dp"]


def _single_node(traffic: dict[str, float], gpu: GPU, exposed: float, total: float, other: float) -> NetworkEstimate:
    """One node: every transfer stays on the GPUs' own links; no fabric to choose. `exposed` and
    `total`: the step's communication seconds that wait and in all (exposed_comm)."""
    step = other + float(exposed)
    return NetworkEstimate(
        per_step_gb=float(sum(traffic.values())) / 1e9,
        fabric=gpu.link,
        single_node=True,
        between_nodes_gb=0.0,
        comm_fraction=float(exposed) / step,
        comm_total_fraction=float(total) / step,
        by_dimension_gb={k: float(v) / 1e9 for k, v in traffic.items()},
    )


# the links of a GPU type's servers over each fabric offered, by the GPU and fabric objects
_FABRIC_LINKS = memo.ShapeCache(256)


def _fabric_links(gpu: GPU, fabrics: list[Fabric], efficiency: float) -> Links:
    """One GPU type's links over each fabric, a (fabrics, 1) column each (read-only, shared: kept
    by the objects' identities, which the entry keeps alive)."""

    def read() -> Links:
        links = links_for_types([gpu] * len(fabrics), fabrics, efficiency)  # the same type on each fabric
        for x in vars(links).values():
            if isinstance(x, np.ndarray):
                x.setflags(write=False)
        return links

    return _FABRIC_LINKS.get((id(gpu), *map(id, fabrics), efficiency), (gpu, *fabrics), read)


def _per_fabric(x, fabrics: int) -> np.ndarray:
    """`x` for each of the fabrics, flat: np.broadcast_to(x, (fabrics, 1)).ravel() without its overhead."""
    out = np.empty((fabrics, 1))
    out[...] = x
    return out.ravel()


FABRIC_SLACK = 1.05  # a fabric is good enough when the step is at most 5% slower than on the best one


def compare_fabrics(
    traffic: dict[str, float],
    gpu: GPU,
    fabrics: list[Fabric],
    efficiency: float,
    *,
    gpus: int,
    tp: int,
    zero: int,
    t_compute: float,
    other_seconds: float,
    assumed: str | None = None,
    ep: int = 1,
    cp: int = 1,
    overlap: Overlap = Overlap(),
    owned: bool = False,
    arch: Arch | None = None,
    etp: int | None = None,
    planned: tuple[float, float] | None = None,
    pp: int = 1,
) -> NetworkEstimate:
    """Step time and waiting-on-network share on each inter-node fabric, and the one to choose:
    the slowest (cheapest) fabric whose step stays within 5% of the best fabric's, or `assumed`, the
    fabric the plan's time was computed on, when the user has it (`owned`) and it does; its waiting
    share is reported as well. `planned`: the (exposed, total) communication seconds the search
    timed for the plan on its own links, which are all a single node's figures need."""
    per_step = float(sum(traffic.values()))
    nodes = -(-gpus // gpu.nvlink_gpus)  # NVLink domains: the fabric between them is what is chosen
    if nodes <= 1:
        if planned is None:
            links = links_for(gpu, fabrics[0], efficiency)
            comm = step_comm_seconds(traffic, links, gpus, tp, ep, cp, arch, etp, pp)
            planned = exposed_comm(comm, t_compute, zero, overlap)
        return _single_node(traffic, gpu, *planned, other=other_seconds)
    links = _fabric_links(gpu, fabrics, efficiency)
    comm = step_comm_seconds(traffic, links, gpus, tp, ep, cp, arch, etp, pp)
    exposed, total = exposed_comm(comm, t_compute, zero, overlap)
    # each fabric's figures as Python floats: the same numbers, without a numpy scalar's cost per operation
    exposed, total = _per_fabric(exposed, len(fabrics)).tolist(), _per_fabric(total, len(fabrics)).tolist()
    steps = [other_seconds + x for x in exposed]
    best_step = min(steps)
    good = [i for i in range(len(fabrics)) if steps[i] <= best_step * FABRIC_SLACK]
    pick = min(good, key=lambda i: (fabrics[i].gb_s, i))  # at equal speed, the first listed (InfiniBand)
    ids = [f.id for f in fabrics]
    if owned and assumed in ids and ids.index(assumed) in good:
        pick = ids.index(assumed)  # the user's own network is good enough: no switch to suggest
    options = [
        FabricOption(fabric=f.id, name=f.name, step_s=float(steps[i]), comm_fraction=float(exposed[i] / steps[i]))
        for i, f in enumerate(fabrics)
    ]
    here = ids.index(assumed) if assumed in ids else pick
    return NetworkEstimate(
        per_step_gb=per_step / 1e9,
        fabric=fabrics[pick].id,
        assumed_fabric=fabrics[here].id,
        assumed_comm_fraction=float(exposed[here] / steps[here]),
        single_node=False,
        between_nodes_gb=between_nodes_gb(traffic, gpus, tp, gpu.nvlink_gpus, ep, cp, etp, pp),
        comm_fraction=float(exposed[pick] / steps[pick]),
        comm_total_fraction=float(total[pick] / steps[pick]),
        by_dimension_gb={k: float(v) / 1e9 for k, v in traffic.items()},
        options=options,
    )
