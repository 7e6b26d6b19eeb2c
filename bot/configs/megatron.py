"""Megatron-LM / Megatron-Core: pretrain_gpt.py's arguments for the plan's layout (tensor,
pipeline with interleaving, sequence, expert and context parallelism, the distributed optimizer
or Megatron-FSDP, recomputation), the model's shape and the batch, launched by torchrun.

Argument names and the checks they must pass as in Megatron-LM's megatron/training/arguments.py
(the names are checked against tests/data/tool_options/megatron_pretrain.txt).
"""

from __future__ import annotations

from gpuplan.bot.configs import common
from gpuplan.bot.configs.launch import ConfigError, Launch
from gpuplan.bot.configs.text import CHANGE_ME, Script, Words, flag
from gpuplan.estimator import network
from gpuplan.estimator.memory import CKPT_CODE
from gpuplan.knowledge import catalog

# what pretrain_gpt.py trains: next-token prediction from random or loaded weights
METHODS = ("pretrain", "continue", "full")
# ZeRO stages as Megatron-Core shards data parallelism: the distributed optimizer (ZeRO-1), and
# Megatron-FSDP's strategies for gradients (ZeRO-2) and parameters too (ZeRO-3)
FSDP_STRATEGY = {2: "optim_grads", 3: "optim_grads_params"}


def check(launch: Launch) -> None:
    if launch.serving:
        raise ConfigError("config_training_only", format="megatron")
    if launch.method not in METHODS:
        raise ConfigError("config_megatron_method", method=launch.method)
    if launch.offload not in ("none", "cpu"):
        raise ConfigError("config_megatron_zero", zero=launch.zero, offload=launch.offload)
    if launch.optimizer not in ("adamw", "sgd"):
        raise ConfigError("config_megatron_optimizer", optimizer=launch.optimizer)
    if launch.vpp > 1 and _interleaved_layers(launch) < launch.pp * launch.vpp:
        raise ConfigError("config_megatron_layers", layers=launch.shape.layers, pp=launch.pp, vpp=launch.vpp)
    common.even_nodes(launch, "megatron")


def _balanced(launch: Launch) -> bool:
    """An interleaved pipeline whose layers split evenly only with the embedding and the loss
    counted as a layer each (Llama 3 405B's 126 + 2 on 16 stages), as the plan's search laid it out."""
    layers, pp = launch.shape.layers, launch.pp
    return launch.vpp > 1 and layers % pp != 0 and (layers + 2) % pp == 0


def _interleaved_layers(launch: Launch) -> int:
    """Layer slots Megatron-Core splits over stages x chunks (transformer_block.get_num_layers_to_build)."""
    return launch.shape.layers + (2 if _balanced(launch) else 0)


def parallel_args(launch: Launch) -> list[str]:
    args = [flag("--tensor-model-parallel-size", launch.tp), flag("--pipeline-model-parallel-size", launch.pp)]
    if _interleaved_layers(launch) % (launch.pp * launch.vpp):
        args.append(flag("--pipeline-model-parallel-layout", _chunk_layout(launch)))
    else:
        args += _balanced_ends(launch)
        if launch.vpp > 1:
            args.append(flag("--num-virtual-stages-per-pipeline-rank", launch.vpp))
    if launch.tp > 1:
        args.append(flag("--sequence-parallel"))
    if launch.ep > 1:
        args.append(flag("--expert-model-parallel-size", launch.ep))
        if launch.etp != launch.tp:  # parallel folding; Megatron-LM defaults it to the tensor-parallel size
            args.append(flag("--expert-tensor-parallel-size", launch.etp))
    if launch.cp > 1:
        args.append(flag("--context-parallel-size", launch.cp))
    return args + sharding_args(launch)


def _balanced_ends(launch: Launch) -> list[str]:
    """The embedding and the loss taking a layer's place each where the plan interleaves them so
    (Megatron-Core's first chunk of the first stage then holds only the embedding, the last chunk of
    the last stage only the loss: Llama 3's balanced stages)."""
    if not _balanced(launch):
        return []
    return [flag("--account-for-embedding-in-pipeline-split"), flag("--account-for-loss-in-pipeline-split")]


def _chunk_layout(launch: Launch) -> str:
    """A pipeline whose layers do not split evenly (DeepSeek-V3's 61 over 16 stages), interleaved
    or not: Megatron-Core's --pipeline-model-parallel-layout, the model's chunks in order split by
    '|' (chunk s on stage s mod pp), E the embedding in the first, L the loss in the last, t a
    decoder layer; the first layers % chunks chunks hold one layer more, so stages differ by one at
    most (memory.stage_layers, compute.slowest_stage)."""
    chunks = launch.pp * launch.vpp
    base, extra = divmod(launch.shape.layers, chunks)
    parts = ["t" * (base + (1 if s < extra else 0)) for s in range(chunks)]
    parts[0], parts[-1] = "E" + parts[0], parts[-1] + "L"
    return "|".join(parts)


