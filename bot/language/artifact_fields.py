"""Turn what artifacts.py read from pasted artifacts into Request fields, each with a note
saying which words it came from ("--nproc_per_node 8 --nnodes 2 → 16 GPUs on 2 nodes").

Tools spell one thing several ways and split it over several flags (GPUs per node times nodes,
micro-batch times accumulation times GPUs); this module puts those together. The prose of the
question still wins over anything here (parser.py merges them).
"""

from __future__ import annotations

import re
from typing import Any

from gpuplan.bot.language.artifacts import Artifacts
from gpuplan.bot.language.catalog_names import named_here
from gpuplan.bot.language.extract import Reader
from gpuplan.bot.language.methods import precision_for
from gpuplan.bot.language.repo_ids import looks_like_repo_id
from gpuplan.estimator.schema import Note
from gpuplan.knowledge import Catalog

SERVING_LAUNCHERS = ("vllm", "sglang", "lmdeploy", "tgi")
ADAPTER_METHODS = ("lora", "qlora")


class Collected:
    """The fields read so far and the notes that say where each came from."""

    def __init__(self, found: Artifacts):
        self.found = found
        self.fields: dict[str, Any] = {}
        self.read: list[Note] = []

    def value(self, name: str) -> Any:
        reading = self.found.first(name)
        return reading.value if reading else None

    def words(self, *names: str) -> str:
        return " ".join(r.words for name in names if (r := self.found.first(name)))

    def put(self, field: str, value: Any, words: str) -> None:
        if field in self.fields or value is None:
            return
        self.fields[field] = value
        self.read.append(Note(code="read_setting", params={"words": words[:120], "field": field, "value": value}))


def to_request(found: Artifacts, reader: Reader, cat: Catalog, method: str | None) -> tuple[dict[str, Any], list[Note]]:
    """(Request fields, `read` notes) from the artifacts of one message."""
    if not (found.readings or found.launchers or found.smi_gpus or found.oom or any(reader.code_names.values())):
        return {}, []
    got = Collected(found)
    method = method or _method(got) or _script_method(got, reader)
    _counts(got, found, reader)
    _hardware(got, reader, cat)
    _model(got, reader, cat)
    _training(got, method)
    _data_parallel_only(got, method)
    _serving(got, method)
    for field, reading in (("seq_len", "seq_len"), ("epochs", "epochs"), ("optimizer", "optimizer")):
        got.put(field, got.value(reading), got.words(reading))
    prompt, response = got.value("prompt_len"), got.value("response_len")
    if prompt or response:  # a total written wins; else a rollout holds its prompt and its response
        got.put("seq_len", int((prompt or 0) + (response or 0)), got.words("prompt_len", "response_len"))
    _notes_only(got)
    return got.fields, got.read


def _method(got: Collected) -> str | None:
    """The method a config or command states: an adapter flag, 4-bit loading, a stage, a server."""
    named = [r.value for r in got.found.readings if r.field == "method"]
    specific = next((m for m in named if m != "finetune"), None)
    adapter = got.value("adapter") or specific in ADAPTER_METHODS
    four_bit = got.value("quant_bits") == 4 or bool(got.value("load_in_4bit"))
    serving = any(tool in SERVING_LAUNCHERS for tool in got.found.launchers) or got.value("max_num_seqs")
    if specific and specific not in ADAPTER_METHODS:
        method = specific
    elif adapter and serving and not specific:
        method = "infer"  # "vllm serve X --enable-lora --lora-modules ...": adapters served, not trained
    elif adapter:
        method = "qlora" if four_bit or specific == "qlora" else "lora"
    elif "finetune" in named:
        method = "full"
    elif serving:
        method = "infer"
    else:
        return None
    got.put(
        "method", method, got.words("method", "adapter", "quant_bits", "load_in_4bit") or " ".join(got.found.launchers)
    )
    return method


def _script_method(got: Collected, reader: Reader) -> str | None:
    """The method in the name of the script or config pasted ("train_ppo.sh"), when one is named."""
    named = reader.code_names.get("method", [])
    specific = [m for m in named if m != "full"]
    method = specific[0] if len(set(specific)) == 1 else ("full" if named == ["full"] else None)
    if method:
        got.put("method", method, reader.code_names["script"][0])
    return method


