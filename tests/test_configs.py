"""Config exporters (bot/configs/): golden files, the tools' own parsers, and the round trip
(pasting the files back into gpuplan reads the same layout)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest
from config_files import OPTIONS, flags, names, script_commands, without_comments
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gpuplan.bot.configs import FORMATS, ConfigError, export, formats_for
from gpuplan.bot.configs.launch import Launch, launch_from
from gpuplan.bot.language.parser import read
from gpuplan.bot.pipeline import answer

GOLDEN = Path(__file__).resolve().parent / "golden" / "configs"

# One plan per kind the issue names: LoRA, QLoRA, full fine-tune with ZeRO-3 and CPU offload,
# multi-node pretraining with TP + PP (and EP for a MoE model), two serving plans; plus a
# two-node Ethernet job and a Chinese question (comments in Chinese).
CASES = {
    "lora_4090": "llama-3.1-8b lora gpu=rtx-4090 gpus=1",
    "qlora_a100": "qwen2.5-72b qlora gpu=a100-80gb gpus=1",
    "full_zero3_offload": "llama-3.1-70b full gpus=8 gpu=a100-80gb zero=3 offload=cpu tp=1",
    "pretrain_tp_pp": "pretrain llama-3.1-70b tokens=1T gpus=64 gpu=h100 tp=8 pp=2 fabric=ib-ndr400",
    "pretrain_moe_ep": "pretrain mixtral-8x7b tokens=500B gpus=64 gpu=h100 tp=2 pp=2 ep=4 fabric=roce-400",
    "serve_fp8_tp2": "llama-3.1-70b infer gpu=h100 gpus=2 precision=fp8",
    "serve_replicas": "qwen2.5-14b infer gpus=4 tp=2 gpu=l40s",
    "serve_moe_expert_parallel": "deepseek-v2 infer gpu=h800 gpus=8 mbs=1024 precision=fp8",
    "full_two_nodes_ethernet": "qwen2.5-7b full gpus=16 gpu=a100-80gb fabric=eth-100 tp=1",
    "lora_zh": "用 4 张 A100 80G 对 qwen2.5-14b 做 lora 微调",
}
EXPECTED_FORMATS = {
    "lora_4090": ["deepspeed", "torchrun", "llamafactory"],
    "qlora_a100": ["deepspeed", "torchrun", "llamafactory"],
    "full_zero3_offload": ["deepspeed", "torchrun", "llamafactory", "megatron"],
    "pretrain_tp_pp": ["torchrun", "megatron"],
    "pretrain_moe_ep": ["torchrun", "megatron"],
    "serve_fp8_tp2": ["vllm", "sglang"],
    "serve_replicas": ["vllm", "sglang"],
    "serve_moe_expert_parallel": ["vllm", "sglang"],
    "full_two_nodes_ethernet": ["deepspeed", "fsdp", "torchrun", "llamafactory", "megatron"],
    "lora_zh": ["deepspeed", "fsdp", "torchrun", "llamafactory"],
}


@pytest.fixture(scope="module")
def plans():
    return {case: answer(question) for case, question in CASES.items()}


def _exports(plans):
    for case, plan in plans.items():
        for fmt in formats_for(plan):
            yield case, fmt, plan, export(plan, fmt)


# --- golden files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(CASES))
def test_formats_offered_per_plan(plans, case):
    assert formats_for(plans[case]) == EXPECTED_FORMATS[case]


@pytest.mark.parametrize("case", sorted(CASES))
def test_exported_files_match_the_golden_files(plans, case):
    plan = plans[case]
    for fmt in formats_for(plan):
        folder = GOLDEN / case / fmt
        files = export(plan, fmt)
        if os.environ.get("UPDATE_GOLDEN"):
            folder.mkdir(parents=True, exist_ok=True)
            for old in folder.iterdir():
                old.unlink()
            for name, text in files.items():
                (folder / name).write_text(text, encoding="utf-8")
        stored = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())}
        assert files == stored, f"{case}/{fmt} changed; UPDATE_GOLDEN=1 re-records it if meant"


def test_chinese_question_gets_chinese_comments(plans):
    text = export(plans["lora_zh"], "llamafactory")["llamafactory_train.yaml"]
    assert "方案" in text and "plan" not in text.split("\n", 1)[1].lower().replace("gpuplan", "")


# --- what the exporters refuse ------------------------------------------------------------------


def test_a_serving_format_for_a_training_plan_names_the_formats_that_fit(plans):
    with pytest.raises(ConfigError) as err:
        export(plans["lora_4090"], "vllm")
    assert err.value.code == "config_serving_only"
    assert err.value.params["suggest"] == "deepspeed, torchrun, llamafactory"


def test_model_parallel_layouts_are_not_written_as_deepspeed_or_fsdp(plans):
    for fmt in ("deepspeed", "fsdp", "llamafactory"):
        with pytest.raises(ConfigError) as err:
            export(plans["pretrain_tp_pp"], fmt)
        assert err.value.code == "config_needs_megatron"
        assert "megatron" in err.value.params["suggest"]


def test_unknown_format_and_no_plan():
    with pytest.raises(ConfigError) as err:
        export(answer("70b full"), "slurm")
    assert err.value.code == "config_unknown_format"
    with pytest.raises(ConfigError) as err:
        export(answer("how many GPUs do I need?"), "deepspeed")
    assert err.value.code == "config_no_plan"


# --- the tools' own parsers -------------------------------------------------------------------------


def _ds_config(monkeypatch, config: dict, dp: int):
    """DeepSpeed's config class, as its engine builds it for `dp` data-parallel ranks."""
    ds_config = pytest.importorskip("deepspeed.runtime.config")

    class DataParallel:
        def get_data_parallel_world_size(self):
            return dp

    monkeypatch.setattr(ds_config.dist, "get_rank", lambda *a, **k: 0)
    return ds_config.DeepSpeedConfig(config, mpu=DataParallel())


