"""The first parser: key=value tokens, model and size, method, GPU and counts (table-driven)."""

import pytest

from gpuplan.bot.language.parser import detect_lang, parse, strip_slack_markup

CASES = [
    ("70b full", dict(params_b=70, method="full")),
    ("llama-3-70b lora gpu=a100 gpus=2", dict(model="llama-3-70b", method="lora", gpu="a100-80gb", gpus=2)),
    ("model=qwen2.5-72b method=qlora seq=8k", dict(model="qwen2.5-72b", method="qlora", seq_len=8192)),
    ("700亿 全参微调 8张H100", dict(params_b=70, method="full", gpu="h100-80gb", gpus=8)),
    ("2台8卡A800能全参训练70B吗", dict(params_b=70, gpu="a800-80gb", gpus=16, nodes=2)),
    ("我们想用QLoRA微调一个33B的模型", dict(params_b=33, method="qlora")),
    ("Llama-3.1-70B-Instruct inference on H200", dict(model="llama-3.1-70b", method="infer", gpu="h200-141gb")),
    ("pretrain model=6.7b seq=2048 tokens=1T gpu=a100-80gb", dict(params_b=6.7, method="pretrain", train_tokens=1e12)),
    ("continued pretraining of qwen2.5-7b", dict(model="qwen2.5-7b", method="continue")),
    ("增量预训练 7b", dict(params_b=7, method="continue")),
    ("dpo on mistral 7b", dict(model="mistral-7b", method="dpo")),
    ("RLHF for llama3 8b", dict(model="llama-3-8b", method="ppo")),
    ("部署 通义千问72B", dict(model="qwen2.5-72b", method="infer")),
    ("8x H100 for 70b full fine-tune", dict(params_b=70, gpu="h100-80gb", gpus=8, method="full")),
    ("zero=fsdp 70b", dict(params_b=70, zero=3)),
    ("70b budget=5万美元 deadline=2周", dict(params_b=70, budget_usd=50_000, deadline_days=14)),
    ("70b optim=paged_adamw8bit", dict(params_b=70, optimizer="paged-adamw8bit")),
    ("qlora 70b offload=cpu-all loss=unchunked", dict(params_b=70, offload="cpu-all", loss="unchunked")),
    ("７０ｂ　ｆｕｌｌ", dict(params_b=70, method="full")),  # full-width characters
]


@pytest.mark.parametrize("text, expect", CASES)
def test_parse_table(text, expect):
    parsed = parse(text)
    assert not parsed.errors, parsed.errors
    got = parsed.request.model_dump()
    for key, value in expect.items():
        assert got[key] == pytest.approx(value), key


def test_key_value_beats_free_text():
    parsed = parse("llama-3-70b full on 8 H100 model=7b method=lora gpus=2 gpu=a100")
    r = parsed.request
    assert (r.model, r.params_b, r.method, r.gpus, r.gpu) == (None, 7, "lora", 2, "a100-80gb")


def test_slack_markup_is_stripped():
    assert strip_slack_markup("<@U123> 70b <https://x.y|the docs> <!here> <#C1|general>").split() == [
        "70b",
        "the",
        "docs",
    ]
    parsed = parse("<@U0BOT> 70b full")
    assert parsed.request.params_b == 70


@pytest.mark.parametrize(
    "escaped, field, value",
    [
        (r"lora 7b on 3\*8\*A100", "gpus", 24),
        (r"qlora 70b max\_len=8k", "seq_len", 8192),
        (r"qlora 70b with --max\_seq\_length 8192", "seq_len", 8192),
    ],
)
def test_markdown_escapes_read_as_the_characters_they_escape(escaped, field, value):
    """Slack and GitHub escapes pasted along (`\\_`, `\\*`) read as the plain characters."""
    assert getattr(parse(escaped).request, field) == value
    assert parse(escaped).request == parse(escaped.replace("\\", "")).request


def test_language_detection():
    assert detect_lang("70b 全参") == "zh" and detect_lang("70b full") == "en"
    parsed = parse("70b full lang=zh")
    assert parsed.lang == "zh" and parsed.lang_given


def test_currency_assumption_recorded():
    parsed = parse("7b lora budget=50万人民币")
    assert parsed.request.budget_usd == pytest.approx(500_000 / 7.2)
    assert [n.code for n in parsed.notes] == ["currency_converted"]


@pytest.mark.parametrize(
    "text, code",
    [
        ("70b seq=abc", "bad_value"),
        ("model=gpt-9", "unknown_model"),
        ("70b gpu=tpu", "unknown_gpu"),
        ("70b ckpt=sometimes", "bad_value"),
        ("70b loss=liger", "bad_value"),
    ],
)
def test_bad_tokens_are_named(text, code):
    assert code in [e.code for e in parse(text).errors]


def test_unknown_model_suggests_close_names():
    errors = parse("model=llama-3-7b").errors
    assert errors[0].code == "unknown_model" and errors[0].params["suggestions"]


@pytest.mark.parametrize("text", ["help", "Help", "HELP", "What can you do?", "帮助"])
def test_help_in_any_case(text):
    assert parse(text).intent == "help"


@pytest.mark.parametrize(
    "text, kind",
    [("Compare lora and full for llama 70b", "method"), ("A100 VS H100 for 13b lora", "gpu")],
)
def test_comparisons_in_any_case(text, kind):
    parsed = parse(text)
    assert parsed.intent == "compare" and parsed.compare["kind"] == kind and len(parsed.compare["options"]) == 2


