"""What the question says of the job's setup, read through the reading engine's rules
(knowledge/rules/, engine.py) where they have moved: the network between servers, the frameworks,
the serving concurrency and users, batches, the deadline, the budget, training options (precision,
the KV cache's type, sharding, checkpointing, offload, parallelism, optimizer, LoRA rank) and the
context (objective, data kind, users' area, region)."""

from __future__ import annotations

import functools
import re

from gpuplan.bot.language import engine
from gpuplan.bot.language.compiled import compiled
from gpuplan.bot.language.reader_state import ReaderState
from gpuplan.bot.language.vocabulary import vocabulary
from gpuplan.estimator.schema import Note

# InfiniBand or RoCE named without a speed, on a GPU type whose servers usually have another
# network: the older generation (HDR 200 Gb/s InfiniBand, 200 GbE RoCE), the cautious reading
UNSTATED_SPEED = {"ib": "ib-hdr200", "roce": "roce-200"}

# the KV cache's element type written in prose ("fp8 kv cache", "KV cache in int8", "kv cache 量化为 int4")
_KV_CACHE_TYPE = re.compile(
    r"(?:kv[ _-]?cache|kv)(?:[ _-]?dtype)?\s*(?:=|:|：|为|用|in|of|quantized to|量化(?:为|成|到)?)?\s*"
    r"(fp8|int8|int4|8[ -]?bit|4[ -]?bit)(?![a-z0-9])"
    r"|(?<![a-z0-9])(fp8|int8|int4|8[ -]?bit|4[ -]?bit)\s*(?:的)?\s*kv[ _-]?cache"
)


@functools.cache
def _any_framework() -> re.Pattern:
    """Any framework's names (vocabulary's framework_ids, one pattern)."""
    return compiled("|".join(f"(?:{names.pattern})" for _, names in vocabulary().framework_ids))


_KV_KINDS = {"fp8": "fp8", "int8": "int8", "int4": "int4", "8bit": "int8", "4bit": "int4"}


class JobSettings(ReaderState):
    """The Reader's steps that read the job's setup, mostly through the engine."""

    def fabric(self) -> None:
        """The network between nodes ("100G ethernet", "万兆网", "NDR InfiniBand";
        knowledge/rules/*/fabric.yaml); InfiniBand or RoCE of unstated speed is the GPU type's usual
        one (its node_fabric) when that is of the kind, else the slower generation, and the answer
        says so. Two networks named ("100G ethernet or InfiniBand?") are a choice: none is fixed,
        the answer compares them all."""
        if not self.voc.triggers["fabric"].search(self.scan.original):
            return
        found = engine.found(self.scan.original, "fabric", claimed=self.scan.claimed)
        speeds = {span.value.split("-")[0] for span in found if span.value not in UNSTATED_SPEED}
        named = {span.value for span in found} - speeds  # "NDR InfiniBand": the speed says it
        if len(named) != 1:
            return
        fabric = named.pop()
        words = self._take_span(min((s for s in found if s.value == fabric), key=lambda s: s.start))
        if fabric in UNSTATED_SPEED:
            gpu = self.cat.gpus.get(self.fields.get("gpu", ""))
            usual = gpu.node_fabric if gpu and gpu.node_fabric.startswith(fabric) else UNSTATED_SPEED[fabric]
            self.notes.append(Note(code="fabric_speed_assumed", params={"words": words, "fabric": usual}))
            fabric = usual
        self.set("fabric", fabric, words)

    def concurrency(self) -> None:
        """Sequences served at once ("200 concurrent users", "并发100"): the serving concurrency; else
        the users a service is for ("for 32 users", "支持200个用户"), all taken at once and said so
        (knowledge/rules/*/concurrency.yaml, users.yaml)."""
        if self.voc.triggers["concurrency"].search(self.scan.original):
            self._engine_readings("concurrency")
        if "micro_batch" in self.fields:
            return
        spans = self._unclaimed("users")
        if spans:  # the first rule that reads any, at its first place
            first = min(spans, key=lambda span: (-span.rule.priority, span.start))
            self.users_read = (first.value, self._take_span(first))

    def batches(self) -> None:
        if self.voc.triggers["batches"].search(self.scan.original):
            self._engine_readings("batch")

    def schedule(self) -> None:
        """The deadline: a duration said to be the time one has (knowledge/rules/*/schedule.yaml)."""
        if self.voc.triggers["schedule"].search(self.scan.original):
            self._engine_readings("schedule")

    def budget(self) -> None:
        if self.voc.triggers["budget"].search(self.scan.original):
            self._engine_readings("budget")

    def frameworks(self) -> None:
        """Training frameworks named (knowledge/frameworks.yaml), whose memory habits the plan follows;
        read before the model names, which "LLaMA-Factory" is not."""
        if not self.voc.triggers["training_options"].search(self.scan.original):
            return
        if not _any_framework().search(self.scan.original):
            return  # no framework's name anywhere: none where no claim stands either
        for framework, names in self.voc.framework_ids:
            for match in self.scan.unclaimed(names):
                self.set("framework", framework, self.scan.take(match))

    def training_options(self) -> None:
        """Precision, ZeRO/FSDP/DeepSpeed, checkpointing, offload, TP/PP, optimizer, LoRA rank."""
        if not self.voc.triggers["training_options"].search(self.scan.original):
            return
        self._precision_and_sharding()
        self._frameworks()
        self._engine_readings("checkpointing")
        self._engine_readings("offload")
        self._engine_readings("parallel")
        self._optimizer()
        self._engine_readings("lora_rank")

    def _precision_and_sharding(self) -> None:
        scan, voc = self.scan, self.voc
        kv_cache = scan.unclaimed(_KV_CACHE_TYPE) if "kv" in scan.original else ()  # every match says "kv"
        for match in kv_cache:  # before the weights' precision: "fp8 kv cache"
            kind = match.group(1) or match.group(2)
            self.set("kv_cache", _KV_KINDS[re.sub(r"[\s-]", "", kind)], scan.take(match))
        if pure := scan.unclaimed_search(voc.pure_bf16):
            self.set("precision_word", "bf16-pure", scan.take(pure))
        self._engine_readings("precision")
        self._engine_readings("sharding")

    def _frameworks(self) -> None:
        """Frameworks without memory habits of their own named (serving engines, launchers): noted."""
        for match in self.scan.unclaimed(self.voc.frameworks):
            self.notes.append(Note(code="framework_noted", params={"value": match.group(0)}))

    def _optimizer(self) -> None:
        self._engine_readings("optimizer")

    def context(self) -> None:
        """What the plan should favour, the training data's kind, where a service's users are (when
        the question speaks of users) and the GPUs' region (knowledge/rules/*/objective.yaml, ...)."""
        self._engine_readings("objective")
        self._engine_readings("data_kind")
        if self.voc.users_context.search(self.scan.original):
            self._engine_readings("user_area")
        self._engine_readings("region")
