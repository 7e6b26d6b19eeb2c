"""The command line: exit codes, the JSON contract, both languages."""

import json
import os
import re
import sys

import pytest

from gpuplan.bot.cli import main

CONTRACT_KEYS = {
    "intent",
    "lang",
    "request",
    "assumptions",
    "clarify",
    "memory",
    "compute",
    "io",
    "network",
    "tier",
    "alternatives",
    "diagnoses",
    "warnings",
}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_quick_start_command(capsys):
    code, out, err = run(capsys, "70b full")
    assert code == 0 and not err
    first = out.splitlines()[0]
    # H100 and A100 plans cost within a few per cent here: either heads the answer
    assert re.match(r"\d+ x (H100|A100) 80GB \(\d+ servers\) for a full fine-tune of a 70B model", first), first
    assert "Memory" in out and "Assumed" in out and len(out.splitlines()) <= 30


def test_chinese_question_gets_chinese_answer(capsys):
    code, out, _ = run(capsys, "700亿 全参微调 8张H100")
    assert code == 0
    assert "全参微调" in out and "单卡显存" in out and "装不下" in out


def test_lang_flag_overrides(capsys):
    _, out, _ = run(capsys, "--lang", "zh", "70b lora")
    assert "单卡显存" in out


def test_json_contract(capsys):
    code, out, _ = run(capsys, "--json", "llama-3-70b lora gpu=a100 gpus=2")
    data = json.loads(out)
    assert code == 0 and set(data) >= CONTRACT_KEYS
    assert set(data["memory"]["breakdown_gib"]) == {
        "weights",
        "gradients",
        "optimizer",
        "activations",
        "adapters",
        "kv_cache",
        "overhead",
    }
    for key in ("per_gpu_gib", "capacity_gib", "fits", "host_ram_gib"):
        assert key in data["memory"]
    for key in ("total_flops", "train_tokens", "mfu", "tokens_per_s_per_gpu", "days", "gpu_hours", "cost_usd"):
        assert key in data["compute"]
    for key in (
        "model",
        "params_b",
        "method",
        "seq_len",
        "micro_batch",
        "global_batch",
        "train_tokens",
        "precision",
        "optimizer",
        "gpu",
        "gpus",
        "nodes",
        "zero",
        "offload",
        "tp",
        "pp",
        "ckpt",
        "lora_rank",
    ):
        assert key in data["request"]
    assert all(isinstance(a, str) and a for a in data["assumptions"])


def test_acceptance_70b_full_on_8_h100(capsys):
    _, out, _ = run(capsys, "--json", "llama-3-70b full seq=4096 gpu=h100 gpus=8 zero=3")
    data = json.loads(out)
    assert data["memory"]["fits"] is False
    assert any("offload=cpu" in w for w in data["warnings"])
    _, out, _ = run(capsys, "--json", "llama-3-70b full seq=4096 gpu=h100 gpus=8 zero=3 offload=cpu")
    data = json.loads(out)
    assert data["memory"]["fits"] is True
    assert data["memory"]["host_ram_gib"] > 1000
    assert data["request"]["offload"] == "cpu"


@pytest.mark.parametrize(
    "question, named",
    [
        ("model=-5b", "-5"),
        ("70b gpus=0", "gpus=0"),
        ("llama-2-7b seq=10M", "1,048,576"),  # the longest gpuplan plans, above any model's own
        ("70b gpu=h1000", "h1000"),
        ("70b seq=abc", "seq=abc"),
        ("70b zero=7", "zero=7"),
    ],
)
def test_nonsense_exits_2_and_names_the_value(capsys, question, named):
    code, out, err = run(capsys, question)
    assert code == 2 and not out
    assert named in err
    assert "Traceback" not in err
    assert "gpuplan" in err  # an example that works


def test_chinese_errors_in_chinese(capsys):
    code, _, err = run(capsys, "700亿 gpus=0")
    assert code == 2 and "至少需要一张 GPU" in err


def test_missing_model_asks_back(capsys):
    code, out, _ = run(capsys, "--json", "how many GPUs do I need?")
    data = json.loads(out)
    assert code == 0 and data["clarify"] and data["memory"] is None