def sharding_args(launch: Launch) -> list[str]:
    args = []
    if launch.zero >= 1:
        args.append(flag("--use-distributed-optimizer"))
    if launch.zero >= 2:  # Megatron-FSDP checkpoints in its own format (arguments.py asserts it)
        args += [
            flag("--use-megatron-fsdp"),
            flag("--data-parallel-sharding-strategy", FSDP_STRATEGY[launch.zero]),
            flag("--ckpt-format", "fsdp_dtensor"),
        ]
    if launch.zero >= 1:
        args += [flag("--overlap-grad-reduce"), flag("--overlap-param-gather")]
    if launch.offload == "cpu":  # Adam on the CPU (Megatron-Core's hybrid device optimizer)
        args += [flag("--optimizer-cpu-offload"), flag("--use-precision-aware-optimizer")]
    if launch.optimizer == "sgd":
        args.append(flag("--optimizer", "sgd"))
    return args


def batch_args(launch: Launch) -> list[str]:
    args = [
        flag("--micro-batch-size", launch.micro_batch),
        flag("--global-batch-size", launch.global_batch),
        flag("--seq-length", launch.seq_len),
    ]
    if launch.ckpt == "full":
        args += [
            flag("--recompute-granularity", "full"),
            flag("--recompute-method", "uniform"),
            flag("--recompute-num-layers", 1),
        ]
    elif launch.ckpt == "selective":
        args.append(flag("--recompute-granularity", "selective"))
        if launch.shape.mla:  # the plan's memory keeps no q, k, v there: MLA's up-projections recomputed too
            args.append(" ".join([flag("--recompute-modules"), "core_attn", "mla_up_proj"]))
    word = common.PRECISION_WORD.get(launch.precision)
    if word in ("bf16", "fp8"):
        args.append(flag("--bf16"))
    if word == "fp8":
        args.append(flag("--fp8-format", "hybrid"))
    if word == "fp16":
        args.append(flag("--fp16"))
    return args


def model_args(launch: Launch) -> list[str]:
    """The model's shape (launch.shape: the catalog's, else the one the plan was sized with). The
    rotary base is the checkpoint's (Megatron's default is 10,000)."""
    shape, spec = launch.shape, launch.spec
    args = [
        flag("--num-layers", shape.layers),
        flag("--hidden-size", shape.hidden),
        flag("--ffn-hidden-size", shape.ffn_hidden),
        flag("--num-attention-heads", shape.heads),
        flag("--max-position-embeddings", max(launch.seq_len, spec.max_context if spec else launch.seq_len)),
    ]
    if shape.kv_heads != shape.heads and not shape.mla:
        args += [flag("--group-query-attention"), flag("--num-query-groups", shape.kv_heads)]
    if shape.head_dim * shape.heads != shape.hidden and not shape.mla:
        args.append(flag("--kv-channels", shape.head_dim))
    if shape.gated:
        args.append(flag("--swiglu"))
    args.append(flag("--normalization", "RMSNorm" if shape.norm == "rms" else "LayerNorm"))
    if shape.learned_positions > 0:
        args.append(flag("--position-embedding-type", "learned_absolute"))
    else:
        args += [flag("--position-embedding-type", "rope"), flag("--rotary-base", "$ROPE_THETA")]
    if not shape.tied:
        args.append(flag("--untie-embeddings-and-output-weights"))
    if not shape.linear_bias:
        args.append(flag("--disable-bias-linear"))
    if shape.qkv_bias:
        args.append(flag("--add-qkv-bias"))
    if shape.qk_norm:
        args.append(flag("--qk-layernorm"))
    return args + _moe_args(launch) + _mla_args(launch)


def _moe_args(launch: Launch) -> list[str]:
    shape = launch.shape
    if shape.experts <= 1:
        return []
    args = [
        flag("--num-experts", shape.experts),
        flag("--moe-router-topk", shape.experts_per_token),
        flag("--moe-ffn-hidden-size", shape.moe_ffn_hidden),
        flag("--moe-grouped-gemm"),
        *_dispatch_args(launch),
        flag("--moe-aux-loss-coeff", "$MOE_AUX_LOSS_COEFF"),
    ]
    if shape.expert_groups > 1:  # node-limited routing, as the checkpoint's config.json routes
        args += [
            flag("--moe-router-num-groups", shape.expert_groups),
            flag("--moe-router-group-topk", shape.groups_per_token),
        ]
    if shape.shared_experts:
        args.append(flag("--moe-shared-expert-intermediate-size", shape.shared_experts * shape.moe_ffn_hidden))
    if shape.dense_layers:
        dense, moe = shape.dense_layers, shape.layers - shape.dense_layers
        args.append(flag("--moe-layer-freq", f"([0]*{dense}+[1]*{moe})"))
    return args


