"""What people paste, read back: launcher lines, training and serving arguments, DeepSpeed JSON,
FSDP settings, nvidia-smi tables, CUDA OOM messages and NCCL errors, each inside an English and a
Chinese question. Every case names the Request fields it must yield; `read` checks that the
answer says what was taken from the paste, `observed` what a log states."""

import pytest

from gpuplan.bot.jsonout import plan_json
from gpuplan.bot.language import code_spans
from gpuplan.bot.language.parser import parse
from gpuplan.bot.pipeline import answer

TORCHRUN = "torchrun --nnodes 2 --nproc_per_node 8 --rdzv_endpoint=10.0.0.1:29500 train.py"
DEEPSPEED = "deepspeed --num_nodes 2 --num_gpus 8 train.py --deepspeed ds_z3_offload.json"
DEEPSPEED_INCLUDE = "deepspeed --include localhost:0,1,2,3 train.py"
ACCELERATE = "accelerate launch --num_processes 4 --mixed_precision bf16 train.py"
VISIBLE = "CUDA_VISIBLE_DEVICES=0,1,2,3 python train.py"
LLAMAFACTORY = """```yaml
model_name_or_path: Qwen/Qwen2.5-7B-Instruct
stage: sft
finetuning_type: lora
lora_rank: 64
quantization_bit: 4
cutoff_len: 8192
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
bf16: true
```"""
HF_ARGS = (
    "python train.py --model_name_or_path meta-llama/Meta-Llama-3-8B --per_device_train_batch_size 8 "
    "--gradient_accumulation_steps 4 --gradient_checkpointing --bf16 --max_seq_length 4096"
)
AXOLOTL = """```yaml
base_model: mistralai/Mistral-7B-v0.1
adapter: qlora
load_in_4bit: true
sequence_len: 4096
micro_batch_size: 2
gradient_checkpointing: true
```"""
TORCHTUNE = """```yaml
batch_size: 4
enable_activation_checkpointing: True
dtype: bf16
```"""
SWIFT = "swift sft --model Qwen/Qwen2.5-14B-Instruct --train_type lora --lora_rank 8 --max_length 4096"
DS_JSON = """```json
{"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": true},
 "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "cpu"}}}
```"""
DS_JSON_TRUNCATED = """```
  "zero_optimization": {
    "stage": 2,
    "offload_optimizer": {
      "device": "cpu",
```"""
FSDP_ACCELERATE = """```yaml
distributed_type: FSDP
fsdp_config:
  fsdp_sharding_strategy: FULL_SHARD
  fsdp_offload_params: true
num_machines: 2
num_processes: 16
```"""
HF_FSDP = 'torchrun --nproc_per_node 8 train.py --fsdp "full_shard auto_wrap" --gradient_checkpointing'
VLLM = (
    "vllm serve Qwen/Qwen2.5-32B-Instruct --tensor-parallel-size 4 --max-model-len 32768 "
    "--gpu-memory-utilization 0.9 --max-num-seqs 64"
)
SMI = """```
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
|-------------------------------+----------------------+----------------------+
|   0  NVIDIA A100-SXM4-40GB  On  | 00000000:07:00.0 Off |                    0 |
| N/A   32C    P0    61W / 400W |      4MiB / 40960MiB |      0%      Default |
|   1  NVIDIA A100-SXM4-40GB  On  | 00000000:0B:00.0 Off |                    0 |
| N/A   30C    P0    58W / 400W |      4MiB / 40960MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
```"""
SMI_LIST = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\nGPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-2)"
# the GPU lines of PyTorch's / vLLM's collect_env
COLLECT_ENV = "GPU models and configuration:\n" + "\n".join(f"GPU {i}: Tesla V100-PCIE-32GB" for i in range(8))
OOM_NEW = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.83 GiB. "
    "GPU 0 has a total capacity of 79.33 GiB of which 10.31 GiB is free."
)
OOM_OLD = (
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.75 GiB total "
    "capacity; 13.50 GiB already allocated; 18.81 MiB free; 13.71 GiB reserved in total by PyTorch)"
)
# a run summary that names its settings in words; a value with more words after it is not read
SUMMARY = "```\nBatch size: 8 (4 per GPU)\nSequence length: 128\n```"
NCCL = (
    "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=458, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600057 milliseconds"
)

