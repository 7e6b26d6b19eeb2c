"""Read the prose of a question, one kind of thing at a time: GPU types and counts, models and
sizes, tokens and dataset sizes, sequence length, batches, schedule, budget, training options,
method and context ("8张H100", "Llama 3 70B", "8k context", "in two weeks", "$50k", "zero3").

Each extractor claims what it consumed (reader_state.Scan) and reads the question as written
through the claims before it (Scan.unclaimed; the engine's dimensions through ReaderState._unclaimed),
so later extractors cannot read the same words twice, no match runs across words another took,
and what is left over can be reported as not understood. The text is never changed. Two readings of one
field never stop a question: the first stands (or the target of a "from X to Y"), and the answer
says which was used and which was set aside. The vocabulary lives in knowledge/lexicon.yaml; the steps that have moved
to the reading engine (batches, schedule, budget, concurrency, the network, training options, GPU
and node counts written alone: see engine.py) take the engine's readings of their rules
(knowledge/rules/) at their place in the order, and the rest move the same way.

The Reader is composed of one part per kind of thing it reads, each its own module: gpu_names.py
(instances, cards and what is written around them), gpu_memory.py, gpu_counts.py (GPUs and nodes),
model_names.py (models and sizes), lengths.py (lengths, tokens, the dataset), job_settings.py (the
network, batches, deadline, budget, training options) and methods.py (the method); over scan.py
(the question as written and its claims), reader_state.py (the fields read and how two readings of
one field are settled), sentences.py (where words stand: whose setup, asked or stated) and
catalog_names.py (the catalog's names as written).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gpuplan.bot.language.gpu_names import GpuNames
from gpuplan.bot.language.job_settings import JobSettings
from gpuplan.bot.language.lengths import Lengths
from gpuplan.bot.language.methods import MethodWords
from gpuplan.bot.language.model_names import ModelNames

# a technical-looking word: digits with letters ("fp8", "24g", "llama-7b")
_TECHNICAL = re.compile(r"[a-z][a-z0-9.\-]*\d[a-z0-9.\-]*|\d+[a-z][a-z0-9.\-]*")


class Reader(GpuNames, ModelNames, Lengths, JobSettings, MethodWords):
    """Runs the extractors over one question and collects fields, notes and errors."""

    # The extractors, in the order they run: each reads one kind of thing and claims its words,
    # so what one takes ("8x A100") is not read again by a later one ("8" as a count).
    STEPS = (
        "unsupported_hardware",
        "read_gpu_names",
        "unknown_gpu_names",
        "fabric",
        "frameworks",
        "read_model_names",
        "prompt_and_response",
        "served_split",
        "tokens",
        "dataset",
        "sequence",
        "gpu_memory",
        "counts",
        "per_node_counts",
        "machines_asked",
        "decode_pool",
        "read_sizes",
        "concurrency",
        "batches",
        "schedule",
        "budget",
        "training_options",
    )

    # steps that read no numbers inside a link: a URL's "two-h208-nodes" anchor is no 208 nodes
    BLIND_TO_LINKS = ("counts", "per_node_counts")

    def read(self) -> None:
        for step in self.STEPS:
            if step in self.BLIND_TO_LINKS:
                self._links_hidden(getattr(self, step))
            else:
                getattr(self, step)()

    def _links_hidden(self, step: Callable[[], None]) -> None:
        """Run a step with the links claimed, then unclaimed (what the step claimed elsewhere stays);
        a plain try/finally, not a context manager: it runs twice a question."""
        claims = len(self.scan.claimed)
        for a, b in self._link_spans():
            self.scan.claim(a, b)
        links = len(self.scan.claimed) - claims
        try:
            step()
        finally:
            self.scan.unclaim(claims, links)

    def leftovers(self) -> None:
        """Technical-looking words nothing read: tokens with digits or model-like names, but not a
        word that a reading was taken from where the question says it again ("int4 ... int4")."""
        read = {
            w.strip(".-") for words in self.words.values() if isinstance(words, str) for w in _TECHNICAL.findall(words)
        }
        for word in self.scan.unread_words(_TECHNICAL):
            word = word.strip(".-")
            if word and word not in self.voc.stopwords and word not in self.unknown and word not in read:
                self.unknown.append(word)