def test_deepspeed_reads_its_config_and_launch_line(plans, monkeypatch):
    import json

    runner = pytest.importorskip("deepspeed.launcher.runner")
    checked = 0
    for case, fmt, plan, files in _exports(plans):
        if fmt not in ("deepspeed", "llamafactory") or launch_from(plan).zero == 0 and fmt == "llamafactory":
            continue
        launch = launch_from(plan)
        name = next(n for n in files if n.endswith(".json"))
        ds = _ds_config(monkeypatch, json.loads(files[name]), launch.dp)
        assert ds.zero_optimization_stage == launch.zero, case
        assert ds.train_micro_batch_size_per_gpu == launch.micro_batch
        assert ds.train_batch_size == launch.global_batch
        assert ds.zero_config.offload_optimizer is not None or launch.offload == "none"
        if fmt == "deepspeed":
            (command,) = script_commands(files["launch_deepspeed.sh"])
            args = runner.parse_args(command[1:])
            assert (args.num_nodes, args.num_gpus) == (launch.nodes, launch.per_node)
        checked += 1
    assert checked >= 6


def test_accelerate_reads_its_fsdp_config_and_launch_line(plans, tmp_path):
    config_args = pytest.importorskip("accelerate.commands.config.config_args")
    launch_cmd = pytest.importorskip("accelerate.commands.launch")
    parser = launch_cmd.launch_command_parser()
    options = {o for action in parser._actions for o in action.option_strings}
    checked = 0
    for case, fmt, plan, files in _exports(plans):
        if fmt != "fsdp":
            continue
        launch = launch_from(plan)
        path = tmp_path / f"{case}.yaml"
        path.write_text(files["accelerate_fsdp.yaml"], encoding="utf-8")
        cluster = config_args.ClusterConfig.from_yaml_file(path)
        assert (cluster.num_processes, cluster.num_machines) == (launch.gpus, launch.nodes), case
        assert str(cluster.distributed_type) in ("FSDP", "DistributedType.FSDP")
        for key in cluster.fsdp_config:
            assert f"--{key}" in options, f"accelerate launch has no --{key}"
        (command,) = script_commands(files["launch_accelerate.sh"])
        args = parser.parse_args(command[2:])  # after "accelerate launch"
        assert args.config_file == "accelerate_fsdp.yaml"
        checked += 1
    assert checked >= 2


def test_torchrun_reads_every_torchrun_line(plans):
    run = pytest.importorskip("torch.distributed.run")
    checked = 0
    for case, _fmt, plan, files in _exports(plans):
        for name, text in files.items():
            if not name.endswith(".sh"):
                continue
            for command in script_commands(text):
                if command[0] != "torchrun":
                    continue
                args = run.get_args_parser().parse_args(command[1:])
                nodes = 1 if args.standalone else int(args.nnodes)
                assert nodes * int(args.nproc_per_node) == plan.estimate.resolved.gpus, case
                checked += 1
    assert checked >= 8


def _tool_flags(files: dict[str, str], program: str) -> list[str]:
    """The flags of every command that runs `program` (anywhere in its argv: pretrain_gpt.py
    comes after torchrun's own flags)."""
    out = []
    for name, text in files.items():
        if name.endswith(".sh"):
            for command in script_commands(text):
                if any(program in word for word in command):
                    out += flags(command)
    assert out, f"no command runs {program}"
    return out


# The versions the lists were taken from (tests/data/tool_options/README.md says how): the test
# fails when a list is regenerated from another version without this table following it
LISTED_VERSIONS = {
    "vllm_serve.txt": "4ba787ec9",  # vLLM 0.33.0
    "sglang_server.txt": "v0.5.23",
    "megatron_pretrain.txt": "d98e8a64ddf34856e74b24714e3bedb2f5a39553",  # NVIDIA/Megatron-LM, 2026-08-22
    "llamafactory_train.txt": "ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30",  # hiyouga/LLaMA-Factory, 2026-08-18
    "llamafactory_templates.txt": "ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30",
    "hf_training_args.txt": "v5.8.0",  # transformers, the newest LLaMA-Factory's pin allows
    "liger_model_types.txt": "ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c",  # linkedin/Liger-Kernel 0.8.2
}


@pytest.mark.parametrize("option_file, version", sorted(LISTED_VERSIONS.items()))
def test_option_lists_name_the_version_they_were_taken_from(option_file, version):
    header = [line for line in (OPTIONS / option_file).read_text().splitlines() if line.startswith("#")]
    assert any(version in line for line in header[:6]), header[:6]


@pytest.mark.parametrize(
    "fmt, program, option_file",
    [
        ("vllm", "vllm", "vllm_serve.txt"),
        ("sglang", "sglang.launch_server", "sglang_server.txt"),
        ("megatron", "pretrain_gpt.py", "megatron_pretrain.txt"),
    ],
)
def test_engine_flags_are_ones_the_tool_defines(plans, fmt, program, option_file):
    """vLLM 0.33, SGLang 0.5.23 and Megatron-LM do not install on a CPU machine in CI's time: their
    flags are checked against lists taken from their source (versions in LISTED_VERSIONS)."""
    accepted = names(option_file) | {"--standalone", "--nnodes", "--nproc_per_node"}
    accepted |= {"--rdzv_backend", "--rdzv_endpoint", "--rdzv_id"}  # torchrun's, before pretrain_gpt.py
    seen = 0
    for _case, got_fmt, _plan, files in _exports(plans):
        if got_fmt == fmt:
            used = _tool_flags(files, program)
            assert set(used) <= accepted, sorted(set(used) - accepted)
            seen += 1
    assert seen >= 2


def test_megatron_fsdp_and_tensor_parallel_settings_pass_its_argument_checks(plans):
    """arguments.py: Megatron-FSDP needs --ckpt-format fsdp_dtensor and forbids
    CUDA_DEVICE_MAX_CONNECTIONS=1; tensor or context parallelism without it needs that setting."""
    seen = 0
    for case, fmt, plan, files in _exports(plans):
        if fmt != "megatron":
            continue
        text = files["pretrain_megatron.sh"]
        launch = launch_from(plan)
        fsdp = "--use-megatron-fsdp" in text
        assert fsdp == (launch.zero >= 2), case
        assert ("--ckpt-format fsdp_dtensor" in text) == fsdp
        one_queue = 'CUDA_DEVICE_MAX_CONNECTIONS="${CUDA_DEVICE_MAX_CONNECTIONS:-1}"' in text
        assert one_queue == (not fsdp and (launch.tp > 1 or launch.cp > 1)), case
        seen += 1
    assert seen >= 3