def test_lists(capsys):
    code, out, _ = run(capsys, "gpus")
    assert code == 0 and "h100-80gb" in out
    code, out, _ = run(capsys, "models")
    assert code == 0 and "llama-3-70b" in out


@pytest.mark.parametrize(
    "question",
    [
        "qwen2.5-72b infer",
        "deepseek-v3 infer gpu=h200 precision=fp8",
        "mixtral-8x22b lora",
        "7b pretrain tokens=1T",
        "llama-3-8b dpo",
        "llama-3-8b ppo gpu=a100",
        "13b full gpu=v100",
        "70b qlora gpu=4090",
        "405b pretrain gpus=2048 tp=8 pp=8",
        "70b full budget=$50k deadline=14d",
        "7b lora budget=5万人民币",
    ],
)
def test_varied_questions_answer_in_both_languages(capsys, question):
    for lang in ("en", "zh"):
        code, out, err = run(capsys, "--lang", lang, question)
        assert code == 0, err
        assert out.strip()


def test_70b_full_open_plan_is_complete(capsys):
    code, out, _ = run(capsys, "--json", "70b full")
    data = json.loads(out)
    assert code == 0 and data["memory"]["fits"]
    assert data["tier"]["id"] and data["tier"]["url"]
    assert data["network"]["fabric"] and data["io"]["storage"] and data["io"]["storage_tb"] > 0
    assert data["alternatives"] and all(
        {"gpu", "gpus", "days", "cost_usd", "per_gpu_gib"} <= set(a) for a in data["alternatives"]
    )


def test_deadline_and_budget_are_checked(capsys):
    _, out, _ = run(capsys, "--json", "70b full deadline=7d budget=$20k")
    data = json.loads(out)
    assert data["compute"]["days"] <= 7 and data["compute"]["cost_usd"] <= 20_000  # both can be met
    _, out, _ = run(capsys, "--json", "70b pretrain deadline=7d budget=$20k")
    data = json.loads(out)
    text = " ".join(data["warnings"])
    assert "deadline cannot be met" in text and "budget cannot be met" in text
    assert "x the 7 days" in text and "over the $20,000 budget" in text


def test_serving_json_has_kv_and_region(capsys):
    _, out, _ = run(capsys, "--json", "serve llama-3-8b for users in South-East Asia")
    data = json.loads(out)
    assert data["serving"]["kv_bytes_per_token"] > 0
    assert data["request"]["region"] in ("hk", "sg")


def _readme_examples():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    return re.findall(r'^(?:\$ )?gpuplan (?:--\S+ )*(?:--lang \w+ )?"([^"]+)"', text, flags=re.M)


def _help_examples():
    from gpuplan.bot.render import examples

    return [(q, "en") for q in examples("en")] + [(q, "zh") for q in examples("zh")]


def test_readme_has_examples():
    assert len(_readme_examples()) >= 5


@pytest.mark.parametrize("question", _readme_examples())
def test_every_readme_example_answers(capsys, question):
    code, out, err = run(capsys, question)
    assert code == 0, err
    assert out.strip()


@pytest.mark.parametrize("question, lang", _help_examples())
def test_every_help_example_answers(capsys, question, lang):
    code, out, err = run(capsys, question)
    assert code == 0, err
    assert out.strip()
    markers = (
        ("单卡显存", "GPU 在等数据", "能装下的最大模型", "每卡时", "每小时")
        if lang == "zh"
        else ("Memory ", "wait for data", "largest model", "per GPU-hour", "an hour")
    )
    assert any(m in out for m in markers)


def test_help_text_both_languages(capsys):
    _, out, _ = run(capsys, "help")
    assert "Examples" in out and "gpuplan" in out
    _, out, _ = run(capsys, "帮助")
    assert "示例" in out