# (pasted artifact, fields it must yield)
CASES = [
    (TORCHRUN, dict(gpus=16, nodes=2)),
    (DEEPSPEED, dict(gpus=16, nodes=2, zero=3)),
    (DEEPSPEED_INCLUDE, dict(gpus=4)),
    (ACCELERATE, dict(gpus=4, precision="bf16-mixed")),
    (VISIBLE, dict(gpus=4)),
    (
        LLAMAFACTORY,
        dict(model="qwen2.5-7b", method="qlora", lora_rank=64, seq_len=8192, micro_batch=2, precision="bf16-mixed"),
    ),
    (HF_ARGS, dict(model="llama-3-8b", micro_batch=8, ckpt="full", precision="bf16-mixed", seq_len=4096)),
    (AXOLOTL, dict(model="mistral-7b", method="qlora", seq_len=4096, micro_batch=2, ckpt="full")),
    (TORCHTUNE, dict(micro_batch=4, ckpt="full")),
    (SWIFT, dict(model="qwen2.5-14b", method="lora", lora_rank=8, seq_len=4096)),
    (DS_JSON, dict(zero=3, offload="cpu-all", micro_batch=2, precision="bf16-mixed")),
    (DS_JSON_TRUNCATED, dict(zero=2, offload="cpu")),
    (FSDP_ACCELERATE, dict(zero=3, offload="cpu-all", gpus=16, nodes=2)),
    (HF_FSDP, dict(zero=3, gpus=8, ckpt="full")),
    (VLLM, dict(model="qwen2.5-32b", method="infer", tp=4, gpus=4, seq_len=32768, micro_batch=64)),
    (SMI, dict(gpu="a100-40gb", gpus=2)),
    (SMI_LIST, dict(gpu="h100-80gb", gpus=2)),
    (COLLECT_ENV, dict(gpu="v100-pcie-32gb", gpus=8)),
    # the method in a script's or config's name
    ("I ran the `train_ppo.sh` script on 8 H100 80 GB GPUs using a 7B model", dict(method="ppo", gpus=8)),
    ("`bash examples/train_lora/llama3_lora_sft.yaml` OOM on a 4090", dict(method="lora")),
    ("python run_dpo.py --model_name_or_path Qwen/Qwen2.5-7B", dict(method="dpo")),
    (OOM_NEW, dict(gpu_memory_gib=79.33)),
    (SUMMARY, dict(seq_len=128, micro_batch=None)),
    ("```\nModel: Llama 2 7B\nMicro batch size: 2\nMax seq len: 2k\n```", dict(micro_batch=2, seq_len=2048)),
    # a rollout's prompt and response lengths (verl, OpenRLHF, TRL): one sequence of both, a total wins
    ("python3 -m verl.trainer.main_ppo data.max_prompt_length=1024 data.max_response_length=4096", dict(seq_len=5120)),
    ("--prompt_max_len 1024 --generate_max_len 1024 --max_len 4096", dict(seq_len=4096)),
    ("--prompt_max_len 1024 --generate_max_len 2048", dict(seq_len=3072)),
    # a known setting set to a value in a sentence, in backticks or not (English "to", Chinese 设置为)
    ("I set per_device_train_batch_size to 8 for llama 7b lora", dict(micro_batch=8)),
    ("I set `per_device_train_batch_size` to `8` for llama 7b lora", dict(micro_batch=8)),
    ("is 16 H100 enough if I keep the `max_seq_len` to `32768`", dict(seq_len=32768)),
    ("我把per_device_train_batch_size设置为8, llama 7b lora", dict(micro_batch=8)),
]
WRAPS = {
    "en": "Getting OOM with this setup, what do I need?\n{artifact}",
    "zh": "用下面的配置训练爆显存了，需要什么配置？\n{artifact}",
}