def _dispatch_args(launch: Launch) -> list[str]:
    """The token dispatcher the plan's time assumes: DeepEP (the flex dispatcher) when an expert
    group spans nodes, sending a token once per node (network.expert_fabric_share); one
    micro-batch's all-to-all beside another's compute when the layout allows it
    (network.paired_micro_batch_share: combined 1F1B)."""
    if launch.ep <= 1:
        return [flag("--moe-token-dispatcher-type", "alltoall")]
    fabric = catalog().fabrics.get(launch.fabric or "")
    deepep = launch.tp * launch.ep > launch.per_node and (fabric is None or fabric.rdma)
    args = (
        [flag("--moe-token-dispatcher-type", "flex"), flag("--moe-flex-dispatcher-backend", "deepep")]
        if deepep
        else [flag("--moe-token-dispatcher-type", "alltoall")]
    )
    ckpt, sixteen_bit = CKPT_CODE.get(launch.ckpt, 0), launch.precision != "fp32"
    layout = (launch.ep, launch.pp, launch.vpp, launch.grad_accum, ckpt)
    if network.paired_micro_batch_share(*layout, sixteen_bit, launch.ep_overlap) > 0:
        args.append(flag("--overlap-moe-expert-parallel-comm"))
    return args


def _mla_args(launch: Launch) -> list[str]:
    mla = launch.shape.mla
    if not mla:
        return []
    args = [flag("--multi-latent-attention"), flag("--kv-lora-rank", mla.kv_lora_rank)]
    if mla.q_lora_rank:
        args.append(flag("--q-lora-rank", mla.q_lora_rank))
    return args + [
        flag("--qk-head-dim", mla.qk_nope_head_dim),
        flag("--qk-pos-emb-head-dim", mla.qk_rope_head_dim),
        flag("--v-head-dim", mla.v_head_dim),
    ]


def run_args(launch: Launch) -> list[str]:
    args = [
        flag("--train-iters", launch.train_steps),
        flag("--save-interval", launch.save_every_steps or launch.train_steps),  # no interval: at the end
        flag("--eval-iters", 0),
        flag("--lr", "$LR"),
        flag("--data-path", "$DATA_PATH"),
        flag("--tokenizer-type", "HuggingFaceTokenizer"),
        flag("--tokenizer-model", launch.hf_id or "$TOKENIZER"),
        flag("--save", "$CHECKPOINT_DIR"),
        flag("--load", "$CHECKPOINT_DIR"),
        flag("--log-interval", 10),
    ]
    if launch.method != "pretrain":  # fine-tuning and continued pretraining start from the model's weights
        args.append(flag("--pretrained-checkpoint", "$PRETRAINED_CHECKPOINT"))
    return args


def variables(launch: Launch, words: Words) -> list[tuple[str, str, str]]:
    """The script's placeholders: paths, the learning rate and the checkpoint facts the catalog lacks."""
    out = [
        *common.rendezvous(launch, words, node_rank=False),  # torchrun's c10d rendezvous numbers the nodes
        ("MEGATRON_DIR", f"/{CHANGE_ME}/Megatron-LM", words("megatron_dir")),
        ("DATA_PATH", f"/{CHANGE_ME}/dataset_text_document", words("data_path")),
        ("CHECKPOINT_DIR", f"/{CHANGE_ME}/checkpoints", words("checkpoint_dir")),
        ("LR", CHANGE_ME, words("learning_rate")),
    ]
    if launch.method != "pretrain":
        out.append(("PRETRAINED_CHECKPOINT", f"/{CHANGE_ME}/megatron-checkpoint", words("pretrained_checkpoint")))
    if not launch.hf_id:
        out.append(("TOKENIZER", f"{CHANGE_ME}/tokenizer", words("megatron_tokenizer", model=launch.model_name)))
    if not launch.shape.learned_positions:
        out.append(("ROPE_THETA", CHANGE_ME, words("rope_theta")))
    if launch.shape.experts > 1:
        out.append(("MOE_AUX_LOSS_COEFF", CHANGE_ME, words("moe_aux_loss")))
    return out


def files(launch: Launch, words: Words) -> dict[str, str]:
    check(launch)
    extra = [words("header_run_all_rdzv")] if launch.nodes > 1 else []
    extra += common.fabric_note(launch, words)
    # the shape's source: the catalog's published config, a Hub repo's config.json, or the plan's own
    model = "megatron_model" if launch.spec else "megatron_model_hub" if launch.hf_id else "megatron_model_generic"
    extra.append(words(model, model=launch.model_name))
    script = Script(common.header(launch, words, *extra))
    script.variables = variables(launch, words)
    script.exports = common.nccl_exports(launch, words)
    if launch.zero < 2 and (launch.tp > 1 or launch.cp > 1):  # overlaps TP/CP communication; FSDP forbids it
        script.exports.append(("CUDA_DEVICE_MAX_CONNECTIONS", "1", words("max_connections")))
    command = [
        "torchrun",
        *common.torchrun_flags(launch),
        '"$MEGATRON_DIR/pretrain_gpt.py"',
        *parallel_args(launch),
        *batch_args(launch),
        *model_args(launch),
        *run_args(launch),
    ]
    script.commands = [command]
    return {"pretrain_megatron.sh": script.text()}