@pytest.mark.parametrize(
    "text",
    ["Hi team,\nmodel=llama-3-70b gpus=8 method=lora", "我们有8张卡，\nmodel=llama-3-70b gpus=8 method=lora"],
)
def test_settings_after_a_line_ending_in_a_comma(text):
    assert parse(text).fixed == {"model", "gpus", "method"}


def test_settings_inside_a_call_are_the_call_s():
    assert "seq_len" not in parse("Trainer(model=m,\nseq=4k)\nllama 7b lora").fixed


@pytest.mark.parametrize(
    "text, key", [("llama 7b lora sqe=4k", "seq"), ("methd=lora llama 7b", "method"), ("regoin=tokyo 7b", "region")]
)
def test_a_misspelt_setting_is_pointed_out(text, key):
    hints = [n.params for n in parse(text).notes if n.code == "not_a_setting"]
    assert [h["key"] for h in hints] == [key]


def test_names_in_pasted_code_are_not_taken_for_misspelt_settings():
    assert not [n for n in parse("```\ngpuss=8\n```\nllama 7b").notes if n.code == "not_a_setting"]


def test_the_model_set_aside_is_named_by_its_own_words():
    parsed = parse("Fine-tuning Llama 3.1 8B works fine. Can I fine-tune Llama 3.1 70B on 8 A100?")
    assert parsed.request.model == "llama-3.1-70b"
    [note] = [n for n in parsed.notes if n.code == "set_aside"]
    assert note.params == {"field": "model", "used": "llama 3.1 70b", "other": "llama 3.1 8b"}


def test_token_rates_and_amounts_are_not_lengths():
    assert parse("serve llama-3-8b on one L4 at 2000 tokens/s").request.seq_len is None
    assert parse("training data is 50000 tokens").request.train_tokens == 50000
    assert parse("qwen 7b lora with 3000 tokens per sample").request.seq_len == 3000


def test_a_full_stop_ends_a_model_name():
    assert parse("I use llama-3-8b. It runs out of memory").request.model == "llama-3-8b"
    assert parse("qwen2.5 7b lora").request.model == "qwen2.5-7b"  # a version's dot is not a full stop


@pytest.mark.parametrize(
    "question, family, models",
    [
        ("fine-tune LLaMA 3 on 4 A100", "llama-3", ["llama-3-8b", "llama-3-70b"]),
        ("llama 3.1 qlora", "llama-3.1", ["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b"]),
        ("用qwen3做lora微调", "qwen3", ["qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-8b", "qwen3-14b", "qwen3-32b"]),
    ],
)
def test_a_family_without_a_size_is_asked_back_with_its_sizes(question, family, models):
    """The family's own sizes, smallest first (not its coder or VL variants), and a plan question."""
    from gpuplan.bot.pipeline import answer

    plan = answer(question)
    assert plan.intent == "plan" and plan.estimate is None
    note = next(n for n in plan.notes + plan.clarify if n.code == "model_family_sizes")
    assert note.params == {"value": family, "models": models}


@pytest.mark.parametrize(
    "text, words, expected",
    [
        ("is there any use case for fp8 on the 4090?", "4090", 0),  # "there" is not "here"
        ("where i work we have 4 a100", "a100", 1),
        ("a100s aren't available to me", "a100s", -1),
        ("the paper used 8 a100", "a100", -1),
        ("我没有a100", "a100", -1),
        ("我的3090", "3090", 2),
    ],
)
def test_owner_of_a_mention(text, words, expected):
    from gpuplan.bot.language.sentences import owner

    start = text.index(words)
    assert owner(text, (start, start + len(words))) == expected


def test_a_path_in_backticks_is_no_hugging_face_id():
    """Only a whole `org/name` quoted in a sentence is a model's id; a config file's path is not."""
    assert parse("I am running `examples/train_lora/llama3_lora_sft.yaml` on 8 A100").hub_id is None
    assert parse("using the `EleutherAI/pythia-12b` as the base model").hub_id == "EleutherAI/pythia-12b"


@pytest.mark.parametrize(
    "text, used, others",
    [
        # each later reading replaced the one used before it: one note, naming the reading used
        ("多卡训练时GPU利用率很低，单卡运行GPU利用率可以跑满，但是多卡（2卡、8卡）运行时很慢", "单卡", {"2卡", "8卡"}),
        ("单卡部署qwen-7b需要9g显存，然后放到两张8g的卡上，0卡的占用是2g，1卡的占用是7.8g", "单卡", {"两张 8g的卡"}),
    ],
)
def test_readings_set_aside_name_the_one_used(text, used, others):
    notes = [n.params for n in parse(text).notes if n.code == "set_aside" and n.params["field"] == "gpus"]
    assert {n["used"] for n in notes} == {used}  # no two notes contradict
    assert {n["other"] for n in notes} == others  # "1卡" is the count used, set aside under no name


def test_no_two_notes_of_a_field_name_different_readings_used():
    from tests.test_parser_table import CASES

    for case in CASES:
        notes = [n.params for n in parse(case.values[0]).notes if n.code == "set_aside"]
        for field in {n["field"] for n in notes}:
            assert len({n["used"] for n in notes if n["field"] == field}) == 1, (case.values[0], notes)


@pytest.mark.parametrize(
    "question, read",
    [
        ("serve qwen2.5-7b in fp8 on a 4090. why is fp8 slow?", "fp8"),
        ("lora llama 3 8b on a 24gb card; my 24gb card runs out of memory", "24gb"),
        ("MiniCPM-V 2.6 int4 24G显存不够用，但我24G的OOM", "24g"),
    ],
)
def test_a_word_read_and_said_again_is_not_called_not_understood(question, read):
    """The leftovers are the words nothing read; a second mention of one that was read is none."""
    assert read not in parse(question).unknown