def _cases():
    for i, (artifact, fields) in enumerate(CASES):
        for lang, wrap in WRAPS.items():
            yield pytest.param(wrap.format(artifact=artifact), fields, id=f"{lang}-{i}")


@pytest.mark.parametrize("question, fields", list(_cases()))
def test_artifact_is_read(question, fields):
    parsed = parse(question)
    assert not parsed.errors, parsed.errors
    got = parsed.request.model_dump()
    for name, value in fields.items():
        expected = pytest.approx(value) if isinstance(value, float) else value
        assert got[name] == expected, f"{name}: {got[name]!r} != {value!r}"
    assert parsed.read, "the answer must say what it took from the paste"


@pytest.mark.parametrize("lang, wrap", WRAPS.items())
def test_oom_message_capacity_and_request_are_used_and_said(lang, wrap):
    plan = answer(wrap.format(artifact="qwen2.5-72b full on 8 A800. " + OOM_NEW))
    assert plan.facts.oom_capacity_gib == pytest.approx(79.33)
    assert plan.facts.oom_requested_gib == pytest.approx(16.83)
    data = plan_json(plan)
    oom = next(d for d in data["diagnoses"] if d["topic"] == "oom_large_model")
    assert "79.3" in oom["answer"] and "16.8" in oom["answer"] and "6.5" in oom["answer"]  # 16.83 - 10.31


def test_old_style_oom_message_in_mib():
    parsed = parse("7b lora on colab " + OOM_OLD)
    assert parsed.observed["oom"]["capacity_gib"] == pytest.approx(14.75)
    assert parsed.observed["oom"]["requested_gib"] == pytest.approx(20 / 1024)
    assert "oom_large_model" in parsed.topics


@pytest.mark.parametrize("wrap", ["training hangs after a while:\n{}", "多机训练卡住然后报错：\n{}"])
def test_nccl_watchdog_is_a_timeout_diagnosis(wrap):
    parsed = parse(wrap.format(NCCL))
    assert parsed.intent == "troubleshoot" and parsed.topics[0] == "nccl_timeout"
    assert parsed.observed["nccl_timeout_s"] == pytest.approx(600.057)
    assert not parsed.errors  # SeqNum=458, Timeout(ms)=600000 are the log's, not settings


@pytest.mark.parametrize(
    "text",
    [
        "# --quantization_bit 4\nqwen 7b lora on 2 3090",
        "注释掉了--quantization_bit 4，qwen 7b lora，两张3090",
        "qwen 7b lora without --gradient_checkpointing on 2 3090",
    ],
)
def test_a_setting_said_not_to_be_used_is_not_read(text):
    parsed = parse(text)
    assert parsed.request.method == "lora" and parsed.request.ckpt is None


# a pasted training stack that runs data parallel only (ZeRO / FSDP sharding) plans no tensor or pipeline
# parallelism, read from the paste and said; a model-parallel stack, a server or a parallel size keeps its own
HF_DEEPSPEED_70B = (
    "deepspeed --num_gpus 8 train.py --model_name_or_path meta-llama/Llama-2-70b-hf --deepspeed ds_z3.json "
    "--per_device_train_batch_size 1"
)
DATA_PARALLEL_STACKS = [
    (HF_DEEPSPEED_70B, "hf_trainer", "deepspeed"),
    (DEEPSPEED, "hf_trainer", "deepspeed"),
    (HF_FSDP, "hf_trainer", "fsdp"),
    (LLAMAFACTORY, "llamafactory", None),
    ("llamafactory-cli train examples/train_full/llama3_full_sft.yaml", "llamafactory", None),
    (AXOLOTL, "axolotl", None),
    ("accelerate launch -m axolotl.cli.train config.yml", "axolotl", None),
    ("trl sft --model_name_or_path Qwen/Qwen2.5-7B --per_device_train_batch_size 2", "trl", None),
    (SWIFT + " --deepspeed zero3", "swift", "deepspeed"),
]
MODEL_PARALLEL_PASTES = [
    ("torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 1", 2),
    (
        "deepspeed pretrain_gpt.py --deepspeed --deepspeed_config ds.json --micro-batch-size 1",
        None,
    ),
    ("megatron sft --model Qwen/Qwen2.5-7B --train_type full --tensor_model_parallel_size 2", 2),
    ("python megatron_gpt_finetuning.py trainer.devices=8 model.tensor_model_parallel_size=4", 4),
    (VLLM, 4),
    (
        "torchrun --nproc_per_node 8 train.py --model_name_or_path meta-llama/Llama-2-70b-hf --fsdp full_shard "
        "--tp_size 2",
        2,
    ),
    (HF_ARGS, None),  # one process, no sharding: nothing said about a layout
    ("swift sft --model Qwen/Qwen2.5-32B --train_type full --device_map auto", None),  # layers spread over GPUs
]


