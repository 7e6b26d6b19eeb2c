"""What the framework a training layout implies keeps in memory and sends.

Tensor, pipeline, expert and context parallelism are run with Megatron-Core (Megatron-LM, NeMo,
Megatron-SWIFT, MegaScale); data parallelism alone (ZeRO, FSDP) with DeepSpeed, FSDP or the
trainers built on them. Megatron-Core keeps two habits the others do not:

- bf16 training accumulates and all-reduces gradients in fp32 (Megatron-LM arguments.py forces
  accumulate_allreduce_grads_in_fp32 for bf16; NeMo's bf16_mixed sets grad_reduce_in_fp32), so its
  gradient buffer holds 4 bytes per parameter, 18 in all with Adam (Megatron-Core's distributed
  optimizer guide: 6 + 12/d bytes when the optimizer is sharded);
- its vocab-parallel cross-entropy is not chunked: it casts the logits to fp32 and saves their
  exponentials for the backward pass (core/tensor_parallel/cross_entropy.py), 4 bytes per logit
  beside the 2 of the bf16 logits while both live.

Elsewhere the loss is taken as chunked (torchtune's and Liger's chunked cross-entropy): the bf16
logits and the fp32 log-softmax and gradient of one chunk at a time, unless the request says the
trainer keeps Transformers' own loss (loss=unchunked).
"""

from __future__ import annotations

import numpy as np

# Chunked cross-entropy: bf16 logits plus fp32 log-softmax and its gradient for one of 8 chunks
LOSS_CHUNKS = 8
CHUNKED_LOSS_BYTES_PER_LOGIT = 2 + 2 * 4 / LOSS_CHUNKS
# Transformers' own loss (ForCausalLMLoss), for the whole sequence at once: the forward holds the
# bf16 logits, their fp32 copy and the fp32 log-softmax cross_entropy saves (2 + 4 + 4); the
# backward of log-softmax holds that saved output, the gradient nll_loss hands it and the gradient
# it returns, all fp32 (PyTorch derivatives.yaml: _log_softmax_backward_data(grad, result)): 12
UNCHUNKED_LOSS_BYTES_PER_LOGIT = 3 * 4
# Megatron-Core's vocab-parallel cross-entropy: bf16 logits and their fp32 copy (exponentiated in place)
MEGATRON_LOSS_BYTES_PER_LOGIT = 2 + 4
# Unsloth's fused cross-entropy: the 16-bit logits, saved for the backward kernel that writes their
# gradient over them (unsloth/kernels/cross_entropy_loss.py: backward returns `logits`)
INPLACE_LOSS_BYTES_PER_LOGIT = 2
ELSEWHERE_LOSS_BYTES_PER_LOGIT = {
    "chunked": CHUNKED_LOSS_BYTES_PER_LOGIT,
    "unchunked": UNCHUNKED_LOSS_BYTES_PER_LOGIT,
    "inplace": INPLACE_LOSS_BYTES_PER_LOGIT,
}
# A loop that keeps the model's output through the backward pass holds its logits beside the loss's:
# fp32, as Transformers' LlamaForCausalLM returned them before 4.45 (logits = logits.float())
KEPT_LOGITS_BYTES_PER_LOGIT = 4
# Mixed precisions whose gradients Megatron-Core keeps in fp32 (fp8 training keeps bf16 weights)
FP32_GRADS_UNDER_MEGATRON = frozenset({"bf16-mixed", "fp8-mixed"})


def megatron_layout(tp, pp, ep=1.0, cp=1.0) -> np.ndarray:
    """True where a layout needs Megatron-Core: any model, expert or context parallelism."""
    tp, pp, ep, cp = (np.asarray(x, dtype=float) for x in (tp, pp, ep, cp))
    return tp * pp * ep * cp > 1  # (tp > 1) | (pp > 1) | (ep > 1) | (cp > 1): each is 1 at least


def grad_bytes(precision: str, megatron) -> np.ndarray | float:
    """Bytes per gradient element held and reduced (one number where they are the same on every layout)."""
    if precision == "fp32":
        return 4.0
    if precision not in FP32_GRADS_UNDER_MEGATRON:
        return 2.0
    return np.where(megatron, 4.0, 2.0)


def loss_bytes_per_logit(megatron, loss: str = "chunked", keeps_logits: bool = False) -> np.ndarray:
    """Bytes per logit at the loss's peak: Megatron-Core's own loss on its layouts; elsewhere the
    loss the request or its framework names (chunked unless said), plus the output's logits where
    the training loop keeps them through the backward pass."""
    elsewhere = ELSEWHERE_LOSS_BYTES_PER_LOGIT[loss] + (KEPT_LOGITS_BYTES_PER_LOGIT if keeps_logits else 0)
    return np.where(megatron, MEGATRON_LOSS_BYTES_PER_LOGIT, elsewhere)


def unchunked_loss_extra_bytes(tokens: float, vocab: int, tp: float = 1.0) -> float:
    """Bytes per GPU that Transformers' unchunked loss holds beyond the chunked one the plan counts,
    for `tokens` tokens in a micro-batch."""
    return tokens * vocab * (UNCHUNKED_LOSS_BYTES_PER_LOGIT - CHUNKED_LOSS_BYTES_PER_LOGIT) / tp


def expert_tensor_parallel(tp, ep, stage_gpus) -> np.ndarray:
    """Expert tensor-parallel ranks (Megatron-Core's --expert-tensor-parallel-size) when the request
    leaves them open: the attention's tp, Megatron-LM's default (arguments.py: None becomes
    tensor_model_parallel_size), where ep x tp divides a pipeline stage's GPUs; 1 otherwise, the
    parallel folding Megatron-Bridge's MoE recipes set (recipes/qwen/h100/qwen3_moe.py:
    expert_tensor_parallel_size = 1 beside TP 2-4), so EP may span the tensor-parallel ranks."""
    tp, ep, stage_gpus = (np.asarray(x, dtype=float) for x in (tp, ep, stage_gpus))
    return np.where(stage_gpus % (ep * tp) == 0, tp, 1.0)
