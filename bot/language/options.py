"""What a question weighs: the options it compares (GPUs, models, methods written side by side or
asked "which"), or, when it does not compare them, which one it means and which it sets aside
("70b ... I tried 13b": the size asked over the one tried)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from gpuplan.bot.language import intent
from gpuplan.bot.language.catalog_names import family_model
from gpuplan.bot.language.extract import Reader
from gpuplan.estimator.architecture import billions, for_spec
from gpuplan.estimator.schema import Note
from gpuplan.knowledge import Catalog

if TYPE_CHECKING:  # the parser calls this module; it needs the type only
    from gpuplan.bot.language.parser import Parsed


def forget_servers_set_aside(parsed: Parsed, reader: Reader) -> None:
    """The usual servers' size is said of the cards planned ('4台H100'), not of a type set aside ('4 H20
    (96GB) machines' that an official example used)."""
    options = parsed.compare.get("options", []) if parsed.compare and parsed.compare["kind"] == "gpu" else []
    planned = {reader.fields.get("gpu"), *reader.mixed_types, *options}
    names = {reader.cat.gpus[g].name for g in planned if g in reader.cat.gpus}
    reader.notes = [n for n in reader.notes if n.code != "servers_of_usual_size" or n.params["gpu"] in names]


def compare_or_set_aside(
    parsed: Parsed, reader: Reader, gpus: list[str], models: list[str], sizes: list[tuple[float, str]], comparing: bool
) -> None:
    """Two GPU types, models or sizes: a comparison when the question compares, else the first is
    used and the others set aside (the answer says so)."""
    options = [g for g in gpus if g not in reader.gpus_lacked]  # "A100s aren't available to me"
    if len(options) >= 2 and comparing and gpus_compared(reader):
        parsed.compare = {"kind": "gpu", "options": options}
        counts = {g: reader.gpu_counts[g] for g in options if g in reader.gpu_counts}
        if len(set(counts.values())) > 1:  # "2x 3090 vs 1x 4090": each option with its own count
            parsed.compare["counts"] = counts
    if models:
        reader.words.setdefault("model", reader.model_words.get(models[0], models[0]))
    options: list[tuple[str, Any]] = [("model", m) for m in models] + [("params_b", s) for s, _ in sizes]
    distinct = list(dict.fromkeys(options))
    if len(distinct) >= 2 and comparing and not parsed.compare and not sizes_of(models, sizes, reader.cat):
        parsed.compare = {"kind": "model", "options": [v for _, v in distinct]}
    elif models:
        models = most_mentioned_first(reader, models)
        reader.fields["model"] = models[0]
        reader.words["model"] = reader.model_words.get(models[0], models[0])
        sizes_beside_a_model(reader, models, sizes)
    elif len(distinct) >= 2:
        best = max(sizes, key=lambda s: (reader.mentions.get(("params_b", s[0]), 0), -sizes.index(s)))
        other = next(s for s in sizes if s[0] != best[0])
        reader.conflict("params_b", best[1], other[1])
        reader.fields["params_b"] = best[0]
    elif distinct:
        name, value = distinct[0]
        reader.fields[name] = value
    if not parsed.compare and comparing:
        parsed.compare = compared_methods(reader)
    if parsed.compare:
        spans = reader.option_spans[parsed.compare["kind"]]
        parsed.compare_direct = parsed.compare_direct or joined(reader.scan.original, spans)  # settings: True
        reader.set_aside = [n for n in reader.set_aside if n.params["field"] != parsed.compare["kind"]]


def gpus_compared(reader: Reader) -> bool:
    """Two GPU types are weighed when the question asks to choose ("which", "faster", "vs") or names
    them side by side ("A100 or H100"); an "or" elsewhere ("R1 or V3 needs 8xH100 ..., on a single
    4090") joins other things, and the GPUs are a quoted setup and the user's own."""
    text = reader.scan.original
    return intent.hits("choice", text, most=1) > 0 or side_by_side(text, reader.option_spans["gpu"])


_STRONG_CONNECTIVE = re.compile(r"\bvs\.?|\bversus\b|还是|对比|compared (?:to|with)|(?<!\w)比(?!较)")
_WEAK_CONNECTIVE = re.compile(r"\bor\b|\bover\b|\band\b|或者?|和|与|跟|/")