@pytest.mark.parametrize(
    "question, untied",
    [
        ("pretrain 1b tokens=20B gpus=8 gpu=h100 tp=2", False),  # a bare 1B ties, as Llama 3.2 1B
        ("预训练 3b tokens=60B gpus=8 gpu=h100 tp=2", False),
        ("pretrain 70b tokens=1T gpus=64 gpu=h100 tp=8 pp=2", True),
        ("pretrain llama-3.2-1b tokens=20B gpus=8 gpu=h100 tp=2", False),
        ("pretrain llama-3.1-8b tokens=20B gpus=8 gpu=h100 tp=2", True),
    ],
)
def test_megatron_unties_the_output_layer_of_the_shape_planned(question, untied):
    """A bare size below 5B is planned with its output layer tied to the embedding: the Megatron
    script must not untie it (it had, for every size without a catalog entry)."""
    text = export(answer(question), "megatron")["pretrain_megatron.sh"]
    assert ("--untie-embeddings-and-output-weights" in text) == untied


@pytest.mark.parametrize(
    "question, experts",
    [
        ("a 200b moe model with 20b active, pretrain on 256 H100", 120),  # a generic MoE: its experts
        ("预训练 200B MoE 模型（激活 20B），用 256 张 H100", 120),
        ("pretrain mixtral-8x7b tokens=1T gpus=64 gpu=h100 ep=8", 8),  # a catalog MoE, as before
        ("pretrain 70b tokens=1T gpus=64 gpu=h100 tp=8 pp=2", None),
    ],
)
def test_megatron_writes_the_experts_of_the_shape_planned(question, experts):
    """A mixture of experts the catalog lacks is written with the experts it was planned with (its
    script had set expert parallelism on a dense model, which Megatron refuses)."""
    text = export(answer(question), "megatron")["pretrain_megatron.sh"]
    as_planned = f"--num-experts {experts} " in text if experts else "--num-experts" not in text
    assert as_planned, text
    assert ("MOE_AUX_LOSS_COEFF=" in text) == bool(experts)


def test_trainer_arguments_are_hugging_face_training_arguments(plans):
    """What the DeepSpeed and Accelerate scripts pass after the training script is TrainingArguments'."""
    accepted = {f"--{name}" for name in names("hf_training_args.txt")} | {"--deepspeed"}
    seen = 0
    for _case, fmt, _plan, files in _exports(plans):
        if fmt not in ("deepspeed", "fsdp"):
            continue
        script = next(text for name, text in files.items() if name.endswith(".sh"))
        (command,) = script_commands(script)
        after = command[command.index(f"{'CHANGE_ME'}_train.py") + 1 :]
        assert set(flags(after)) <= accepted, sorted(set(flags(after)) - accepted)
        seen += 1
    assert seen >= 4


def test_llamafactory_values_have_the_types_it_parses(plans):
    yaml = pytest.importorskip("yaml")
    for _case, fmt, _plan, files in _exports(plans):
        if fmt == "llamafactory":
            config = yaml.safe_load(files["llamafactory_train.yaml"])
            assert isinstance(config["learning_rate"], float) and isinstance(config["cutoff_len"], int)
            assert isinstance(config["per_device_train_batch_size"], int) and isinstance(config["max_steps"], int)
            assert isinstance(config.get("bf16", True), bool)


def test_llamafactory_keys_and_template_are_ones_it_defines(plans):
    yaml = pytest.importorskip("yaml")
    accepted = names("llamafactory_train.txt") | names("hf_training_args.txt")
    templates = names("llamafactory_templates.txt")
    seen = 0
    for _case, fmt, _plan, files in _exports(plans):
        if fmt == "llamafactory":
            config = yaml.safe_load(files["llamafactory_train.yaml"])
            assert set(config) <= accepted, sorted(set(config) - accepted)
            assert config["template"] in templates or config["template"].startswith("CHANGE_ME")
            seen += 1
    assert seen >= 4


def test_every_template_and_layer_class_in_the_knowledge_is_real():
    """knowledge/exports.yaml names only templates LLaMA-Factory registers."""
    import yaml

    data = yaml.safe_load((Path(__file__).resolve().parents[1] / "knowledge" / "exports.yaml").read_text())
    templates = names("llamafactory_templates.txt")
    assert {e["template"] for e in data["llamafactory_templates"]} <= templates
    assert {e["model_type"] for e in data["liger_kernels"]} <= names("liger_model_types.txt")


def _trainer_files(question: str, fmt: str) -> dict[str, str]:
    return export(answer(question, lang="en"), fmt)


def test_hugging_face_formats_switch_on_liger_where_it_has_kernels():
    """The plan counts a chunked loss; a Hugging Face trainer gets that from Liger's fused
    cross-entropy, so the files switch it on for a family Liger patches (Llama)."""
    deepspeed = _trainer_files("llama-3-8b full fine-tune on 8 A100 seq=4096", "deepspeed")
    assert "--use_liger_kernel" in flags(script_commands(deepspeed["launch_deepspeed.sh"])[0])
    assert "Liger's fused cross-entropy is switched on" in deepspeed["launch_deepspeed.sh"]
    fsdp = _trainer_files("llama-3-8b full fine-tune on 8 A100 seq=4096 zero=3", "fsdp")
    assert "--use_liger_kernel" in flags(script_commands(fsdp["launch_accelerate.sh"])[0])
    import yaml

    factory = _trainer_files("llama-3-8b lora on 2 A100", "llamafactory")
    assert yaml.safe_load(factory["llamafactory_train.yaml"])["enable_liger_kernel"] is True


def test_a_plan_that_counts_the_unchunked_loss_leaves_liger_off():
    """loss=unchunked: the plan already counts Transformers' own loss, so no Liger flag, and the
    header says the memory was planned that way."""
    for fmt, name in (("deepspeed", "launch_deepspeed.sh"), ("fsdp", "launch_accelerate.sh")):
        script = _trainer_files("llama-3-8b full fine-tune on 8 A100 seq=4096 zero=3 loss=unchunked", fmt)[name]
        assert "--use_liger_kernel" not in script
        assert "Transformers' own loss, as asked (loss=unchunked)" in script
    import yaml

    factory = _trainer_files("llama-3-8b lora on 2 A100 loss=unchunked", "llamafactory")
    assert "enable_liger_kernel" not in yaml.safe_load(factory["llamafactory_train.yaml"])


