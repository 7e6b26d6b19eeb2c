import json
import threading
from pathlib import Path

import pytest
from dbs import BACKENDS, fresh_url

from gpuplan.bot import jsonout, render
from gpuplan.bot.answer import Answer, Reading
from gpuplan.bot.configs import export, formats_for
from gpuplan.bot.pipeline import answer
from gpuplan.bot.slack import blocks
from gpuplan.bot.slack.settings import Settings
from gpuplan.bot.slack.store import ID_ALPHABET, ID_LENGTH, Store, new_id, plans
from gpuplan.estimator.schema import Request


@pytest.fixture(params=BACKENDS)
def store(request, tmp_path):
    url = Settings.model_validate(
        {
            "SLACK_BOT_TOKEN": "xoxb-t",
            "SLACK_SIGNING_SECRET": "s",
            "GPUPLAN_DATABASE_URL": fresh_url(request.param, tmp_path),
        }
    ).database_url
    s = Store(url)
    yield s
    s.dispose()


def test_ids_are_short_and_unambiguous():
    ids = {new_id() for _ in range(2000)}
    assert len(ids) == 2000
    assert all(len(i) == ID_LENGTH and set(i) <= set(ID_ALPHABET) for i in ids)
    assert not set("01ilo") & set(ID_ALPHABET)


def test_plan_round_trip_is_exact(store):
    plan = answer("llama-3-70b full gpus=16")
    plan_id = store.save_plan(plan, "llama-3-70b full gpus=16", "summary", "command", "T1", "U1", "C1")
    stored = store.get_plan(plan_id)
    assert stored.question == "llama-3-70b full gpus=16" and stored.source == "command"
    assert stored.plan() == plan
    assert store.get_plan(plan_id.upper()).id == plan_id  # ids are read case-insensitively
    assert store.get_plan("nosuchid") is None and store.get_plan("") is None


def test_recent_plans_are_per_user_newest_first(store):
    plan = answer("7b lora")
    ids = [store.save_plan(plan, f"q{i}", "s", "command", "T1", "U1", "C1") for i in range(3)]
    store.save_plan(plan, "other", "s", "command", "T1", "U2", "C1")
    recent = store.recent_plans("T1", "U1")
    assert [p.id for p in recent] == ids[::-1]
    assert [p.id for p in store.recent_plans("T1", "U1", limit=2)] == ids[:0:-1]
    assert store.recent_plans("T2", "U1") == []
    assert store.count_plans() == 4


def test_threads_remember_the_latest_request(store):
    assert store.thread("C1", "1.1") is None
    store.remember_thread("C1", "1.1", Request(model="llama-3-70b", method="full"), "en", "abc")
    store.remember_thread("C1", "1.1", Request(model="llama-3-70b", method="lora"), "zh", "def")
    request, lang, plan_id = store.thread("C1", "1.1")
    assert request.method == "lora" and lang == "zh" and plan_id == "def"
    assert store.thread("C2", "1.1") is None


def test_an_event_is_claimed_once(store):
    assert store.claim_event("Ev1") is True
    assert store.claim_event("Ev1") is False
    store.release_event("Ev1")
    assert store.claim_event("Ev1") is True
    assert store.claim_event("") is True  # no id: nothing to dedupe on
    assert store.prune_events(older_than_s=-1) == 1


def test_concurrent_claims_have_one_winner(store):
    """Several workers racing for the same retried event: exactly one wins."""
    results = []

    def claim():
        results.append(store.claim_event("EvRace"))

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 1


def test_two_stores_share_one_database(store):
    other = Store(store.url)
    plan = answer("7b lora")
    plan_id = store.save_plan(plan, "q", "s", "command", "T1", "U1", "C1")
    assert other.get_plan(plan_id) is not None
    store.remember_thread("C1", "9.9", Request(params_b=7), "en", plan_id)
    assert other.thread("C1", "9.9")[2] == plan_id
    assert store.claim_event("EvShared") and not other.claim_event("EvShared")
    other.dispose()


def test_ping(store):
    store.ping()


def test_old_event_ids_are_pruned_as_claims_go_by(store, monkeypatch):
    import gpuplan.bot.slack.store as module

    monkeypatch.setattr(module, "PRUNE_EVERY", 5)
    monkeypatch.setattr(module, "EVENT_TTL_S", -1)  # everything counts as old
    for i in range(4):
        assert store.claim_event(f"EvOld{i}")
    assert store.claim_event("EvFifth")  # the fifth claim prunes the four before it first
    assert store.claim_event("EvOld0")


@pytest.mark.parametrize(
    "question",
    [
        "70b full gpus=2",  # a tier whose start does not hold it
        "llama-3-70b lora: A100 or H100?",  # a comparison
        "largest model 8 H100 can train",
        "8 H100 for two weeks in Tokyo, how much?",
        "how much VRAM does qwen2.5-7b need for lora",  # the least memory per method
        "GPU utilization only 40% on 8 GPUs, dataloader is slow",  # diagnoses and their facts, no plan
    ],
)
def test_a_stored_plan_of_every_kind_opens_as_it_was(question):
    """A plan is stored as its JSON without defaults and opened later (`show`): the typed parts of
    the answer (tier, comparison, largest, price, footprint, diagnoses, facts) come back equal."""
    plan = answer(question)
    assert Answer.model_validate_json(plan.model_dump_json(exclude_defaults=True)) == plan


