"""Data pipeline, storage and host RAM, with the arithmetic written out."""

import pytest

from gpuplan.estimator import io
from gpuplan.estimator.architecture import for_model
from gpuplan.estimator.memory import GIB, Job, loaded_model_bytes


def test_checkpoint_bytes_full_and_adapters(cat):
    a = for_model("llama-2-7b")
    # resumable checkpoint: 16-bit weights (2) + fp32 master, m, v (12) = 14 bytes per parameter
    assert io.checkpoint_bytes(a, "full", "bf16-mixed", "adamw", 16) == pytest.approx(14 * a.params)
    assert io.checkpoint_bytes(a, "ppo", "bf16-mixed", "adamw", 16) == pytest.approx(2 * 14 * a.params)
    assert io.checkpoint_bytes(a, "lora", "bf16-mixed", "adamw", 16) == pytest.approx(14 * a.lora_params(16))
    assert io.export_bytes(a, "full", 16) == 2 * a.params


def test_read_rate_for_pretokenised_text(cat):
    a = for_model("llama-2-7b")
    plan = io.training_io(
        cat,
        Job(a, "pretrain", "bf16-mixed", "adamw", 4096, 16),
        precision="bf16-mixed",
        train_tokens=1e12,
        epochs=1,
        dataset_gb=None,
        data_kind="tokens",
        tokens_per_s_total=1_000_000,
        gpus=256,
        per_node=8,
        offload_gib_per_node=0,
        nvme_gib_per_node=0,
    )
    # 1M tokens/s x 4 bytes = 4 MB/s in total, over 32 nodes
    assert plan.read_mb_s == pytest.approx(4.0)
    assert plan.read_mb_s_per_node == pytest.approx(4.0 / 32)
    assert plan.dataset_gb == pytest.approx(1e12 * 4 / 1e9)
    assert plan.storage == "object-gds" and plan.storage_reason == "multi_node"  # 32 nodes share storage


def _decoded_data_io(cat, kind: str, tokens_per_s_total: float) -> dict:
    """Llama 3 8B full fine-tune on one 8-GPU node, fed with decoded media of the given kind."""
    return io.training_io(
        cat,
        Job(for_model("llama-3-8b"), "full", "bf16-mixed", "adamw", 2048, 16),
        precision="bf16-mixed",
        train_tokens=1e9,
        epochs=1,
        dataset_gb=None,
        data_kind=kind,
        tokens_per_s_total=tokens_per_s_total,
        gpus=8,
        per_node=8,
        offload_gib_per_node=0,
        nvme_gib_per_node=0,
    )


def test_images_need_decode_cores(cat):
    plan = _decoded_data_io(cat, "image", 576 * 2400)
    # 2,400 images/s at 150 per core = 16 cores; 2,400 x 150 KB = 360 MB/s
    assert plan.decode_cores_per_node == pytest.approx(16)
    assert plan.read_mb_s == pytest.approx(360)
    assert plan.dataloader_workers_per_gpu == 3  # 16 cores / 8 GPUs x 1.5, rounded up


def test_cpu_bound_video(cat):
    plan = _decoded_data_io(cat, "video", 2000 * 400)
    # 400 s of video per second at 2 s per core-second = 200 cores > 0.75 x 96
    assert plan.decode_cores_per_node == pytest.approx(200)
    assert plan.cpu_bound


def _full_io(cat, a, tokens: float) -> dict:
    """A full fine-tune on 16 GPUs (2 nodes) reading pre-tokenised data at 100k tokens/s."""
    job = Job(a, "full", "bf16-mixed", "adamw", 2048, 16)
    return io.training_io(
        cat,
        job,
        precision="bf16-mixed",
        train_tokens=tokens,
        epochs=1,
        dataset_gb=None,
        data_kind="tokens",
        tokens_per_s_total=1e5,
        gpus=16,
        per_node=8,
        offload_gib_per_node=0,
        nvme_gib_per_node=0,
    )


def test_storage_grows_to_raid_when_local_disk_is_small(cat):
    a = for_model("llama-3-70b")
    plan = _full_io(cat, a, 1e11)
    # 70.6B x 14 B = 988 GB per checkpoint, 2 kept over 2 nodes + 141 GB export + 400 GB data + the base
    # model's 141 GB as released in bf16, x 1.2 headroom
    local_tb = (400 + 141 + 988 * 2 / 2 + 141) * 1.2 / 1000
    assert plan.storage_tb_per_node == pytest.approx(local_tb, rel=0.01)
    assert plan.storage == "nvme"
    big = _full_io(cat, a, 2e12)
    assert big.storage == "nvme-raid"  # 8 TB of data no longer fits one 7.68 TB drive


def test_host_ram_counts_offload_loading_and_processes(cat):
    a = for_model("llama-2-7b")
    ram = io.host_ram_gib(cat, a.params * 2.0, gpus=8, per_node=8, offload_gib_per_node=100)
    assert ram == pytest.approx(100 * 1.5 + a.params * 2 / GIB + 8 * 8)


def test_a_qlora_node_loads_the_nf4_model_not_the_16_bit_checkpoint(cat):
    """Host RAM for QLoRA counts the model as Transformers keeps it while loading under FSDP: NF4."""
    a = for_model("llama-2-7b")
    job = Job(a, "qlora", "bf16-mixed", "paged-adamw8bit", 2048)
    plan = io.training_io(
        cat,
        job,
        precision="bf16-mixed",
        train_tokens=1e8,
        epochs=1.0,
        dataset_gb=None,
        data_kind="text",
        tokens_per_s_total=1e4,
        gpus=2,
        per_node=8,
        offload_gib_per_node=0.0,
        nvme_gib_per_node=0.0,
    )
    assert plan.host_ram_gib == pytest.approx(loaded_model_bytes(job) / GIB + 2 * 8)
    assert loaded_model_bytes(job) < 0.3 * a.params * 2.0