def test_a_family_liger_does_not_patch_is_told_the_memory_the_whole_logits_take():
    """DeepSeek-V2-Lite (deepseek_v2: no Liger kernels): no flag, and the header states what
    Transformers' unchunked fp32 loss adds: micro-batch x length x vocabulary x (12 - 3) bytes."""
    plan = answer(
        "deepseek-v2-lite full fine-tune on 8 A100 seq=4096 mbs=2 tp=1 pp=1 ep=1", lang="en"
    )  # DeepSpeed runs it
    files = export(plan, "deepspeed")
    script = files["launch_deepspeed.sh"]
    assert "--use_liger_kernel" not in script
    gib = 2 * 4096 * 102400 * (12 - 3) / 2**30  # DeepSeek-V2-Lite's vocabulary: 102,400
    assert f"about {gib:.1f} GiB more per GPU" in script
    import yaml

    factory = export(plan, "llamafactory")
    assert "enable_liger_kernel" not in yaml.safe_load(factory["llamafactory_train.yaml"])


# --- round trip ----------------------------------------------------------------------------------------

# What each format states, so pasting it back can read it: the training launchers carry the GPU
# layout and batch, the engines the replica and its budget
CARRIED = {
    "deepspeed": ("gpus", "zero", "offload", "micro_batch", "global_batch"),  # the script sets the length
    "fsdp": ("gpus", "zero", "offload", "micro_batch", "global_batch"),
    "torchrun": ("gpus",),
    "llamafactory": ("gpus", "zero", "offload", "micro_batch", "global_batch", "seq_len", "lora_rank"),
    "megatron": ("gpus", "tp", "pp", "ep", "cp", "zero", "offload", "micro_batch", "global_batch", "seq_len"),
    "vllm": ("gpus", "tp", "pp", "ep", "seq_len", "micro_batch", "method"),
    "sglang": ("gpus", "tp", "pp", "ep", "seq_len", "micro_batch", "method"),
}


