"""Models and sizes (steps of the Reader, extract.py): catalog models by name ("Llama 3 70B",
"meta-llama/llama-3-8b") or by family and size ("qwen 14b"), sizes written alone ("70b", "700亿",
"总参数1T"), an MoE's active parameters, family names the catalog lacks, a misspelt model, a Hub id
and the names inside pasted artifacts."""

from __future__ import annotations

import functools
import re

from gpuplan.bot.language import engine
from gpuplan.bot.language.catalog_names import (
    close_models,
    family_sizes,
    gpu_id,
    named_here,
    size_beside,
    size_in_name,
    suggest_models,
    variants_of,
)
from gpuplan.bot.language.compiled import compiled
from gpuplan.bot.language.reader_state import ReaderState
from gpuplan.bot.language.repo_ids import looks_like_repo_id
from gpuplan.bot.language.rule_files import expand, piece_pattern
from gpuplan.bot.language.size_words import SAID_BACK_OFF_BY
from gpuplan.bot.language.vocabulary import method_word
from gpuplan.estimator.schema import Note
from gpuplan.knowledge import normalize_name

# a hardware line's count before the GPU's name: "GPU: 1x3090", "- GPUs: 8 x A100", "显卡：2*4090"
_LABELLED_COUNT = re.compile(
    r"^\s*(?:[-*]\s*)?(?:gpus?(?:\s*(?:type|model))?|graphics cards?|显卡|gpu型号)\s*[:：]\s*(\d{1,4})\s*[x×*]\s*"
    r"(?:(?:nvidia|tesla|geforce)\s+)*$",
    re.M,
)

# a script or config file whose name may say the method ("train_ppo.sh", "llama3_lora_sft.yaml",
# "run_dpo.py"), or a module run with `python -m` ("openrlhf.cli.train_ppo_ray"): what it is for
_SCRIPT_FILE = re.compile(r"(?<![\w./-])[\w./-]+\.(?:sh|py|ya?ml|json)(?![\w])|(?<=-m )[a-z_][\w]*(?:\.[a-z_]\w*)+")

_SIZED = re.compile(r"\d(?:\.\d+)?\s*[bm](?![a-z])|\d[x×]\d")  # an alias that names its size

_REPO_ID = re.compile(r"(?<![\w./-])(?:https?://huggingface\.co/)?[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*[A-Za-z0-9]")


def _same_lack(said: dict, new: dict) -> bool:
    """Whether two family_lacks_size notes say the same ("DeepSeek-V3-16B", "deepseek_v3_16b")."""
    return normalize_name(said["value"]) == normalize_name(new["value"]) and said["size_b"] == new["size_b"]


def _unknown_part_of(note: Note, word: str) -> bool:
    """Whether a note says a name is not in the catalog where that name is part of `word`."""
    return note.code == "unknown_model_name" and note.params["value"].lower() in word.lower()


@functools.cache
def _org_before() -> re.Pattern:
    """An organisation's name ending where a model's starts ({MODEL_ORG}: "meta-llama/", "Qwen/")."""
    return compiled(expand("(?:{MODEL_ORG})$"))