@pytest.mark.parametrize(
    "question, words, lang_marker",
    [
        ("QLoRA full fine-tune 7b", ["full fine-tune", "qlora"], "contradict"),
        ("QLoRA全参微调7b", ["全参", "qlora"], "互相矛盾"),
        ("8卡 16卡 70b", ["8卡", "16卡"], "GPU 数量"),
    ],
)
def test_contradictions_are_named_in_the_users_language(capsys, question, words, lang_marker):
    """Two readings of one thing never stop a question: the plan uses one and names both."""
    code, out, err = run(capsys, question)
    assert code == 0 and not err
    assert all(w in out.lower() for w in words) and lang_marker in out


def test_a_setting_that_is_not_gpuplans_is_read_as_text(capsys):
    code, out, err = run(capsys, "--json", "70b full foo=bar")
    assert code == 0 and not err
    assert json.loads(out)["request"]["params_b"] == pytest.approx(70, rel=0.01)


def test_overridden_text_is_reported(capsys):
    _, out, _ = run(capsys, "--json", "gpus=4 nodes=2 8卡 70b")
    data = json.loads(out)
    assert data["request"]["gpus"] == 4
    assert any("8卡" in a for a in data["assumptions"])


def test_compare_json(capsys):
    _, out, _ = run(capsys, "--json", "A100 vs H100 for 13b full fine-tune")
    data = json.loads(out)
    assert data["intent"] == "compare"
    assert {c["gpu"] for c in data["comparison"]} == {"a100-80gb", "h100-80gb"}


def test_serving_options_are_weighed_by_speed_per_sequence_and_cost_per_token(capsys):
    """A day of serving costs what it costs whatever it serves: the fastest serving option streams
    fastest per sequence and the cheapest generates a million tokens for least."""
    _, out, _ = run(capsys, "--json", "H20和H100推理deepseek-r1哪个划算")
    data = json.loads(out)
    rows = data["comparison"]
    fastest = max(rows, key=lambda r: r["tokens_per_s_per_sequence"])
    cheapest = min(rows, key=lambda r: r["usd_per_million_tokens"])
    assert [r["fastest"] for r in rows] == [r is fastest for r in rows]
    assert [r["cheapest"] for r in rows] == [r is cheapest for r in rows]
    assert data["request"]["gpu"] == cheapest["gpu"]  # the plan shown is the cheapest per token


def test_no_option_that_does_not_fit_is_the_fastest_or_cheapest(capsys):
    _, out, _ = run(capsys, "--json", "4090还是A6000全参微调13b")
    rows = json.loads(out)["comparison"]
    assert rows and not any(r["fits"] for r in rows)
    assert not any(r["fastest"] or r["cheapest"] for r in rows)


def test_troubleshoot_without_model_needs_no_size(capsys):
    code, out, _ = run(capsys, "--json", "8张卡还是喂不满怎么办")
    data = json.loads(out)
    assert code == 0 and data["intent"] == "troubleshoot" and not data["clarify"]
    assert "gpu_starved_io" in data["topics"]


def test_an_answer_without_a_plan_gives_the_named_models_size(capsys):
    """No plan is made for a question outside the field, but the model it names is still sized in
    the request, as a plan's request would give it."""
    code, out, _ = run(capsys, "--json", "Torch 1.13.1 doesn't support sm_90, trying llm-foundry to finetune mpt-7b")
    data = json.loads(out)
    assert code == 0 and data["memory"] is None
    assert data["request"]["model"] == "mpt-7b" and data["request"]["params_b"] == pytest.approx(6.65, rel=0.02)


def test_unknown_words_are_listed(capsys):
    _, out, _ = run(capsys, "--json", "train 7b on Gaudi2")
    data = json.loads(out)
    assert "gaudi2" in data["unknown"]


@pytest.mark.parametrize(
    "question, said_back, left",
    [
        ("train 7b on Gaudi2", "gaudi2", None),
        ("qwen72b 910b280T 需要多少节点才能微调", "910b", "280t"),
    ],
)
def test_a_card_said_back_is_not_listed_again_as_not_understood(capsys, question, said_back, left):
    """The unsupported-hardware note names the card; the not-understood line keeps the rest."""
    _, out, _ = run(capsys, question)
    last = [line for line in out.splitlines() if "understood" in line or "没有读懂" in line]
    assert said_back in out.lower()
    assert (last and left in last[-1] and said_back not in last[-1]) if left else not last