# Rows the Slack app stored while Plan still carried the reading (lang, intent, notes, clarify, read,
# topics, unknown, findings): a price, the largest model, a question back, a Chinese plan, a diagnosis
# without a plan, help, words not understood and a pasted launcher line, recorded before the change
STORED_BEFORE_READING_SPLIT = Path(__file__).parent / "data" / "stored_plans" / "before_reading_split.json"


def _insert_row(store: Store, plan_id: str, row: dict) -> None:
    values = {"id": plan_id, "created_at": 0.0, "source": "command", "summary": "", **row}
    with store.engine.begin() as conn:
        conn.execute(plans.insert(), values)


@pytest.mark.parametrize("row", json.loads(STORED_BEFORE_READING_SPLIT.read_text(encoding="utf-8")))
def test_a_row_stored_with_the_reading_inside_the_plan_opens_as_it_was(store, row):
    """A stored row opens as an Answer: the reading as stored, the findings made again from the largest
    model or the price as they were stored, and every field but the findings dumped back as stored."""
    _insert_row(store, "oldrow23", row)
    loaded = store.get_plan("oldrow23").plan()
    stored = json.loads(row["plan"])
    as_stored = Reading.model_validate({key: value for key, value in stored.items() if key in Reading.model_fields})
    assert Reading.model_validate(loaded.model_dump(include=set(Reading.model_fields))) == as_stored
    assert [n.model_dump() for n in loaded.findings] == stored.get("findings", [])
    without_findings = {key: value for key, value in stored.items() if key != "findings"}
    assert json.loads(loaded.model_dump_json(exclude_defaults=True)) == without_findings
    assert render.text_answer(loaded) and jsonout.plan_json(loaded)["lang"] == row["lang"]
    assert not blocks.violations(blocks.plan_message(loaded, "oldrow23"))


# The estimate's `architecture` as plans stored it before it was the whole Shape (ArchitectureUsed,
# stored without its defaults), recorded from these questions' answers before the change
ARCHITECTURES_STORED_BEFORE = [
    (
        "70b full",
        {"name": "70B", "layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8, "head_dim": 128}
        | {"ffn_hidden": 28416, "vocab": 128256},
    ),
    (
        "deepseek-v3 lora on 64 H100",
        {"name": "DeepSeek-V3 (MoE, MLA)", "layers": 61, "hidden": 7168, "heads": 128, "kv_heads": 128}
        | {"head_dim": 192, "ffn_hidden": 18432, "vocab": 129280, "experts": 256, "experts_per_token": 8}
        | {"kv_lora_rank": 512},
    ),
    (
        "mixtral-8x7b lora on 8 A100",
        {"name": "Mixtral 8x7B (MoE)", "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128}
        | {"ffn_hidden": 14336, "vocab": 32000, "experts": 8, "experts_per_token": 2},
    ),
    (
        "gpt-2 xl full",  # LayerNorm, a plain MLP and biases: left out then
        {"name": "GPT-2 XL 1.5B", "layers": 48, "hidden": 1600, "heads": 25, "kv_heads": 25, "head_dim": 64}
        | {"ffn_hidden": 6400, "vocab": 50257, "tied": True},
    ),
    (
        "qwen2.5-vl-7b lora",
        {"name": "Qwen2.5-VL 7B", "layers": 28, "hidden": 3584, "heads": 28, "kv_heads": 4, "head_dim": 128}
        | {"ffn_hidden": 18944, "vocab": 152064, "vision_params": 670000000},
    ),
]


def _stored_with(plan: Answer, architecture: dict) -> Answer:
    stored = json.loads(plan.model_dump_json(exclude_defaults=True))
    stored["estimate"]["architecture"] = architecture
    return Answer.model_validate_json(json.dumps(stored))


@pytest.mark.parametrize(("question", "architecture"), ARCHITECTURES_STORED_BEFORE)
def test_a_plan_stored_with_the_shape_in_part_opens_with_the_whole_shape(question, architecture):
    """A plan stored before the estimate kept the whole Shape opens as the plan made today: what it
    left out (Qwen's query bias, the experts' width, MLA) comes back from the catalog."""
    plan = answer(question)
    old = _stored_with(plan, architecture)
    assert old == plan
    assert all(export(old, fmt) == export(plan, fmt) for fmt in formats_for(plan))


def test_a_generic_moe_shape_stored_in_part_opens_as_a_plan_without_its_shape():
    """A generic mixture of experts stored without its expert width cannot be completed from the
    catalog: it opens as a plan stored before shapes were kept (the math modal quotes no shape)."""
    plan = answer("a 200b moe model with 20b active, full fine-tune")
    stored = {"name": "200B-A20B (MoE)", "layers": 47, "hidden": 6144, "heads": 48, "kv_heads": 8, "head_dim": 128}
    old = _stored_with(plan, stored | {"ffn_hidden": 16384, "vocab": 128256, "experts": 120, "experts_per_token": 8})
    assert old.estimate.architecture is None and plan.estimate.architecture.experts == 120
    assert old.estimate.resolved == plan.estimate.resolved


def test_a_plan_stored_today_keeps_its_whole_shape():
    """What a plan stores now is the whole NamedShape: it opens as stored, not from the catalog."""
    plan = answer("qwen3-30b-a3b lora on 8 H100")
    stored = json.loads(plan.model_dump_json(exclude_defaults=True))["estimate"]["architecture"]
    assert {"moe_ffn_hidden", "qk_norm"} <= set(stored)
    assert _stored_with(plan, stored) == plan