class ModelNames(ReaderState):
    """The Reader's steps that read models and sizes."""

    def read_model_names(self) -> None:
        self.model_ids = self.models()
        self.model_ids += [m for m in self.family_models(self.model_ids) if m not in self.model_ids]

    def read_sizes(self) -> None:
        spans = self._unclaimed("size")
        self.active_size([span for span in spans if span.field == "active_params_b"])
        self.size_readings = self.sizes([span for span in spans if span.field == "params_b"])
        self.unknown_models(self.size_readings)

    def active_size(self, spans: list[engine.Span]) -> None:
        """The parameters a Mixture-of-Experts model activates per token ("32B active", "激活32B",
        "235B-A22B"): a size of its own, not a second model's."""
        for span in spans:
            self.set("active_params_b", span.value, self._take_span(span))

    def models(self) -> list[str]:
        """Catalog models by name (knowledge/rules/en/model_name.yaml: "Llama-3.1-70B-Instruct",
        "通义千问72B"), with an organisation's name before it ("meta-llama/llama-3-8b" whole); a
        quantised checkpoint's name ("qwen2.5-72b-awq") is 4-bit weights."""
        found: list[str] = []
        text = self.scan.original
        for span in self._unclaimed("model_name"):
            found_id = span.value
            if not found_id:
                continue  # "BLOOM 1.1B": the family named, not the catalog's BLOOM 176B
            match = span.rule.pattern.match(text, span.start)  # its name and the words after it
            org = _org_before().search(text, max(0, span.start - 12), span.start)
            whole = (org.start() if org else span.start, span.end)  # "meta-llama/llama-3-8b" whole
            self.option_spans["model"].append(whole)
            self.mention(("model", found_id), whole, bool(_SIZED.search(match["name"])))
            words = self._take_span(span)
            self.scan.claim(whole[0], span.start)
            if piece_pattern("QUANTISED").search(match.group(0), len(match["name"])):
                self.set("precision_word", "int4", words)  # "qwen2.5-72b-awq": a 4-bit checkpoint
            if found_id not in found:
                found.append(found_id)
                self.model_words.setdefault(found_id, words)
        return found

    def names_in(self, code: str) -> dict[str, list[str]]:
        """GPU types and catalog models named inside pasted artifacts (names only: in a log,
        "GPU 0" counts nothing)."""
        lowered = code.lower()
        gpus, counted, written = [], [], {}
        for m in self.voc.gpu_alias.finditer(lowered):
            gpus.append(gpu_id(m.group(1), self.voc, self.cat))
            written.setdefault(gpus[-1], code[m.start(1) : m.end(1)])  # the name as the paste spells it
            line_start = lowered.rfind("\n", 0, m.start()) + 1
            if gpus[-1] and (count := _LABELLED_COUNT.search(lowered, line_start, m.start())):
                # "GPU: 1x3090" in an environment list: the card, the count, the words as written
                counted.append((gpus[-1], int(count.group(1)), code[count.start() : m.end()].strip()))
        models = [named_here(m, self.cat) for m in self.voc.model_alias.finditer(lowered)]
        instances = [
            (instance.gpu, int(m.group(1)) if instance.gpus == "count" else instance.gpus)
            for instance, pattern in self.voc.instances
            for m in pattern.finditer(lowered)
        ]
        scripts, methods = [], []
        for match in _SCRIPT_FILE.finditer(lowered):  # "examples/train_lora/llama3_lora_sft.yaml"
            # serving is read from the launcher line itself
            named = [m for w in re.split(r"[_\-./]", match.group(0)) if w and (m := method_word(w)) and m != "infer"]
            scripts += [match.group(0).rsplit("/", 1)[-1]] if named else []
            methods += named
        return {
            "gpu": list(dict.fromkeys(g for g in gpus if g)),
            "model": list(dict.fromkeys(m for m in models if m)),
            "instance": instances[:1],
            "gpu_count": counted[:1],
            "gpu_written": [written[g] for g in dict.fromkeys(g for g in gpus if g)],
            "method": list(dict.fromkeys(methods)),
            "script": scripts,
        }

    def hub_id(self, prose: str) -> str | None:
        """A Hugging Face id (`org/name`) written in the prose that the catalog does not know."""
        written = [match.group(0) for match in _REPO_ID.finditer(prose)]
        if not written:
            return None

        return next((name for name in written if looks_like_repo_id(name) and not self.cat.find_model(name)), None)

    def family_models(self, named: list[str]) -> list[str]:
        """A family and a size the catalog has ("qwen 14b", "Yi-34", "千问140亿": knowledge/rules/*/
        family_size.yaml): that catalog model, said back when its size is not the one written. Words
        that name no model of the catalog (a version, "llama 3") read nothing. A family and size that
        fit a catalog model `named` by its name are that model ("deepseek-r1 ... 671B deepseek")."""
        found: list[str] = []
        for span in self._unclaimed("family_size"):
            spec = next((m for m in named if span.value and self._same_family_size(m, span.value)), span.value)
            if spec == span.value and span.note_params is not None:  # the named model: nothing to say back
                self.notes.append(Note(code="model_read_as", params=span.note_params))
            if not spec:
                continue
            self.mention(("model", spec), (span.start, span.end))
            words = self._take_span(span)  # every mention's words: "7b bloom ... 7b bloom" is one model
            if spec not in found:
                found.append(spec)
                self.option_spans["model"].append((span.start, span.end))
                self.model_words.setdefault(spec, words)
        return found

    def _same_family_size(self, named_id: str, family_id: str) -> bool:
        """Whether two catalog models are of one family (the id's first word) and size (within 5%)."""
        a, b = self.cat.models[named_id], self.cat.models[family_id]
        return (
            a.id.split("-")[0] == b.id.split("-")[0] and abs(a.params_b - b.params_b) <= SAID_BACK_OFF_BY * a.params_b
        )

    def unknown_models(self, sizes: list[tuple[float, str]]) -> None:
        """Family names that are not in the catalog (knowledge/rules/*/family_name.yaml): suggestions,
        and their size when written, in the name or after it ("qwen32b爆显存", "pythia 410m")."""
        for span in self._unclaimed("family_name"):
            written, after = span.value
            if written is None:
                continue  # a bare "gpt": no model named, its words left
            name, name_end = written.strip("-_. "), span.start + len(written)
            size = size_in_name(name) if after is None else after
            self.scan.claim(span.start, name_end if after is None else span.end)
            if any(
                n.code in ("unknown_model_name", "model_family_sizes") and n.params["value"] == name for n in self.notes
            ):
                continue
            family = None if size else family_sizes(name, self.scan.original[name_end:], self.cat)
            if not size and self._size_lacking(name, (span.start, name_end), family, sizes):
                continue
            if family:
                self.notes.append(Note(code="model_family_sizes", params={"value": family[0], "models": family[1]}))
                continue
            self.notes.append(
                Note(
                    code="unknown_model_name",
                    params={
                        "value": name,
                        "suggestions": suggest_models(name, self.cat),
                        "size": size,
                    },
                )
            )
            if size:
                sizes.append((size, name))

    def _size_lacking(
        self, name: str, where: tuple[int, int], family: tuple[str, list[str]] | None, sizes: list[tuple[float, str]]
    ) -> bool:
        """A size written beside a catalog family's or model's name that none of its models has ("20M
        gpt-2", "Qwen3-16B-A3B"): said, and the size kept when no other was read ("20M的gpt-2": no size
        rule reads a size before "的"). Whether it was."""
        beside = size_beside(self.scan.original, *where)
        models = family[1] if family else variants_of(name, self.cat)
        if (
            not beside
            or not models
            or any(abs(self.cat.models[m].params_b - beside) <= SAID_BACK_OFF_BY * beside for m in models)
        ):
            return False
        params = {"value": name, "size_b": beside, "models": models}
        if not any(n.code == "family_lacks_size" and _same_lack(n.params, params) for n in self.notes):
            self.notes.append(Note(code="family_lacks_size", params=params))
        if not sizes:
            sizes.append((beside, name))
        return True

    def sizes(self, spans: list[engine.Span]) -> list[tuple[float, str]]:
        """Model sizes: "70b", "7 billion", "700亿", "72Bqwen" (a family name glued after it), "总参数1T",
        "parameters: 1.5T" (knowledge/rules/*/size.yaml); not a count of tokens ("10B 说的是 token 数吗").
        The sizes after the word for parameters (rules `*_labelled`) first, and no option of a comparison."""
        found = []
        for span in sorted(spans, key=lambda span: (-span.rule.priority, span.start)):
            if not span.rule.name.endswith("_labelled"):
                self.option_spans["model"].append((span.start, span.end))
            self.mention(("params_b", span.value), (span.start, span.end))
            found.append((span.value, self._take_span(span)))
        return found

    def misspelt_model(self) -> None:
        """A model-like word nothing read ("DeekSeep-R1"): the catalog model it is a misspelling
        of when the letters are close and the numbers identical (said back)."""
        if "model" in self.fields:
            return
        for match in self.scan.between_claims(r"[a-z][a-z0-9.\-]*\d[a-z0-9.\-]*|[a-z]+-[a-z0-9.\-]+"):
            start, end = match.span()
            original = self.scan.original
            while start > 0 and not original[start - 1].isspace():
                start -= 1  # the whole word as written: "lama3-70b" even when "70b" was read as a size
            while end < len(original) and not original[end].isspace():
                end += 1
            word = self.scan.original[start:end].strip(".-")
            close = close_models(word, self.cat, n=3)
            if close and close[0][1] >= 85 and close[0][2]:
                spec = self.cat.models[close[0][0]]
                size = self.fields.get("params_b")
                if size and abs(size - spec.params_b) > 0.2 * size:
                    continue  # the size written elsewhere is another model's
                self.fields.pop("params_b", None)
                self.fields["model"], self.words["model"] = spec.id, word
                # its words read as names the catalog lacks ("deepseek", "qwen-distill") were this model's
                self.notes = [n for n in self.notes if not _unknown_part_of(n, word)]
                self.notes.append(Note(code="model_read_as", params={"value": word, "model": spec.id}))
                return