def expected(launch: Launch, fmt: str) -> dict:
    """The layout the files state, as gpuplan's request fields."""
    zero = {1: 2}.get(launch.zero, launch.zero) if fmt == "fsdp" else launch.zero
    replica = launch.tp * launch.pp * launch.ep
    spans = launch.serving and launch.nodes > 1 and replica > launch.per_node
    # a replica over several nodes is one deployment of its nodes, repeated per replica; SGLang
    # runs one server per node for replicas that fit in a node
    per_node_server = fmt == "sglang" and launch.serving and launch.nodes > 1 and not spans
    one_replica = spans or (launch.serving and launch.ep > 1)  # an expert-parallel replica runs once per group
    gpus = replica if one_replica else launch.gpus // launch.nodes if per_node_server else launch.gpus
    return {
        "gpus": gpus,
        "nodes": -(-replica // launch.per_node) if spans else launch.nodes,
        "tp": launch.tp,
        "pp": launch.pp,
        "ep": launch.ep,
        "cp": launch.cp,
        "zero": zero,
        "offload": launch.offload,
        "micro_batch": _served_sequences(launch, fmt) if launch.serving else launch.micro_batch,
        "global_batch": launch.global_batch,
        "seq_len": launch.seq_len,
        "lora_rank": launch.lora_rank,
        "method": launch.method,
    }


def _served_sequences(launch: Launch, fmt: str) -> int | None:
    """The replica's sequences as the files state them: vLLM caps each of an expert-parallel
    replica's attention ranks, rounded up."""
    if fmt == "vllm" and launch.ep > 1 and launch.max_num_seqs:
        return -(-launch.max_num_seqs // launch.ep) * launch.ep
    return launch.max_num_seqs


def read_back(files: dict[str, str]) -> dict:
    """The request gpuplan reads from the files pasted back (without gpuplan's own comments)."""
    text = "\n".join(f"```\n{without_comments(t)}\n```" for t in files.values())
    parsed, _ = read(text)
    got = parsed.request.model_dump(exclude_none=True)
    defaults = {"nodes": 1, "tp": 1, "pp": 1, "ep": 1, "cp": 1, "zero": 0, "offload": "none"}
    return {**defaults, **got}


def server_scripts(files: dict[str, str]) -> list[str]:
    """Each engine server of a script on its own (its variables kept), as a user pastes one
    server's command: a disaggregated plan's files start a prefill and a decode server."""
    (text,) = files.values()
    blocks = text.split("\n\n")
    variables = [b for b in blocks if '="${' in b]
    servers = [b for b in blocks if "vllm serve" in b or "sglang.launch_server" in b]
    return ["\n\n".join([*variables, server]) for server in servers]


def assert_pools_round_trip(plan, fmt: str) -> None:
    """A disaggregated plan's servers read back one at a time: the prefill pool's GPUs (the
    replica's shape, no sequence cap), then the decode pool's (the replicas and their sequences),
    together the plan's GPU count."""
    launch = launch_from(plan)
    prefill, decode = (read_back({"server.sh": text}) for text in server_scripts(export(plan, fmt)))
    one_group = launch.ep > 1  # an expert-parallel pool is one group of ep GPUs, read as its replica
    want_prefill = launch.ep if one_group else launch.prefill_gpus
    want_decode = launch.ep if one_group else launch.gpus - launch.prefill_gpus
    assert (prefill["gpus"], decode["gpus"]) == (want_prefill, want_decode), fmt
    assert prefill["gpus"] + decode["gpus"] == launch.gpus, fmt
    want = expected(launch, fmt)
    for field in ("tp", "pp", "ep", "seq_len", "method"):
        assert prefill[field] == decode[field] == want[field], (fmt, field)
    assert "micro_batch" not in prefill and decode["micro_batch"] == want["micro_batch"], fmt


def assert_round_trip(plan, fmt: str) -> None:
    launch = launch_from(plan)
    if launch.disaggregated:
        assert_pools_round_trip(plan, fmt)
        return
    got, want = read_back(export(plan, fmt)), expected(launch, fmt)
    # a serving command states its nodes only when one replica spans them (else replicas per node)
    spans = launch.nodes > 1 and (not launch.serving or launch.tp * launch.pp > launch.per_node)
    fields = CARRIED[fmt] + (("nodes",) if spans else ())
    if fmt == "llamafactory" and not launch.adapters:
        fields = tuple(f for f in fields if f != "lora_rank")
    mismatched = {f: (got.get(f), want[f]) for f in fields if got.get(f) != want[f]}
    assert not mismatched, f"{fmt}: read back (got, planned) {mismatched}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_round_trip_of_every_golden_plan(plans, case):
    for fmt in formats_for(plans[case]):
        assert_round_trip(plans[case], fmt)


MODELS = ["llama-3.1-8b", "qwen2.5-14b", "llama-3.1-70b", "mixtral-8x7b", "qwen3-30b-a3b", "7b", "34b"]
METHODS = ["full", "lora", "qlora", "pretrain", "infer", "dpo"]
GPUS = ["h100", "a100-80gb", "rtx-4090", "l40s"]


@settings(
    max_examples=int(os.environ.get("CONFIG_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    model=st.sampled_from(MODELS),
    method=st.sampled_from(METHODS),
    gpu=st.sampled_from(GPUS),
    gpus=st.sampled_from([1, 2, 4, 8, 12, 16, 20, 24, 32]),
    seq=st.sampled_from([1024, 2048, 4096, 8192]),
    concurrency=st.sampled_from([None, 256, 1024]),
)
def test_round_trip_of_random_plans(model, method, gpu, gpus, seq, concurrency):
    question = f"{model} {method} gpu={gpu} gpus={gpus} seq={seq}"
    if method == "infer" and concurrency:
        question += f" mbs={concurrency}"  # busy servers: MoE models are served expert-parallel
    if method == "pretrain":
        question += " tokens=10B"
    plan = answer(question)
    assume(plan.estimate is not None)  # too many questions without a plan fail the health check
    for fmt in formats_for(plan):
        assert_round_trip(plan, fmt)


def test_every_format_is_offered_somewhere(plans):
    offered = {fmt for plan in plans.values() for fmt in formats_for(plan)}
    assert offered == set(FORMATS)


def test_flags_keep_a_value_with_shell_characters_one_word():
    """A model path with a space or a semicolon reaches the tool as one argument."""
    from gpuplan.bot.configs.text import flag

    assert shlex.split(flag("--model-path", "/data/my model;rm")) == ["--model-path", "/data/my model;rm"]
    assert flag("--rdzv_endpoint", "$MASTER_ADDR:$MASTER_PORT") == "--rdzv_endpoint $MASTER_ADDR:$MASTER_PORT"


def test_config_comments_exist_in_both_languages():
    import yaml

    root = Path(__file__).resolve().parents[1] / "templates"
    en, zh = (yaml.safe_load((root / lang / "configs.yaml").read_text(encoding="utf-8")) for lang in ("en", "zh"))
    assert set(en) == set(zh)


def test_gpus_that_do_not_split_over_the_nodes_are_refused_by_the_launchers():
    plan = answer("llama-3.1-8b full gpus=20 gpu=h100 tp=1")
    launch = launch_from(plan)
    assert (launch.gpus, launch.nodes) == (20, 3)
    with pytest.raises(ConfigError) as err:
        export(plan, "torchrun")
    assert err.value.code == "config_uneven_nodes" and err.value.params["nodes"] == 3


def test_every_refusal_has_a_message_in_both_languages():
    import re

    import yaml

    root = Path(__file__).resolve().parents[1]
    source = "".join(p.read_text() for p in (root / "bot" / "configs").glob("*.py"))
    codes = set(re.findall(r'ConfigError\(\s*"([a-z0-9_]+)"', source)) | {"config_no_plan", "config_files_sent"}
    for lang in ("en", "zh"):
        catalog = yaml.safe_load((root / "templates" / lang / "messages.yaml").read_text(encoding="utf-8"))
        assert codes <= set(catalog), sorted(codes - set(catalog))


def test_a_data_parallel_format_plans_the_question_again_without_model_parallelism():
    """`gpuplan config deepspeed "70b full seq=8192"`: the open plan splits the model (tensor
    parallel 4), so the files are for the plan made without it, and say so; a layout the user fixed
    is not changed."""
    from gpuplan.bot.configs import export_for_question

    plan, files = export_for_question("70b full seq=8192", "deepspeed")
    launch = launch_from(plan)
    assert (launch.tp, launch.pp) == (1, 1) and plan.estimate.memory.fits
    assert "Planned for deepspeed" in files["launch_deepspeed.sh"]
    with pytest.raises(ConfigError) as err:
        export_for_question("70b full gpus=16 tp=4", "deepspeed")
    assert err.value.code == "config_needs_megatron"


def test_json_with_a_data_parallel_config_plans_as_gpuplan_config_does(capsys):
    """`gpuplan --json --config deepspeed "70b full"` answers as `gpuplan config deepspeed` does: the
    plan printed is the one the files are for (planned again without model parallelism), not a
    refusal of the open plan."""
    import json

    from gpuplan.bot import cli
    from gpuplan.bot.configs import export_for_question

    plan, files = export_for_question("70b full", "deepspeed")
    assert cli.main(["--json", "--config", "deepspeed", "70b full"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["configs"] == files
    resolved = plan.estimate.resolved
    assert (printed["request"]["tp"], printed["request"]["pp"]) == (1, 1) == (resolved.tp, resolved.pp)


@pytest.mark.parametrize(
    "command, tp, ep",
    [
        ("vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size 8 --enable-expert-parallel", 8, None),
        ("vllm serve deepseek-ai/DeepSeek-V3 --data-parallel-size 8 --enable-expert-parallel", None, 8),
        (
            "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --dp 8 --enable-dp-attention",
            1,
            8,
        ),
        (
            "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --dp 2 --enable-dp-attention",
            8,
            None,
        ),
    ],
)
def test_pasted_expert_parallel_servers_are_read_as_gpuplan_plans_them(command, tp, ep):
    """Expert parallelism with purely data-parallel attention is read as ep; a server split both
    ways keeps its tensor parallelism (gpuplan plans EP with tp = 1 only)."""
    got = read(f"```\n{command}\n```")[0].request
    assert (got.tp, got.ep, got.gpus) == (tp, ep, 8)


def test_fsdp_adapters_follow_peft_guide():
    """PEFT's FSDP guide: adapters need fsdp_use_orig_params false to save memory, and paged 8-bit
    AdamW fails to save a checkpoint under FSDP + QLoRA (the launch line asks for 8-bit AdamW)."""
    qlora = export(answer("llama-3-70b qlora gpu=rtx-4090 gpus=4 zero=3 offload=cpu-all tp=1 pp=1"), "fsdp")
    assert "fsdp_use_orig_params: false" in qlora["accelerate_fsdp.yaml"]
    (command,) = script_commands(qlora["launch_accelerate.sh"])
    assert "paged_adamw_8bit" not in command and command[command.index("--optim") + 1] == "adamw_bnb_8bit"
    full = export(answer("qwen2.5-7b full gpus=16 gpu=a100-80gb tp=1 pp=1 zero=3"), "fsdp")
    assert "fsdp_use_orig_params: true" in full["accelerate_fsdp.yaml"]


def test_llama3_balanced_stages_export_as_megatron_core_lays_them_out():
    """Llama 3 405B on 16 stages: 126 layers + embedding + loss = 128 = 16 x 8 one-layer chunks, the
    first chunk of the first stage only the embedding and the last of the last only the loss: Megatron-
    Core's --account-for-embedding/loss-in-pipeline-split with 8 virtual stages (its checks in
    transformer_config.py: (126 + 2) / 16 divisible by 8), not an uneven last stage."""
    plan = answer("pretrain model=llama-3.1-405b tokens=15.6T gpu=h100 gpus=8192 seq=8192 tp=8 pp=16 gbs=2048")
    text = export(plan, "megatron")["pretrain_megatron.sh"]
    assert "--account-for-embedding-in-pipeline-split" in text and "--account-for-loss-in-pipeline-split" in text
    assert "--num-virtual-stages-per-pipeline-rank 8" in text
    assert "--decoder-last-pipeline-num-layers" not in text


def test_serving_exports_ask_for_the_kv_cache_the_plan_counts():
    files = export(answer("llama-3.1-70b infer gpu=h100 gpus=2 kv=fp8"), "vllm")
    (command,) = [c for name, text in files.items() if name.endswith(".sh") for c in script_commands(text)]
    assert command[command.index("--kv-cache-dtype") + 1] == "fp8"
    plain = export(answer("llama-3.1-70b infer gpu=h100 gpus=2"), "vllm")
    assert "--kv-cache-dtype" not in "".join(plain.values())
    with pytest.raises(ConfigError) as refused:
        export(answer("llama-3.1-70b infer gpu=h100 gpus=2 kv=int4"), "vllm")
    assert refused.value.code == "config_kv_cache"


def test_a_serving_plan_a_little_over_the_engine_share_launches_with_the_share_it_needs():
    """Llama 3 70B fp8 with one sequence on one H100 needs 90.3% of the card: the answer says
    'raised to 0.91', and the vLLM script launches with 0.91, not the default 0.9 it would not fit."""
    tight = launch_from(answer("serve llama-3-70b on 1 h100 precision=fp8 mbs=1"))
    assert tight.memory_fraction == 0.91
    roomy = launch_from(answer("llama-3.1-70b infer gpu=h100 gpus=2 precision=fp8"))
    assert roomy.memory_fraction == 0.9


def test_megatron_dispatches_experts_as_the_plan_times_them():
    """DeepSeek-V3 over 64 GPUs of expert parallelism spans 8 nodes: the flex dispatcher on DeepEP
    (a token sent once per node), the checkpoint's node-limited routing (8 groups, 4 per token),
    and with 16 micro-batches and selective recomputation one micro-batch's all-to-all beside
    another's compute. Mixtral's 4 expert ranks inside a node keep the plain all-to-all; a single
    micro-batch cannot be paired."""
    question = "pretrain model=deepseek-v3 tokens=1T gpu=h800 gpus=1024 tp=1 pp=1 ep=64 zero=3 ckpt=selective gbs=16384"
    wide = export(answer(question), "megatron")["pretrain_megatron.sh"]
    (command,) = script_commands(wide)
    assert command[command.index("--moe-token-dispatcher-type") + 1] == "flex"
    assert command[command.index("--moe-flex-dispatcher-backend") + 1] == "deepep"
    assert command[command.index("--moe-router-num-groups") + 1] == "8"
    assert command[command.index("--moe-router-group-topk") + 1] == "4"
    assert "--overlap-moe-expert-parallel-comm" in command
    narrow = export(answer("pretrain mixtral-8x7b tokens=1B gpus=8 gpu=h100 tp=1 pp=1 ep=4 gbs=8 mbs=1"), "megatron")
    (command,) = script_commands(narrow["pretrain_megatron.sh"])
    assert command[command.index("--moe-token-dispatcher-type") + 1] == "alltoall"
    assert "--overlap-moe-expert-parallel-comm" not in command and "--moe-router-num-groups" not in command
    off = export(answer(question + " ep_overlap=off"), "megatron")["pretrain_megatron.sh"]
    assert "--overlap-moe-expert-parallel-comm" not in script_commands(off)[0]  # the plan waits for it: so does the run


def test_an_uneven_interleaved_pipeline_exports_megatron_cores_layout():
    """DeepSeek-V3's 61 layers on 16 stages x 3 chunks: 48 chunks in model order (chunk s on stage s
    mod 16), the first 13 with two layers, the embedding in the first and the loss in the last; every
    stage holds 3 or 4 layers (Megatron-Core's --pipeline-model-parallel-layout, as its docs lay out
    DeepSeek-V3 on PP16 VPP2)."""
    plan = answer("pretrain model=deepseek-v3 tokens=1T gpu=h800 gpus=2048 tp=1 pp=16 ep=64 zero=1 ckpt=full")
    (command,) = script_commands(export(plan, "megatron")["pretrain_megatron.sh"])
    chunks = command[command.index("--pipeline-model-parallel-layout") + 1].split("|")
    assert "--num-virtual-stages-per-pipeline-rank" not in command
    assert len(chunks) == 48 and chunks[0] == "Ett" and chunks[-1] == "tL"
    assert sum(c.count("t") for c in chunks) == 61
    per_stage = [sum(chunks[s].count("t") for s in range(stage, 48, 16)) for stage in range(16)]
    assert set(per_stage) == {3, 4}
    # plain 1F1B (8 sequences per pipeline: too few micro-batches to interleave): 13 stages of 4, 3 of 3
    plain = answer("pretrain model=deepseek-v3 tokens=1T gpu=h800 gpus=2048 tp=1 pp=16 ep=64 zero=1 ckpt=full gbs=1024")
    (command,) = script_commands(export(plain, "megatron")["pretrain_megatron.sh"])
    stages = command[command.index("--pipeline-model-parallel-layout") + 1].split("|")
    assert [s.count("t") for s in stages] == [4] * 13 + [3] * 3 and stages[0][0] == "E" and stages[-1][-1] == "L"


# --- plans that prefill on GPUs of their own (disaggregated) ---------------------------------------

SERVERS = {"vllm": "vllm", "sglang": "sglang.launch_server"}
NIXL_CONFIG = {"kv_connector": "NixlConnector", "kv_role": "kv_both"}


@pytest.mark.parametrize("fmt", ["vllm", "sglang"])
@pytest.mark.parametrize(
    "question, prefill, decode, said",
    [
        # qwen3-30b-a3b on 8 H100: 7 GPUs decode and 1 prefills (the files had written 7 replicas, no prefill)
        ("qwen3-30b-a3b infer gpu=h100 gpus=8 seq=1024", "0", "1,2,3,4,5,6,7", "Prefill and decode on separate GPUs"),
        ("用8张H100部署qwen3-30b-a3b推理 seq=1024", "0", "1,2,3,4,5,6,7", "按方案把预填充和解码放在不同的卡上"),
        # tensor parallel 2: one prefill instance of 2 GPUs, three decode replicas of 2
        (
            "qwen3-30b-a3b infer gpu=h100 gpus=8 mbs=512 seq=1024 prefill=disaggregated",
            "0,1",
            "2,3,4,5,6,7",
            "1 prefill instance, 3 decode",
        ),
        # an expert-parallel decode pool: one group of 4, and a prefill group of the same shape
        (
            "deepseek-v2 infer gpu=h200 gpus=8 precision=fp8 ep=4 prefill=disaggregated",
            "0,1,2,3",
            "4,5,6,7",
            "1 prefill instance, 1 decode",
        ),
    ],
)
def test_a_disaggregated_plan_launches_its_prefill_and_decode_pools(question, prefill, decode, said, fmt):
    import json

    plan = answer(question)
    launch = launch_from(plan)
    assert launch.disaggregated and launch.prefill_gpus == len(prefill.split(","))
    files = export(plan, fmt)
    (text,) = files.values()
    commands = script_commands(text)
    servers = [c for c in commands if any(SERVERS[fmt] == word or SERVERS[fmt] in word for word in c[:3])]
    assert len(servers) == 2, servers
    used = set(flags([w for c in servers for w in c]))
    assert used <= names(f"{'vllm_serve' if fmt == 'vllm' else 'sglang_server'}.txt"), used
    ports = [_value(c, "--port") for c in servers]
    if fmt == "vllm":
        assert f"CUDA_VISIBLE_DEVICES={prefill} " in text and f"CUDA_VISIBLE_DEVICES={decode} " in text
        assert all(json.loads(_value(c, "--kv-transfer-config")) == NIXL_CONFIG for c in servers)
        proxy = commands[-1]
        assert [_value(proxy, "--prefiller-ports"), _value(proxy, "--decoder-ports")] == ports
        assert "toy_proxy_server.py" in text
    else:
        assert [_value(c, "--disaggregation-mode") for c in servers] == ["prefill", "decode"]
        assert _value(servers[1], "--base-gpu-id") == decode.split(",")[0] and "--base-gpu-id" not in servers[0]
        router = commands[-1]
        assert router[:3] == ["python", "-m", "sglang_router.launch_router"] and "--pd-disaggregation" in router
        assert _value(router, "--prefill").endswith(f":{ports[0]}") and _value(router, "--decode").endswith(ports[1])
    assert said in text.split("set -euo")[0]
    assert_pools_round_trip(plan, fmt)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    "question, code",
    [
        # 11 decode GPUs and 1 prefill over two nodes: the pools are written for one node
        ("qwen3-30b-a3b infer gpu=h100 gpus=12 seq=1024", "config_disaggregated_nodes"),
        # three expert-parallel decode groups of 2: each would be a server of its own
        ("qwen3-30b-a3b infer gpu=h100 gpus=8 ep=2 prefill=disaggregated", "config_disaggregated_expert_groups"),
    ],
)
def test_disaggregated_layouts_the_files_cannot_launch_are_refused(question, code, lang):
    from gpuplan.bot import render
    from gpuplan.estimator.schema import Note

    plan = answer(question)
    assert launch_from(plan).disaggregated
    for fmt in ("vllm", "sglang"):
        with pytest.raises(ConfigError) as err:
            export(plan, fmt)
        assert err.value.code == code
        said = render.message(Note(code=code, params=err.value.params), lang)
        assert fmt in said and "prefill=chunked" in said


# --- serving exports that serve ---------------------------------------------------------------------


def _serve_command(files: dict[str, str]) -> list[str]:
    (command,) = [c for name, text in files.items() if name.endswith(".sh") for c in script_commands(text)]
    return command


def _value(command: list[str], name: str) -> str | None:
    return command[command.index(name) + 1] if name in command else None


INT4_MODEL = "CHANGE_ME/int4-checkpoint"  # the checkpoint variable's default, substituted
ENGINE_FLAGS = {  # the engine's flags for: sequences at once, context, fp8 KV cache value
    "vllm": ("--max-num-seqs", "--max-model-len", "fp8"),
    "sglang": ("--max-running-requests", "--context-length", "fp8_e4m3"),
}


@pytest.mark.parametrize(
    "question, fmt, said",
    [
        ("llama-3.1-70b infer on 2 H100", "vllm", "{before} -> {after} sequences at once"),
        ("llama-3.1-70b infer on 2 H100", "sglang", "{before} -> {after} sequences at once"),
        ("用两张H100部署llama-3.1-70b推理", "vllm", "同时服务的序列从 {before} 条增至 {after} 条"),
        ("用两张H100部署llama-3.1-70b推理", "sglang", "同时服务的序列从 {before} 条增至 {after} 条"),
    ],
)
def test_a_serving_export_of_a_crowded_plan_is_planned_for_concurrency(question, fmt, said):
    """bf16 Llama 3.1 70B fills two H100s and holds 3 sequences at full load; an fp8 KV cache alone
    holds 7, under the 16 a serving plan is sized for, so the export takes fp8 weights too (and the
    fp8 cache the plan counts beside them). The flags are the re-planned estimate's, and the
    header says the trade in the question's language."""
    from gpuplan.bot.configs import concurrency, export_for_question

    asked = answer(question)
    plan, files = export_for_question(question, fmt)
    before, after = concurrency.held(asked), concurrency.held(plan)
    assert before < 16 <= after and plan.estimate.resolved.precision == "fp8"
    seqs, length, kv = ENGINE_FLAGS[fmt]
    command = _serve_command(files)
    assert _value(command, seqs) == str(launch_from(plan).max_num_seqs) == str(after)
    assert _value(command, length) == str(plan.estimate.resolved.seq_len) == "4096"
    assert _value(command, "--quantization") == "fp8" and _value(command, "--kv-cache-dtype") == kv
    header = next(iter(files.values())).split("set -euo")[0]
    assert said.format(before=before, after=after) in header
    assert "kv=bf16 precision=bf16" in header  # how to get the files as first planned


@pytest.mark.parametrize(
    "question, expected",
    [
        # precision fixed: the fp8 KV cache, then half the open context (15, the most it gives)
        ("llama-3.1-70b infer on 2 H100 precision=bf16", {"--quantization": None, "--kv-cache-dtype": "fp8"}),
        # KV cache fixed in 16 bits: fp8 weights, no fp8 cache
        ("llama-3.1-70b infer on 2 H100 kv=bf16", {"--quantization": "fp8", "--kv-cache-dtype": None}),
        # the context fixed: kept at 8192, fp8 weights and cache instead
        ("llama-3.1-70b infer on 2 H100 seq=8192", {"--max-model-len": "8192", "--quantization": "fp8"}),
        # four sequences asked: the fp8 cache's 7 are enough, the weights stay bf16
        ("llama-3.1-70b infer on 2 H100 mbs=4", {"--quantization": None, "--kv-cache-dtype": "fp8"}),
        ("两张H100部署llama-3.1-70b推理 kv=bf16", {"--quantization": "fp8", "--kv-cache-dtype": None}),
    ],
)
def test_what_the_user_fixed_is_kept_when_the_export_is_planned_again(question, expected):
    from gpuplan.bot.configs import export_for_question

    asked = answer(question)
    plan, files = export_for_question(question, "vllm")
    command = _serve_command(files)
    for field in ("precision", "kv_cache", "seq_len", "micro_batch"):
        if getattr(asked.request, field) is not None:
            assert getattr(plan.request, field) == getattr(asked.request, field), field
            assert getattr(plan.estimate.resolved, field) == getattr(asked.estimate.resolved, field), field
    for name, value in expected.items():
        assert _value(command, name) == value, name
    assert _value(command, "--max-num-seqs") == str(launch_from(plan).max_num_seqs)


def test_a_fully_fixed_crowded_plan_is_exported_as_asked():
    """Nothing left open (precision, KV cache and context all given): the files are the plan's own."""
    from gpuplan.bot.configs import export_for_question

    question = "llama-3.1-70b infer on 2 H100 precision=bf16 kv=bf16 seq=4096"
    plan, files = export_for_question(question, "vllm")
    assert files == export(answer(question), "vllm") and plan.estimate.resolved.precision == "bf16"


@pytest.mark.parametrize(
    "question, fmt, model, quantization, said",
    [
        # Ampere has no FP8 tensor cores: no fp8 KV cache; fp8 weights run weight-only (FP8 Marlin)
        ("llama-3.1-70b infer on 2 A100", "vllm", "meta-llama/Llama-3.1-70B", "fp8", "weight-only on this GPU"),
        ("用两张A100部署llama-3.1-70b推理", "sglang", "meta-llama/Llama-3.1-70B", "fp8", "只量化权重"),
        # Volta has no FP8 kernels at all: an int4 (AWQ/GPTQ) checkpoint
        ("qwen2.5-14b infer gpu=v100 gpus=1", "vllm", INT4_MODEL, None, "int4 weights (an AWQ or GPTQ checkpoint)"),
        ("用一张V100部署qwen2.5-14b推理", "sglang", INT4_MODEL, None, "int4 权重（AWQ 或 GPTQ 检查点）"),
    ],
)
def test_gpus_without_fp8_take_the_next_option(question, fmt, model, quantization, said):
    from gpuplan.bot.configs import concurrency, export_for_question

    plan, files = export_for_question(question, fmt)
    command = _serve_command(files)
    assert model in command or _value(command, "--model-path") == model
    assert _value(command, "--quantization") == quantization and "--kv-cache-dtype" not in command
    assert concurrency.held(plan) >= 16 and plan.estimate.resolved.kv_cache == "bf16"
    assert said in next(iter(files.values()))


def test_a_shorter_context_is_the_next_option_when_the_weights_are_fixed_on_an_a100():
    """bf16 fixed on two A100s: no fp8 KV cache there, so half the open context (4 -> 9 sequences),
    said as still under 16, with the setting that keeps 4096."""
    from gpuplan.bot.configs import export_for_question

    plan, files = export_for_question("llama-3.1-70b infer on 2 A100 precision=bf16", "vllm")
    command = _serve_command(files)
    assert _value(command, "--max-model-len") == "2048" and "--kv-cache-dtype" not in command
    text = files["serve_vllm.sh"]
    assert "still under the 16" in text and "requests longer than 2048 tokens are refused" in text
    assert "Add seq=4096 to the question" in text


@pytest.mark.parametrize("fmt", ["vllm", "sglang"])
@pytest.mark.parametrize("question", ["llama-3.1-8b infer on 1 H100", "用一张H100部署llama-3.1-8b推理"])
def test_a_plan_with_plenty_of_concurrency_is_exported_unchanged(question, fmt):
    from gpuplan.bot.configs import export_for_question

    asked = answer(question)
    plan, files = export_for_question(question, fmt)
    assert plan.estimate.resolved == asked.estimate.resolved and files == export(asked, fmt)
    assert "Planned with" not in "".join(files.values()) and "为了并发" not in "".join(files.values())


@pytest.mark.parametrize(
    "argv",
    [
        ["config", "vllm", "llama-3.1-70b infer on 2 H100"],
        ["--config", "vllm", "llama-3.1-70b infer on 2 H100"],
        ["--json", "--config", "vllm", "llama-3.1-70b infer on 2 H100"],
    ],
)
def test_both_command_line_paths_write_the_planned_again_export(capsys, argv):
    import json

    from gpuplan.bot.cli import main

    assert main(argv) == 0
    out = capsys.readouterr().out
    listed = out.split("===== serve_vllm.sh =====")[-1]
    script = json.loads(out)["configs"]["serve_vllm.sh"] if "--json" in argv else listed
    command = _serve_command({"serve_vllm.sh": script})
    assert int(_value(command, "--max-num-seqs")) >= 16 and _value(command, "--quantization") == "fp8"
    assert "Planned with fp8 weights and an fp8 KV cache" in script