@pytest.mark.parametrize("lang, wrap", WRAPS.items())
@pytest.mark.parametrize("artifact, stack, sharding", DATA_PARALLEL_STACKS)
def test_a_data_parallel_only_stack_plans_no_model_parallelism(lang, wrap, artifact, stack, sharding):
    parsed = parse(wrap.format(artifact=artifact))
    assert not parsed.errors and not parsed.fixed & {"tp", "pp"}  # read from the paste, not a setting
    assert (parsed.request.tp, parsed.request.pp) == (1, 1)
    said = [n.params for n in parsed.read if n.code == "data_parallel_stack"]
    assert said == [{"stack": stack, "sharding": sharding}]


@pytest.mark.parametrize("lang, wrap", WRAPS.items())
@pytest.mark.parametrize("artifact, tp", MODEL_PARALLEL_PASTES)
def test_a_model_parallel_paste_keeps_its_own_layout(lang, wrap, artifact, tp):
    parsed = parse(wrap.format(artifact=artifact))
    assert parsed.request.tp == tp
    assert "data_parallel_stack" not in [n.code for n in parsed.read]


def test_parallel_sizes_the_user_writes_win_over_the_pasted_stack():
    parsed = parse("70b full with tensor parallel 8?\n" + HF_FSDP)
    assert parsed.request.tp == 8
    assert "data_parallel_stack" not in [n.code for n in parsed.read]


@pytest.mark.parametrize(
    "question, said",
    [
        ("GPU util 30%\n" + HF_DEEPSPEED_70B, "Hugging Face Trainer script under DeepSpeed"),
        ("GPU利用率只有30%\n" + HF_DEEPSPEED_70B, "基于 Hugging Face Trainer 的训练脚本 配合 DeepSpeed"),
    ],
)
def test_the_hf_trainer_under_deepspeed_is_planned_with_zero_alone(question, said):
    """Llama 2 70B on the 8 GPUs the launcher names: ZeRO-3 with no tensor parallelism, which does not
    fit in 80 GB without offload; the tier's configuration that holds it splits no layer either."""
    data = plan_json(answer(question))
    request = data["request"]
    assert (request["gpus"], request["zero"], request["tp"], request["pp"]) == (8, 3, 1, 1)
    assert any(said in line for line in data["read"])
    assert not data["memory"]["fits"] and any(a["offload"] == "cpu" for a in data["alternatives"])
    assert data["tier"]["start"]["needed"]["tp"] == 1


def test_the_text_wins_over_the_paste_and_says_so():
    parsed = parse("8卡 A100-40G 可以做34B模型sft吗？\nexport CUDA_VISIBLE_DEVICES=0,1,2,3\ndeepspeed main.py")
    assert parsed.request.gpus == 8
    assert "artifact_set_aside" in [n.code for n in parsed.notes]