def joined(text: str, spans: list[tuple[int, int]]) -> bool:
    """Two options written side by side with a connective between ("A100 vs H100", "QLoRA or
    full", "A100还是H100"): a comparison by its form. "or" between them does not make one of a
    question whether either would do ("单卡3090或4090能跑吗", "can a 3090 or 4090 run it")."""
    feasibility = intent.hits("resources", text, most=1) > 0 or intent.hits("yes_no", text, most=1) > 0
    return side_by_side(text, spans, weak=not feasibility)


def side_by_side(text: str, spans: list[tuple[int, int]], weak: bool = True) -> bool:
    """Whether two of the spans stand within a few words of each other with a connective between
    (a weak one, "or" / "和", only when `weak`)."""
    ordered = sorted(spans)
    for (_, end), (start, _) in zip(ordered, ordered[1:], strict=False):
        between = text[end:start]
        if len(between) > 24:
            continue
        if _STRONG_CONNECTIVE.search(between) or (weak and _WEAK_CONNECTIVE.search(between)):
            return True
    return False


def most_mentioned_first(reader: Reader, models: list[str]) -> list[str]:
    """Of several models, the one the question is about: the most mentioned, a mention in a
    question sentence counting double ("works with Qwen-7B, OOM with Qwen-14B; what does Qwen-14B
    need?"); a size written alone may pick a member of a family named without one ("Llama-2 ...
    7B fine, 70B FT slower ... 70B"). Ties keep the first named."""
    cat = reader.cat

    def weight(model: str) -> int:
        own = sum(w for (kind, v), w in reader.mentions.items() if kind == "params_b" and same_size(v, model, cat))
        return reader.mentions.get(("model", model), 0) + own

    best = max(models, key=lambda m: (weight(m), -models.index(m)))
    loose = {v: w for (kind, v), w in reader.mentions.items() if kind == "params_b"}
    size, size_weight = max(loose.items(), key=lambda item: item[1], default=(None, 0))
    if size is not None and size_weight > weight(best) and not any(same_size(size, m, cat) for m in models):
        member = family_member(best, size, cat)
        if member:
            return [member] + [m for m in models if m != member]
    return [best] + [m for m in models if m != best]


def family_member(model: str, size: float, cat: Catalog) -> str | None:
    """The model of `model`'s family (its id up to the size) that has about `size` parameters."""
    stem = re.match(r"(.*?)[-_]?\d+(?:\.\d+)?[bm]\b", model)
    return family_model((stem.group(1),), size, "", cat) if stem and stem.group(1) else None


def same_size(size: float, model: str, cat: Catalog) -> bool:
    """Whether `size` is the model's: its parameters, or for a Mixture-of-Experts model also the
    parameters active per token ("R1 ... 685B MoE params ... 37B activated")."""
    spec = cat.models[model]
    own = [spec.params_b]
    if spec.experts > 1:
        own.append(billions(for_spec(spec).active_params))
    return any(abs(size - b) <= 0.2 * size for b in own)


def sizes_of(models: list[str], sizes: list[tuple[float, str]], cat: Catalog) -> bool:
    """True when the sizes written are just the sizes of the models named ("Llama 3 70B")."""
    return len(models) == 1 and all(same_size(s, models[0], cat) for s, _ in sizes)


def sizes_beside_a_model(reader: Reader, models: list[str], sizes: list[tuple[float, str]]) -> None:
    """A catalog model plus a size: the size may be its own ("llama3 8b") or the data ("on 300B")."""
    for size, words in sizes:
        if same_size(size, models[0], reader.cat):
            continue
        if re.search(r"tokens?|数据|语料|data", reader.scan.original[reader.scan.original.find(words) :][:40]):
            reader.fields.setdefault("train_tokens", size * 1e9)
            reader.notes.append(Note(code="size_read_as_tokens", params={"words": words}))
        else:
            reader.conflict("model", reader.words["model"], words)
    for extra in models[1:]:
        reader.conflict("model", reader.words["model"], reader.model_words.get(extra, extra))


def compared_methods(reader: Reader) -> dict[str, Any] | None:
    scan, voc = reader.scan, reader.voc
    found = [(method, [m.span() for m in scan.unclaimed(pattern)]) for method, pattern in voc.methods]
    full = [m.span() for m in scan.unclaimed(voc.explicit_full)]
    reader.option_spans["method"] = sorted([span for _, spans in found for span in spans] + full)
    adapters = [method for method, spans in found if spans and method in ("lora", "qlora")]
    if adapters and full:
        return {"kind": "method", "options": [adapters[0], "full"]}
    return None