def _counts(got: Collected, found: Artifacts, reader: Reader) -> None:
    """GPUs and nodes: a total (num_processes), or per node (nproc_per_node, CUDA_VISIBLE_DEVICES)
    times nodes, or one row per GPU of an nvidia-smi table."""
    nodes = got.value("nodes")
    total = got.value("gpus_total")
    per_node = got.value("gpus_per_node") or got.value("visible_devices") or got.value("include")
    words = got.words("gpus_total", "gpus_per_node", "visible_devices", "include", "nodes")
    if total is None and per_node:
        total = per_node * (nodes or 1)
    if total is None and found.smi_gpus:
        total, words = len(found.smi_gpus), "nvidia-smi"
    instance = reader.code_names.get("instance")
    if total is None and instance:
        total, words = instance[0][1], instance[0][0]
    labelled = reader.code_names.get("gpu_count")
    if total is None and labelled:  # "GPU: 1x3090" in an environment list
        _, total, words = labelled[0]
    serving = any(tool in SERVING_LAUNCHERS for tool in found.launchers)
    if total is None and (got.value("tp") or got.value("pp") or (serving and got.value("dp"))):
        # a server's GPUs: tensor x pipeline, times its data-parallel replicas (a server's flag
        # only; SGLang's data-parallel attention ranks live inside its --tp-size GPUs)
        replicas = (got.value("dp") or 1) if serving and not got.value("dp_attention") else 1
        total = (got.value("tp") or 1) * (got.value("pp") or 1) * replicas
        words = got.words("tp", "pp", "dp") or " ".join(found.launchers)
    if total and 0 < total <= 200_000:
        got.put("gpus", int(total), words)
    if nodes and 0 < nodes <= 20_000:
        got.put("nodes", int(nodes), got.words("nodes"))


def _hardware(got: Collected, reader: Reader, cat: Catalog) -> None:
    """The GPU type: a name in an nvidia-smi table or a log, else the capacity an OOM message states."""
    found = got.found
    names = reader.code_names.get("gpu", []) + [gpu for gpu, _ in reader.code_names.get("instance", [])]
    smi = next((g for g in (_smi_gpu(name, memory, cat) for name, memory in found.smi_gpus) if g), None)
    if smi or names:
        written = reader.code_names.get("gpu_written") or names  # a card's name as pasted, else an instance
        got.put("gpu", smi or names[0], "nvidia-smi" if smi else written[0])
        return
    memory = found.smi_gpus[0][1] if found.smi_gpus else None
    if found.oom and found.oom.capacity_gib:
        memory = found.oom.capacity_gib
    if memory and 4 <= memory <= 512:
        got.put("gpu_memory_gib", round(memory, 2), found.oom.words[:80] if found.oom else "nvidia-smi")


def _smi_gpu(name: str, memory: float | None, cat: Catalog) -> str | None:
    """A catalog GPU for an nvidia-smi name ("NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-32GB")."""
    gpu = cat.find_gpu(name) or cat.find_gpu(re.sub(r"(?i)-?(sxm\d?|pcie|hbm3e?)", " ", name))
    if gpu is None and memory:
        gpu = cat.find_gpu(f"{name} {round(memory / 8) * 8}g")
    return gpu.id if gpu else None


def _model(got: Collected, reader: Reader, cat: Catalog) -> None:
    """The model a path or id names (`--model_name_or_path /data/Baichuan2-13B-Chat`), else one
    named anywhere in the artifacts; an unknown Hugging Face id is handed on for a look-up."""
    reading = got.found.first("model")
    if reading:
        path = str(reading.value).rstrip("/")
        for candidate in (path, *reversed(path.split("/"))):
            spec = cat.find_model(candidate)
            found_id = spec.id if spec else _alias_in(candidate, reader)
            if found_id:
                got.put("model", found_id, reading.words)
                return
        parts = [p for p in path.split("/") if p]
        if len(parts) >= 2:
            repo = "/".join(parts[-2:])
            if looks_like_repo_id(repo):
                got.fields.setdefault("hub_id", repo)
    names = reader.code_names.get("model", [])
    if names:
        got.put("model", names[0], names[0])
        return
    size = re.search(r"(?<![\d.])(\d+(?:\.\d+)?)\s*[bB](?![a-zA-Z])", str(reading.value)) if reading else None
    if size:
        got.put("params_b", float(size.group(1)), reading.words)


def _alias_in(text: str, reader: Reader) -> str | None:
    lowered = text.lower()
    match = reader.voc.model_alias.search(lowered)
    return named_here(match, reader.cat) if match else None


