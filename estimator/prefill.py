"""Prefill on GPUs apart from the decoding ones (disaggregated serving: DistServe, Zhong et al. 2024;
Splitwise, Patel et al. 2024; SGLang's and DeepSeek's deployments), against prefill sharing the
decode steps (chunked prefill, vLLM's default).

A prefill instance takes the decode replica's shape (its weights fit there) and runs steps of the
engine's step token budget, all prompt tokens. The prefill pool is sized so it keeps up with the
prompts the decode pool finishes (each sequence's prompt once per output), in whole instances: within
the GPUs the question gives in all, or beside a decode pool it gives (`decode_gpus`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpuplan.estimator import compute, kernels, network
from gpuplan.estimator.architecture import Arch


@dataclass(frozen=True)
class Pools:
    """A disaggregated deployment: decode and prefill GPUs, and what each pool does."""

    decode_gpus: int
    prefill_gpus: int
    decode_tokens_per_s_per_gpu: float  # generated tokens, on the decode pool's GPUs
    prompt_tokens_per_s_per_gpu: float  # prompt tokens, on the prefill pool's GPUs
    share: float  # prefill GPUs the decode pool keeps busy per decode GPU

    @property
    def gpus(self) -> int:
        return self.decode_gpus + self.prefill_gpus

    @property
    def tokens_per_s_per_gpu(self) -> float:
        """Generated tokens per second over both pools' GPUs."""
        return self.decode_tokens_per_s_per_gpu * self.decode_gpus / self.gpus


def prompt_tokens_per_s_per_gpu(
    a: Arch,
    precision: str,
    load: compute.Served,
    *,
    tp,
    pp,
    ep,
    dev: kernels.Device,
    links: network.DecodeLinks,
    step_tokens: float,
) -> np.ndarray:
    """Prompt tokens one GPU of a prefill instance computes per second: each step `step_tokens` on
    every scheduler through the matmuls (compute-bound at these rows), those prompts' causal
    attention, and the layers' collectives of the step's hidden states."""
    tp, pp, ep = (np.asarray(x, dtype=float) for x in (tp, pp, ep))
    tokens = step_tokens * ep
    matmuls = compute.decode_matmul_seconds(a, precision, tokens=tokens, tp=tp, pp=pp, ep=ep, dev=dev)
    attention = compute.prefill_attention_seconds(a, dev, load, step_tokens / load.prompt, tp, pp)
    comm = network.decode_comm_seconds(a, tokens, tp, pp, links, ep)
    return tokens / (matmuls + attention + comm) / (tp * pp * ep)


def prefill_share(decode_tokens_per_s_per_gpu, load: compute.Served, prompt_tokens_per_s_per_gpu) -> np.ndarray:
    """Prefill GPUs per decode GPU that keep up: the decode GPU's prompts (prompt / output per
    generated token) over what one prefill GPU computes."""
    demand = np.asarray(decode_tokens_per_s_per_gpu, dtype=float) * load.prompt / load.output
    return demand / np.asarray(prompt_tokens_per_s_per_gpu, dtype=float)


def size_pools(
    decode_tokens_per_s_per_gpu: float,
    prompt_rate: float,
    share: float,
    instance: int,
    total: int | None,
    decode_pool: int | None = None,
) -> Pools | None:
    """Whole instances of `instance` GPUs: the decode replicas and the fewest prefill instances that
    keep up with them; on `total` GPUs the most decode replicas that leave room for theirs; with a
    `decode_pool` of GPUs given, its replicas, their prefill added on top. None when `total` holds
    no decode replica with its prefill."""

    def prefill_for(replicas: int) -> int:
        return max(1, math.ceil(replicas * share - 1e-9))  # the tolerance: a share of exactly 1 is one instance

    decode = decode_pool // instance if decode_pool else total // instance if total else 1
    while total and not decode_pool and decode >= 1 and decode + prefill_for(decode) > total // instance:
        decode -= 1
    if decode < 1:
        return None
    return Pools(
        decode_gpus=decode * instance,
        prefill_gpus=prefill_for(decode) * instance,
        decode_tokens_per_s_per_gpu=decode_tokens_per_s_per_gpu,
        prompt_tokens_per_s_per_gpu=prompt_rate,
        share=share,
    )
