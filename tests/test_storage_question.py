"""Asked how much disk a run needs, the first line gives what the plan keeps on it, by part."""

import pytest

from gpuplan.bot import render
from gpuplan.bot.pipeline import answer
from gpuplan.estimator import io
from gpuplan.estimator.architecture import for_model


def test_a_run_keeps_the_weights_it_starts_from_as_released():
    llama, deepseek = for_model("llama-3-8b"), for_model("deepseek-v3")
    assert io.base_weights_gb(llama, "lora") == pytest.approx(llama.params * 2 / 1e9)
    assert io.base_weights_gb(deepseek, "full") == pytest.approx(deepseek.params * 1 / 1e9)  # released in fp8
    assert io.base_weights_gb(llama, "pretrain") == 0.0  # from scratch


def test_a_lora_disk_is_mostly_the_base_model():
    plan = answer("训练qwen2.5-7b lora需要多大的硬盘")
    v, kept = plan.verdict, plan.estimate.io
    assert v.kind == "storage" and v.asked == "storage"
    parts = kept.base_gb + kept.dataset_gb + kept.checkpoint_gb * kept.retained_checkpoints + kept.export_gb
    assert v.storage_gb == pytest.approx(parts * io.HEADROOM) and kept.base_gb > parts / 2
    assert render.headline(plan).startswith(f"约需 {render.size(v.storage_gb)} 硬盘空间")


def test_pretraining_keeps_no_base_model_and_serving_keeps_the_weights_twice():
    pretrain = answer("pretrain a 7b on 1T tokens, how much disk?")
    assert pretrain.verdict.base_gb == 0.0 and "base model" not in render.headline(pretrain)
    serving = answer("serve llama 3 8b, how big a disk do I need?")
    v = serving.verdict
    assert v.kind == "storage" and v.storage_gb == pytest.approx(v.base_gb * 2 * io.HEADROOM)
    assert render.headline(serving).startswith("About ")


def test_the_host_ram_asked_is_the_offloaded_state_per_server():
    plan = answer("how much host RAM do I need for zero-3 offload of a 70b")
    v = plan.verdict
    assert v.kind == "host_ram" and v.offload == "cpu"
    assert v.host_ram_gib == plan.estimate.io.host_ram_gib > 70 * 16 / 1.074  # Adam's 16 bytes a parameter, in GiB
    assert render.headline(plan).startswith(f"About {render.gib(v.host_ram_gib)} GiB of host RAM per server")


def test_local_disks_are_sized_per_server_and_shared_storage_in_all():
    local = answer("2 nodes of 8 a100, llama 3 70b lora, how much storage do we need?")
    v = local.verdict
    assert v.storage == "nvme" and v.nodes == 2 and v.storage_gb_per_node < v.storage_gb
    said = render.headline(local)
    assert said.startswith(f"About {render.size(v.storage_gb_per_node)} of disk on each of the 2 servers (local NVMe)")
    assert "split over the servers" in said
    shared = answer("how much disk space do I need to fine-tune llama 3 70b?")
    assert shared.verdict.nodes > 4 and render.headline(shared).startswith(
        f"About {render.size(shared.verdict.storage_gb)} of disk (central object storage"
    )