def _training(got: Collected, method: str | None) -> None:
    if method == "infer":
        return
    micro = got.value("micro_batch")
    got.put("micro_batch", micro, got.words("micro_batch"))
    accum = got.value("grad_accum")
    global_batch = got.value("global_batch")
    gpus = got.fields.get("gpus")
    if global_batch is None and micro and accum and gpus:
        global_batch = micro * accum * gpus
    got.put("global_batch", global_batch, got.words("global_batch", "micro_batch", "grad_accum"))
    got.put("lora_rank", got.value("lora_rank"), got.words("lora_rank"))
    got.put("ckpt", got.value("ckpt"), got.words("ckpt"))
    zero = got.value("zero")
    if zero is None:
        zero = next((int(v) for name in ("zero_config", "fsdp") if (v := got.value(name)) is not None), None)
    if zero is None and got.value("distributed_optimizer"):
        zero = 1  # Megatron's distributed optimizer shards the optimizer state: ZeRO-1
    if zero is not None and 0 <= int(zero) <= 3:
        got.put("zero", int(zero), got.words("zero", "zero_config", "fsdp", "distributed_optimizer"))
    offload = got.value("offload_param") if got.value("offload_param") not in (None, "none") else got.value("offload")
    got.put("offload", offload, got.words("offload", "offload_param"))
    got.put("precision", _training_precision(got), got.words("bf16", "fp16", "precision"))
    for field in ("tp", "pp", "ep", "cp"):
        got.put(field, got.value(field), got.words(field))


def _data_parallel_only(got: Collected, method: str | None) -> None:
    """A pasted training stack that runs data parallel only (artifacts.read_data_parallel_stack):
    tensor and pipeline parallel 1, read from the paste (a reading, not a setting) and said once."""
    stack = got.found.data_parallel
    if method == "infer" or stack is None or "tp" in got.fields or "pp" in got.fields:
        return
    got.fields["tp"], got.fields["pp"] = 1, 1
    got.read.append(Note(code="data_parallel_stack", params={"stack": stack[0], "sharding": stack[1]}))


def _training_precision(got: Collected) -> str | None:
    if got.value("bf16"):
        return "bf16-mixed"
    if got.value("fp16"):
        return "fp16-mixed"
    word = got.value("precision")
    return precision_for(word, "full") if word else None


def _serving(got: Collected, method: str | None) -> None:
    if method != "infer":
        return
    seqs, ranks = got.value("max_num_seqs"), got.value("dp")
    if seqs and ranks and got.value("expert_parallel_serving") and (got.value("tp") or 1) == 1:
        seqs *= ranks  # vLLM schedules each data-parallel attention rank on its own
    got.put("micro_batch", seqs, got.words("max_num_seqs", "dp"))
    _serving_parallel(got)
    got.put("pp", got.value("pp"), got.words("pp"))
    precision = got.value("quantization") or got.value("precision")
    if precision in ("bf16", "fp16", "fp8", "int8", "int4"):
        got.put("precision", precision, got.words("quantization", "precision"))


def _serving_parallel(got: Collected) -> None:
    """Tensor and expert parallelism of a server: SGLang's data-parallel attention splits its
    --tp-size GPUs into --dp-size attention ranks (experts over --ep-size); vLLM's
    --enable-expert-parallel splits the experts over data x tensor parallel ranks."""
    tp, dp = got.value("tp"), got.value("dp")
    # gpuplan plans expert parallelism with purely data-parallel attention (tp = 1): a server split
    # both ways keeps its tensor parallelism, and the answer notes the expert flag as read
    if got.value("dp_attention") and tp and dp == tp:
        got.put("tp", 1, got.words("tp", "dp", "dp_attention"))
        got.put("ep", got.value("ep") or tp, got.words("ep", "dp_attention"))
        return
    got.put("tp", tp, got.words("tp"))
    if got.value("expert_parallel_serving") and (tp or 1) == 1 and dp:
        got.put("ep", dp, got.words("dp", "expert_parallel_serving"))


def _notes_only(got: Collected) -> None:
    """The KV cache's element type (`--kv-cache-dtype fp8`, lmdeploy's `--quant-policy 8`), and the
    settings gpuplan reads but does not plan with, said back so the user knows they were seen."""
    noted = ["gpu_memory_utilization", "dataloader_workers"]
    kv = got.value("kv_cache_dtype")
    if kv in ("fp8", "int8", "int4"):
        got.put("kv_cache", kv, got.words("kv_cache_dtype"))
    else:
        noted.append("kv_cache_dtype")  # "auto": the model's own type
    for name in noted:
        reading = got.found.first(name)
        if reading:
            got.read.append(Note(code="read_noted", params={"words": reading.words[:120], "field": name}))
