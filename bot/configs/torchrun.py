"""torchrun: the node and GPU layout (one process per GPU), the rendezvous at node 0 and NCCL's
settings for the fabric between nodes (torch.distributed.run's own arguments)."""

from __future__ import annotations

from gpuplan.bot.configs import common
from gpuplan.bot.configs.launch import ConfigError, Launch
from gpuplan.bot.configs.text import Script, Words


def check(launch: Launch) -> None:
    if launch.serving:
        raise ConfigError("config_training_only", format="torchrun")
    common.even_nodes(launch, "torchrun")


def files(launch: Launch, words: Words) -> dict[str, str]:
    check(launch)
    extra = [words("header_run_all_rdzv")] if launch.nodes > 1 else []
    script = Script(common.header(launch, words, *extra, *common.fabric_note(launch, words)))
    # torchrun's c10d rendezvous numbers the nodes: no NODE_RANK
    script.variables = [*common.rendezvous(launch, words, node_rank=False), common.train_script(words)]
    script.exports = common.nccl_exports(launch, words)
    script.commands = [["torchrun", *common.torchrun_flags(launch), '"$TRAIN_SCRIPT"']]
    return {"launch_torchrun.sh": script.text()}
