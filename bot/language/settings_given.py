"""gpuplan's own `key=value` settings written in a question ("model=qwen2.5-72b gpus=8 seq=8k"):
the fields they set, a key written with several values (a choice), a value that needs the catalog
(a model, a GPU, the question's language), and a key that looks misspelt ("sqe=4k")."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from gpuplan.bot.language import artifact_words, code_spans, keys, values
from gpuplan.bot.language.catalog_names import suggest_gpus, suggest_models
from gpuplan.bot.language.repo_ids import looks_like_repo_id
from gpuplan.bot.language.vocabulary import vocabulary
from gpuplan.estimator.schema import Note
from gpuplan.knowledge import Catalog

if TYPE_CHECKING:  # the parser calls this module; it needs the type only
    from gpuplan.bot.language.parser import Parsed


def read_settings(tokens: list[re.Match], cat: Catalog, parsed: Parsed) -> tuple[dict[str, Any], list[str]]:
    """gpuplan's own `key=value` settings: (the fields they set, the keys written). A key written
    with different values and a comparison word between them ("tp=2,pp=2 or tp=4, pp=1?") is a
    choice, compared or left open for the search, and said so; otherwise the last one written
    stands."""
    fields: dict[str, Any] = {}
    written: list[str] = []
    choices: dict[str, list[re.Match]] = {}
    for match in tokens:
        key, values_read, error = keys.apply(match.group(1), match.group(2), cat)
        written.append(key.name)
        if error:
            parsed.errors.append(error)
            continue
        choices.setdefault(match.group(1), []).append(match)
        for name, value in values_read.items():
            setting_value(name, value, match.group(2), cat, fields, parsed)
    for token_key, matches in choices.items():
        values = list(dict.fromkeys(m.group(2) for m in matches))
        between = matches[0].string[matches[0].end() : matches[-1].start()].lower()
        if len(values) > 1 and vocabulary().compare.search(between):
            settings_choice(token_key, values, cat, fields, parsed)  # "tp=2 or tp=4"; else the last stands
    return fields, written


# the fields a setting's internal name fills (`model=` a catalog model or a size)
_SETTING_FIELDS = {"_model": ("model", "params_b"), "_gpu": ("gpu",)}


def settings_choice(token_key: str, written: list[str], cat: Catalog, fields: dict, parsed: Parsed) -> None:
    """One setting written with several values: GPUs or models are compared ("gpu=a100 or
    gpu=h100"), anything else is left open for the search ("tp=2 ... or tp=4"), said so."""
    for name in keys.apply(token_key, written[0], cat)[1] or {}:
        for filled in _SETTING_FIELDS.get(name, (name,)):
            fields.pop(filled, None)
    if token_key == "gpu":
        found = [gpu.id for value in written if (gpu := cat.find_gpu(value))]
        if len(set(found)) > 1:
            parsed.compare, parsed.compare_direct = {"kind": "gpu", "options": list(dict.fromkeys(found))}, True
            return
    if token_key == "model":
        found = [spec.id for value in written if (spec := cat.find_model(value))]
        if len(set(found)) == len(written):
            parsed.compare, parsed.compare_direct = {"kind": "model", "options": found}, True
            return
    parsed.notes.append(Note(code="setting_choices", params={"key": token_key, "values": written}))


def setting_value(name: str, value: Any, raw: str, cat: Catalog, fields: dict, parsed: Parsed) -> None:
    """The few settings whose value needs the catalog or the Parsed itself."""
    if name == "_model":
        model_setting(raw, cat, fields, parsed)
    elif name == "_gpu":
        gpu = cat.find_gpu(raw)
        if gpu:
            fields["gpu"] = gpu.id
        else:
            parsed.errors.append(Note(code="unknown_gpu", params={"value": raw, "suggestions": suggest_gpus(raw, cat)}))
    elif name == "_lang":
        parsed.lang, parsed.lang_given = value, True
    elif name == "_currency":
        if value != "USD":
            parsed.notes.append(
                Note(
                    code="currency_converted",
                    params={"value": raw, "usd": fields["budget_usd"], "rate": values.CNY_PER_USD},
                )
            )
    else:
        fields[name] = value


def model_setting(raw: str, cat: Catalog, fields: dict, parsed: Parsed) -> None:
    spec = cat.find_model(raw)
    if spec:
        fields["model"] = spec.id
        return
    signed = re.fullmatch(r"\s*-\s*(.+)", raw)
    try:
        size = values.model_size_b(signed.group(1) if signed else raw)
    except ValueError:
        size = None
    if size is not None:
        fields["params_b"] = -size if signed else size  # the estimator names impossible sizes
        return

    if looks_like_repo_id(raw):
        parsed.hub_id = raw
        return
    parsed.errors.append(Note(code="unknown_model", params={"value": raw, "suggestions": suggest_models(raw, cat)}))


def hint_misspelled_keys(text: str, parsed: Parsed) -> None:
    """`sqe=4k` on a line of the question (not in pasted code, where names are the tool's) was
    probably meant as `seq=4k`: say so. `text` is the message with its settings blanked out."""
    for line in code_spans.blank(text, code_spans.quoted_spans(text)).split("\n"):
        if line.startswith(("\t", "    ")):
            continue
        for match in keys.ASSIGNMENT.finditer(line):
            close = keys.close_key(match.group(1))
            exact = match.group(1) in keys.BY_NAME  # a key whose value is prose ("loss=1.234"): no typo
            if close and not exact and match.group(1).lower() not in artifact_words.vocabulary().by_name:
                parsed.notes.append(Note(code="not_a_setting", params={"words": match.group(0), "key": close}))