@pytest.mark.parametrize(
    "line, code",
    [
        ("torchrun --nproc_per_node 8 train.py", True),
        ("--per_device_train_batch_size 4 \\", True),
        ("cutoff_len: 1024", True),
        ('"zero_optimization": {', True),
        ("[rank0]: Watchdog caught collective operation timeout", True),
        ("|   0  NVIDIA A100-SXM4-80GB  On  | 00000000:07:00.0 Off |", True),
        ("How many GPUs do I need for a 70b full fine-tune?", False),
        ("我们想用QLoRA微调一个33B的模型，单卡48G够吗？", False),
        ("--max_len 512 \\   # 另一台机器是 1", True),
        # a sentence that starts with a tool's name is prose; the tool with a flag, file or model id is not
        ("deepspeed zero3 is very slow for qwen 7b lora on 8 A100", False),
        ("vllm serve is slow on 2 H100", False),
        ("accelerate launch hangs with 4 gpus", False),
        ("deepspeed 多卡训练，三个卡GPU利用率显示都是100%", False),
        ("vllm serve Qwen/Qwen2.5-7B", True),
        ("deepspeed train.py  # 训练", True),
        ("CUDA_VISIBLE_DEVICES=0,1 python infer.py", True),
    ],
)
def test_code_lines_are_told_from_prose(line, code):
    assert bool(code_spans.find_code(line)) == code


@pytest.mark.parametrize(
    "question, gpus, gpu",
    [
        ("deepspeed zero3 is very slow for qwen 7b lora on 8 A100", 8, "a100-80gb"),
        ("torchrun with 2 nodes of 8 H100 hangs at init", 16, "h100-80gb"),
        ("deepspeed 多卡训练，三个卡GPU利用率显示都是100%，但好像没有在训练", 3, None),
    ],
)
def test_a_sentence_starting_with_a_tool_name_is_read(question, gpus, gpu):
    request = parse(question).request
    assert request.gpus == gpus and request.gpu == gpu


def test_a_one_line_command_followed_by_words_keeps_the_words():
    parsed = parse(
        "accelerate launch --num_processes 4 --mixed_precision bf16 train.py "
        "--per_device_train_batch_size 4 --gradient_checkpointing OOM on 13b"
    )
    r = parsed.request
    assert (r.gpus, r.params_b, r.micro_batch, r.ckpt) == (4, 13, 4, "full")
    assert parsed.topics[0] == "oom_large_model"


def test_a_gpu_line_that_names_no_gpu_counts_nothing():
    """ "GPU 0: out of memory" is a log line, not a listed GPU."""
    parsed = parse("GPU 0: out of memory when training llama 8b")
    assert parsed.request.gpus is None and parsed.request.gpu is None


CONTINUED = "deepspeed --include localhost:0,1 train.py \\\n  --per_device_train_batch_size 2 \\\n"


@pytest.mark.parametrize(
    "question, params_b",
    [
        (CONTINUED + "70B的模型要做增量预训练，最少几台机器？", 70),
        (CONTINUED + "How many machines does it take for a continued pretrain of a 70B model?", 70),
    ],
)
def test_a_sentence_after_a_continued_command_line_is_prose(question, params_b):
    """A command whose last line ends with a backslash is over when a sentence follows, in either language."""
    assert parse(question).request.params_b == pytest.approx(params_b)


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("checkpoint save of our 34B run takes 25 minutes every time", 1500),
        ("多机训练 保存checkpoint要40分钟 70b zero3", 2400),
        ("saving the model takes over an hour with zero3", 3600),
        ("save_checkpoint took 1.5h", 5400),
        ("saving was slow, it took 20 minutes", 1200),
        ("存ckpt需要两个多小时", 7200),
        ("保存检查点要半小时", 1800),
        ("saving a checkpoint: 90s", 90),
        # an interval, another clause, or something else's duration is no save's
        ("we save every 30 minutes", None),
        ("每30分钟保存一次checkpoint", None),
        ("保存模型后训练了3小时", None),
        ("saving the checkpoint. Training takes 3 hours", None),
        ("the checkpoint at step 500 after 3 hours of training", None),
        ("it was saved as a safetensors file", None),
        # a GPU's name after a number is no hour; parts add up; '100s of GB' is no duration
        ("checkpoint save on an H100 takes 5 minutes", 300),
        ("checkpoint saving on 8 h100s takes 10 minutes", 600),
        ("保存检查点大概1个半小时", 5400),
        ("保存检查点要两个半小时", 9000),
        ("saving takes 1 hour 30 minutes", 5400),
        ("checkpoints are 100s of GB and saving is slow", None),
        ("we checkpoint at 2 hours intervals", None),
        ("the checkpoint save takes 20 seconds", 20),
    ],
)
def test_how_long_a_checkpoint_save_takes_is_read(text, seconds):
    from gpuplan.bot.language.artifact_words import vocabulary
    from gpuplan.bot.language.logs import read_checkpoint_save_s

    assert read_checkpoint_save_s(text, vocabulary()) == seconds