def test_a_reader_that_stops_early_is_not_an_error():
    """`gpuplan "70b full" | head -1`: no BrokenPipeError traceback, exit 0."""
    import subprocess
    import sys

    code = "import sys; from gpuplan.bot.cli import main; sys.exit(main(['70b full']))"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader goes away before the plan is written out
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert "BrokenPipeError" not in err and "Traceback" not in err


# a terminal question never starts the Slack app: its settings module pulls in pydantic-settings and
# asyncio, some 45 ms of a 0.5 s answer
SLACK_APP_MODULES = ("gpuplan.bot.slack.serve", "gpuplan.bot.slack.settings", "pydantic_settings", "asyncio")
# nor the Hugging Face look-up (urllib and its HTTP stack, some 12 ms) without an `org/name` in it
HUB_MODULES = ("gpuplan.bot.hub", "urllib.request")
MASKED_ARRAYS = ("numpy.ma",)  # numpy's masked arrays (5 ms): no answer uses them


@pytest.mark.parametrize(
    "argv, unloaded",
    [
        (["70b full"], SLACK_APP_MODULES + HUB_MODULES + MASKED_ARRAYS),
        (["700亿 全参微调 8张H100"], SLACK_APP_MODULES + HUB_MODULES + MASKED_ARRAYS),
        (["--json", "qwen2.5-72b infer"], SLACK_APP_MODULES + HUB_MODULES + MASKED_ARRAYS),
        (["NCCL timeout during training on 16 nodes"], SLACK_APP_MODULES + HUB_MODULES + MASKED_ARRAYS),
        (["manifest", "--url", "https://bot.example.org"], SLACK_APP_MODULES),
        (["config", "deepspeed", "70b full"], SLACK_APP_MODULES),
    ],
)
def test_a_command_imports_only_what_it_uses(argv, unloaded):
    import subprocess
    import sys

    code = (
        "import sys, io, contextlib; from gpuplan.bot.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()): assert main({argv!r}) == 0\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    loaded = set(proc.stdout.split())
    assert [m for m in unloaded if m in loaded] == []


@pytest.mark.parametrize("argv, frozen", [(None, True), (["70b full"], False), (["--json", "700亿 全参微调"], False)])
def test_only_the_program_itself_freezes_the_garbage_collector(monkeypatch, capsys, argv, frozen):
    """`gpuplan ...` (argv None: one command, then the process ends) moves what it made out of the
    collector's sight; a caller in a process of its own (tests, a server) passes argv and keeps it."""
    import atexit
    import gc

    monkeypatch.setattr(sys, "argv", ["gpuplan", "70b full"])
    registered = []
    monkeypatch.setattr(atexit, "register", registered.append)
    gc.unfreeze()
    try:
        assert main(argv) == 0
        assert (gc.get_freeze_count() > 0, gc.freeze in registered) == (frozen, frozen)
    finally:
        gc.unfreeze()
    capsys.readouterr()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_help_lists_every_setting(lang):
    """The settings line of the help is written by hand: every key gpuplan reads must be on it."""
    from gpuplan.bot import render
    from gpuplan.bot.language.keys import KEYS

    words = render.help_text(lang).split()
    assert [k.name for k in KEYS if k.name not in words] == []


# --- gpuplan config FORMAT / --config FORMAT ------------------------------------------------------


def test_config_subcommand_prints_each_file_under_its_name(capsys):
    code, out, err = run(capsys, "config", "deepspeed", "llama-3.1-70b full gpus=8 zero=3 offload=cpu tp=1")
    assert code == 0 and not err
    assert "===== ds_z3_offload_config.json =====" in out and "===== launch_deepspeed.sh =====" in out
    config = json.loads(out.split("=====\n", 1)[1].split("\n=====")[0])
    assert config["zero_optimization"]["offload_optimizer"]["device"] == "cpu"


def test_config_subcommand_writes_files_into_a_directory(capsys, tmp_path):
    code, out, _ = run(capsys, "config", "vllm", "--out", str(tmp_path), "llama-3.1-70b infer gpus=2 gpu=h100")
    assert code == 0
    script = tmp_path / "serve_vllm.sh"
    assert str(script) in out and script.stat().st_mode & 0o111
    assert "--tensor-parallel-size 2" in script.read_text()


def test_config_format_that_cannot_express_the_plan_exits_2_naming_those_that_can(capsys):
    code, out, err = run(capsys, "config", "vllm", "llama-3.1-8b lora gpu=rtx-4090 gpus=1")
    assert code == 2 and not out
    assert "vllm" in err and "deepspeed, torchrun, llamafactory" in err


def test_config_errors_in_chinese(capsys):
    code, _, err = run(capsys, "config", "vllm", "用一张4090对llama-3.1-8b做lora微调")
    assert code == 2 and "适用的格式" in err


def test_config_unknown_format_exits_2(capsys):
    code, _, err = run(capsys, "config", "slurm", "70b full")
    assert code == 2 and "deepspeed" in err


def test_json_with_config_adds_the_files(capsys):
    code, out, _ = run(capsys, "--json", "--config", "vllm", "qwen2.5-7b infer gpu=l40s")
    data = json.loads(out)
    assert code == 0 and set(data["configs"]) == {"serve_vllm.sh"}
    assert f"--max-num-seqs {data['serving']['max_concurrency']}" in data["configs"]["serve_vllm.sh"]


def test_json_without_config_has_no_configs_key(capsys):
    _, out, _ = run(capsys, "--json", "qwen2.5-7b infer gpu=l40s")
    assert "configs" not in json.loads(out)


def test_text_answer_with_config_appends_the_files(capsys):
    code, out, _ = run(capsys, "--config", "torchrun", "llama-3.1-8b full gpus=16 gpu=h100 tp=1")
    assert code == 0 and "Memory " in out and "===== launch_torchrun.sh =====" in out
    assert "--nnodes 2" in out


@pytest.mark.parametrize(
    "question, said",
    [
        ("4张 Mi50 16G 能跑 qwen2.5-14b 推理吗", "方案改按它的 16 GB 显存估算"),
        ("Can 4 Mi50 16GB run qwen2.5-14b inference?", "the plan is for a card of its 16 GB instead"),
    ],
)
def test_a_card_the_catalog_lacks_is_planned_by_its_memory_in_the_askers_language(capsys, question, said):
    code, out, _ = run(capsys, question)
    assert code == 0 and said in out
    assert "4 × 16 GB GPU (≈ " in out or "4 x 16 GB GPU (≈ " in out
    assert "figures of" not in out  # no English inside the Chinese answer


@pytest.mark.parametrize(
    "question, headline",
    [
        ("kimi k2 serve on 16 h200", "Kimi K2 (MoE, MLA) (1.03T parameters, 32.9B active per token)"),
        ("pretrain a 350m parameters model on 8 A100", "gpuplan: 350M (352M parameters)"),
        ("1.5万亿参数模型预训练", "gpuplan：1500B（1.5T 参数）"),
        ("70b full", "gpuplan: 70B (70.1B parameters)"),
    ],
)
def test_headline_writes_the_size_in_its_unit(capsys, question, headline):
    """A trillion parameters is 1.03T (it had printed "1.03kB"), a small model 353M, not 0.35B: the
    model line under the headline of the whole answer (--details)."""
    _, out, _ = run(capsys, "--details", question)
    assert headline in out.splitlines()[2]


def test_an_output_that_cannot_hold_chinese_gets_escapes_not_a_crash():
    """PYTHONIOENCODING=ascii (or an old terminal): the answer is printed with escapes, the JSON
    ASCII-escaped and still valid, instead of every answer failing with UnicodeEncodeError."""
    import subprocess

    env = {**os.environ, "PYTHONIOENCODING": "ascii", "GPUPLAN_HF_LOOKUP": "0"}
    run_ = [sys.executable, "-m", "gpuplan.bot.cli"]
    text = subprocess.run([*run_, "70b 全参微调"], capture_output=True, text=True, env=env, timeout=120)
    assert text.returncode == 0 and "\\u5168" in text.stdout
    out = subprocess.run([*run_, "--json", "70b 全参微调"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and json.loads(out.stdout)["lang"] == "zh"