@pytest.mark.parametrize(
    "question, said",
    [
        (
            "checkpoint save of our 34B run takes 25 minutes every time",
            ["Yours takes about 25 minutes", "times longer"],
        ),
        (
            "多机训练 保存checkpoint要40分钟 70b zero3",
            ["你这边保存一次约 40 分钟", "stage3_gather_16bit_weights_on_model_save"],
        ),
    ],
)
def test_a_save_time_the_user_states_is_set_against_the_storage(question, said, capsys):
    """The checkpoint answer sets the save time the user sees against what the plan's storage writes."""
    from gpuplan.bot import cli

    cli.main([question])
    out = capsys.readouterr().out
    for words in said:
        assert words in out


@pytest.mark.parametrize(
    "question, said",
    [
        (
            "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800086 milliseconds before timing"
            " out. 2 nodes, llama 13b full",
            "waited 30 minutes, the default of the Hugging Face Trainer",
        ),
        (
            "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, Timeout(ms)=600000) ran for 600018"
            " milliseconds before timing out. 8卡 qwen 7b 全参",
            "等了 10 分钟，这是 PyTorch 2.2 起 NCCL 的默认超时",
        ),
        (
            "NCCL watchdog Timeout(ms)=60000 ran for 60012 milliseconds, llama 7b lora on 8 a100",
            "waited 1 minute: a limit",
        ),
    ],
)
def test_the_answer_reads_how_long_the_collective_waited(question, said, capsys):
    """The NCCL answer says how long the log's collective waited, which default that is, and what a
    wait of minutes (a missing rank) or of seconds (a limit too short) means."""
    from gpuplan.bot import cli

    cli.main([question])
    assert said in capsys.readouterr().out


@pytest.mark.parametrize(
    "question, workers, said",
    [
        (
            "训练速度很慢，GPU利用率只有30%，8卡A100 lora qwen2 7b，dataloader num_workers=0",
            0,
            "你设置了 num_workers=0",
        ),
        (
            "GPU utilization only 40%, llama 7b lora on 4 A100, --dataloader_num_workers 1",
            1,
            "Your setting has 1 DataLoader worker,",
        ),
        ("low gpu utilization, llama 7b lora on 4 A100, --dataloader_num_workers 8", 8, None),
        ("low gpu utilization, llama 7b lora on 4 A100", None, None),
    ],
)
def test_the_dataloader_workers_a_setting_gives_are_set_against_the_plan(question, workers, said, capsys):
    """DataLoader workers from a pasted setting (PyTorch num_workers, HF --dataloader_num_workers,
    Megatron --num-workers) are said back, and the data-pipeline answer says when they are too few."""
    from gpuplan.bot import cli

    assert parse(question).observed.get("dataloader_workers") == workers
    cli.main([question])
    out = capsys.readouterr().out
    if said:
        assert said in out
    else:
        assert "Your setting has" not in out and "num_workers=0" not in out


def test_a_save_faster_than_the_storage_allows_is_not_the_bottleneck(capsys):
    from gpuplan.bot import cli

    cli.main(["Full fine-tune llama 3 70b on 32 H100, the checkpoint save takes 20 seconds, is that ok?"])
    out = capsys.readouterr().out
    assert "Yours takes about 20 seconds" in out and "the save is not what slows the run" in out


def test_a_card_pasted_in_a_list_is_quoted_as_written():
    from gpuplan.bot.language.parser import parse

    parsed = parse("```\n- GPU: 2x RTX 3090\n```\nLoRA on llama 3 8b OOMs")
    assert parsed.request.gpus == 2
    assert {n.params["words"] for n in parsed.read} >= {"- GPU: 2x RTX 3090", "RTX 3090"}
