"""The catalog's names as a question writes them: the GPU (`gpu_id`) and the model (`model_id`,
`family_model`, `named_here`) a name is, every model name as one trie (`model_name_pattern`, the piece
{MODEL_NAME} of knowledge/rules/en/model_name.yaml; `trie_pattern` builds the GPU names' too), a card's
variants of other memory or form factor, and did-you-mean candidates for names the catalog lacks
(`close_models`, `suggest_models`, `suggest_gpus`, `family_sizes`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from rapidfuzz import fuzz, process

from gpuplan.bot.language.compiled import built
from gpuplan.bot.language.patterns import guard_after_first
from gpuplan.knowledge import Catalog, ModelSpec, normalize_name, words_key

if TYPE_CHECKING:  # the vocabulary imports this module (its tries): no import at run time
    from gpuplan.bot.language.vocabulary import Vocabulary


_SEP, _END, _HYPHEN = object(), object(), object()


def trie_pattern(names: Sequence[str], hyphen_before_digits: bool = False, guard: str = "") -> str:
    """One regex for many names, shared prefixes merged (a trie): Python's `re` tries the branches
    of an alternation one by one, so 800 aliases written side by side cost 800 attempts at every
    position, a trie a handful. Longer names win, as with the longest-first alternation it replaces.
    With `hyphen_before_digits`, a hyphen may stand between a name's letters and its number
    ("h-200", "a-100", as "h200", "a100"). A `guard` (lookbehinds, an alternation of them) that
    must hold where a name starts is written after each name's first character instead, each
    lookbehind taking that character into its width: the alternation then starts with literals,
    which `re` scans for, instead of testing the guard at every position."""
    trie: dict = {}
    for name in names:
        parts = [p for p in re.split(r"[\s\-_]+", name.lower()) if p]
        node = trie
        for i, part in enumerate(parts):
            atoms = list(part)
            if hyphen_before_digits:
                atoms = _hyphen_gaps(atoms)
            for atom in ([_SEP] if i else []) + atoms:
                node = node.setdefault(atom, {})
        node[_END] = True
    if not guard:
        return _emit(trie)
    branches = [
        re.escape(atom) + guard_after_first(guard, re.escape(atom)) + _emit(child) for atom, child in trie.items()
    ]
    return "(?:" + "|".join(branches) + ")"


def _hyphen_gaps(atoms: list) -> list:
    """The letters and digits of a name part with an optional hyphen where letters meet digits."""
    out: list = []
    for i, atom in enumerate(atoms):
        if i and atom.isdigit() and atoms[i - 1].isalpha() and atoms[i - 1].isascii():
            out.append(_HYPHEN)
        out.append(atom)
    return out


def _emit(node: dict) -> str:
    atom_text = {_SEP: r"[\s\-_]*", _HYPHEN: "-?"}
    branches = [
        (atom_text[atom] if atom in atom_text else re.escape(atom)) + _emit(child)
        for atom, child in node.items()
        if atom is not _END
    ]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if _END in node else body


def model_aliases(cat: Catalog) -> dict[str, str]:
    """Every name of a catalog model as written, lower case (its id, name and aliases) -> its id."""
    return {name.lower(): spec.id for spec in cat.models.values() for name in [spec.id, spec.name, *spec.aliases]}


def model_name_pattern(cat: Catalog) -> str:
    """One of the catalog's model names starting a word, longest first ("llama-3.1-70b" over
    "llama-3.1"), as one trie: the piece {MODEL_NAME} of the rule `catalog_name` (model_name.yaml)."""
    names = tuple(sorted(model_aliases(cat), key=len, reverse=True))
    return built(trie_pattern, names, False, r"(?<![a-z0-9])")


def size_in_name(name: str) -> float | None:
    """Billions of parameters a model's name carries ("pythia-410m" 0.41, "foo-7b" 7), else None."""
    size = re.search(r"(\d+(?:\.\d+)?)\s*([bm])(?![a-z])", name)
    return None if not size else float(size.group(1)) / (1000 if size.group(2) == "m" else 1)


def family_model(prefixes: tuple[str, ...], size_b: float, version: str, cat: Catalog) -> str | None:
    """The catalog model of a family of about `size_b` (within 15%): one whose id carries the size,
    the newest version first ("qwen 14b" -> Qwen3 14B); with a version written ("qwen2 72b"), only
    that version's."""
    wanted = normalize_name(version).lstrip("v")
    # the size as ids write it ("405b", "125m"): an id that carries it is the one meant ("llama 405"
    # is Llama 3.1 405B, not the newer Llama 4 Maverick of 400B)
    nominal = f"{size_b:g}b" if size_b >= 1 else f"{size_b * 1000:g}m"
    candidates = []
    for member in _family_members(prefixes, cat):
        if abs(member.published - size_b) > 0.15 * size_b:
            continue
        if wanted and not member.after_family.startswith(wanted):  # "internvl 1.5": internvl-chat-v1-5
            continue
        release = member.release
        newest = release if release is not None and not wanted and release < size_b else 0.0
        named = nominal in member.sizes_named
        candidates.append((not named, -newest, abs(member.published - size_b), member.id))
    return min(candidates)[-1] if candidates else None


class _FamilyMember(NamedTuple):
    """A catalog model of a family, as family_model weighs it."""

    id: str
    published: float  # its parameters, a vision encoder's too ("InternVL 26B" counts it)
    after_family: str  # its folded id after the family's prefix, a leading "v" left out
    release: float | None  # the version its id writes after the family's prefix ("qwen2.5-7b": 2.5)
    sizes_named: frozenset[str]  # the sizes its id writes as words ("405b", "125m")


_RELEASE = re.compile(r"(\d+(?:\.\d+)?)")
_SIZE_WORD = re.compile(r"(?<![\d.])\d+(?:\.\d+)?[bm](?![a-z0-9])")

# the members of each family's id prefixes (as the lexicon writes them), in the catalog's order, and
# the catalog they were gathered from: a family is looked up on most questions that name one, and
# going through the whole catalog each time to find its few models was most of a look-up
_FAMILIES: dict[tuple[str, ...], list[_FamilyMember]] = {}
_FAMILIES_OF: list[Catalog] = []


def _family_members(prefixes: tuple[str, ...], cat: Catalog) -> list[_FamilyMember]:
    """The catalog's models whose folded id starts with one of the family's id prefixes, folded."""
    if not _FAMILIES_OF or _FAMILIES_OF[0] is not cat:  # another catalog: gathered afresh
        _FAMILIES.clear()
        _FAMILIES_OF[:] = [cat]
    members = _FAMILIES.get(prefixes)
    if members is None:
        folded = tuple(normalize_name(p) for p in prefixes)
        members = _FAMILIES[prefixes] = [
            _member(key, spec, folded) for key, spec in cat.model_keys if key.startswith(folded)
        ]
    return members


def _member(key: str, spec: ModelSpec, folded: tuple[str, ...]) -> _FamilyMember:
    """A catalog model (its folded id `key`) as a member of the family of the `folded` prefixes."""
    prefix = next(p for p in folded if key.startswith(p))
    release = _RELEASE.match(spec.id[len(prefix) :].lstrip("-_ v"))
    return _FamilyMember(
        id=spec.id,
        published=spec.params_b + spec.vision_params_b,
        after_family=key[len(prefix) :].lstrip("v"),
        release=float(release.group(1)) if release else None,
        sizes_named=frozenset(_SIZE_WORD.findall(spec.id)),
    )


def named_here(match: re.Match, cat: Catalog) -> str | None:
    """The catalog model an alias match names (knowledge/rules/en/model_name.yaml's pattern), unless a
    size written right after it ("bigcode/starcoderbase-3b", "starcoder:1b" are not StarCoder 15B),
    right before it ("1.5B gpt-2" is no GPT-2 124M) or later in the same word ("deepseek-r1-qwen-
    distill-32b" is no DeepSeek-R1) is another model's."""
    found = model_id(match.group(1), cat)
    if not found or other_size_follows(match, found, cat):
        return None
    beside = (_size_before(match), _size_later_in_word(match))
    return None if any(_other_size(size, found, cat) for size in beside) else found


SIZE_AFTER_WINDOW = 20  # how far after a catalog name a size written is read as right after it
# a size and its unit right before a name, "的" allowed between ("1.5B gpt-2", "7B的llama-2-7b")
_SIZE_BEFORE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*([bm])[\s\-_]*(?:的\s*)?$")
# the rest of the word a name is glued into, up to a size in it ("-qwen-distill-32b")
_SIZE_LATER_IN_WORD = re.compile(r"(?:[\-_][a-z][a-z0-9.]*)+?[\-_](\d+(?:\.\d+)?)([bm])(?![a-z0-9])")


def _size_before(match: re.Match) -> float | None:
    """The size in billions written right before a name's match, if any."""
    before = _SIZE_BEFORE.search(match.string, max(0, match.start() - 12), match.start())
    return _billions(before.group(1), before.group(2)) if before else None


def _size_later_in_word(match: re.Match) -> float | None:
    """The size in billions the word a name starts goes on to write after more words glued by a
    hyphen or an underscore: "deepseek-r1-qwen-distill-32b" writes 32B after DeepSeek-R1's name."""
    later = _SIZE_LATER_IN_WORD.match(match.string, match.end("name"))
    return _billions(later.group(1), later.group(2)) if later else None


def _billions(number: str, unit: str) -> float:
    return float(number) / (1000 if unit == "m" else 1)


def _other_size(size: float | None, found_id: str, cat: Catalog) -> bool:
    """Whether a size written beside a model's name is another model's (off its size by over 20%)."""
    return size is not None and abs(size - cat.models[found_id].params_b) > 0.2 * size


def other_size_follows(match: re.Match, found_id: str, cat: Catalog) -> bool:
    """Whether the size a catalog name's match read right after it ({SIZE_AFTER_NAME}: its groups
    `other_size`, `other_unit`, `experts`) is another model's: not this model's size ("BLOOM 1.1B",
    "starcoder:1b", after a version, "Qwen-VL-2.5-3B"). An expert's size times the experts
    ("Mixtral-7B*8") is the MoE's own name, written the other way round."""
    number, window = match.groupdict().get("other_size"), match.end() + SIZE_AFTER_WINDOW
    if number is None or match.end("other_unit") > window:
        return False
    if match["experts"] and match.end("experts") <= window and cat.models[found_id].experts > 1:
        return False
    return _other_size(_billions(number, match["other_unit"]), found_id, cat)


def _same_product(base: str, name: str) -> bool:
    """Whether a catalog name is of the product `base` names: "nvidia h20" is not the H200."""
    return re.search(r"(?<![a-z0-9])" + re.escape(base) + r"(?![a-z0-9])", name) is not None


def _product(name: str) -> str:
    """A catalog GPU's name without its memory and form factor: "nvidia v100 sxm2 32gb" -> "nvidia v100"."""
    return _FORM.sub(" ", re.sub(r"\s*\d+\s*gb.*$", "", name.lower())).strip()


def variant_with_memory(found_id: str, gib: float, cat: Catalog) -> str | None:
    """The catalog type of the same GPU with `gib` of memory: ("a100-80gb", 40) -> "a100-40gb"."""
    gpu = cat.gpus[found_id]
    if abs(gpu.memory_gib - gib) <= 0.1 * gib:
        return found_id
    base = _product(gpu.name)
    for other in cat.gpus.values():
        name = other.name.lower()
        if other.family == gpu.family and _same_product(base, name) and abs(other.memory_gib - gib) <= 0.1 * gib:
            return other.id
    return None


_FORM = re.compile(r"\s*(?:sxm\d?|pcie|nvl)\s*", re.I)


def variant_with_form(found_id: str, form: str, cat: Catalog) -> str | None:
    """The catalog type of the same GPU in another form factor with the same memory: ("a800-80gb",
    "pcie") -> "a800-pcie-80gb"; none when the form comes with other memory only (an A800 SXM4 40GB
    stays the 40 GB card: memory sizes the plan)."""
    gpu = cat.gpus[found_id]
    base = _product(gpu.name)
    others = [
        g
        for g in cat.gpus.values()
        if g.family == gpu.family
        and _same_product(base, g.name.lower())
        and form in g.name.lower().replace("sxm4", "sxm").replace("sxm5", "sxm")
        and abs(g.memory_gib - gpu.memory_gib) <= 0.1 * gpu.memory_gib
    ]
    others.sort(key=lambda g: abs(g.memory_gib - gpu.memory_gib))
    return others[0].id if others else None


def gpu_id(matched: str, voc: Vocabulary, cat: Catalog) -> str | None:
    """The catalog id of a GPU name as written ("a100 80g", "h-200")."""
    key = re.sub(r"[\s\-_]+", " ", matched.lower()).strip()
    if key in voc.gpu_by_alias:
        return voc.gpu_by_alias[key]
    gpu = cat.find_gpu(matched)
    return gpu.id if gpu else None


_NUMBERS = re.compile(r"\d+(?:\.\d+)?")


def model_id(matched: str, cat: Catalog) -> str | None:
    """The catalog model a written name is, when its numbers are that model's: "internvl 38b" folds
    to the key of "internvl3-8b" but writes 38, so it is no name of InternVL3 8B."""
    spec = cat.find_model(matched)
    if spec is None:
        return None
    numbers = _NUMBERS.findall(matched.lower())
    named = any(_NUMBERS.findall(name.lower()) == numbers for name in (spec.id, spec.name, *spec.aliases))
    return spec.id if named else None


DESKTOP = re.compile(r"GeForce|TITAN|Quadro|RTX", re.I)  # desktop and workstation cards people own one of


def _digits(text: str) -> list[str]:
    return re.findall(r"\d+", text)


def close_models(value: str, cat: Catalog, n: int = 3, cutoff: float = 70) -> list[tuple[str, float, bool]]:
    """Catalog models spelled like `value` ("DeekSeep-R1", "lama3-70b"): (id, score 0-100, whether
    its numbers are exactly the ones written). Letters may be misspelt, sizes and versions not:
    "llama-3-7b" is not "llama-3-70b"."""

    key = normalize_name(value)
    if len(key) < 4:
        return []
    same_words = cat.model_by_words.get(words_key(value))
    if same_words:  # "deepseek-r1-qwen-distill-32b": DeepSeek-R1-Distill-Qwen-32B's words in another order
        return [(same_words, 100.0, True)]
    hits = process.extract(key, list(cat.model_index), scorer=fuzz.ratio, limit=n * 4, score_cutoff=cutoff)
    out: dict[str, tuple[str, float, bool]] = {}
    for name, score, _ in hits:
        model = cat.model_index[name]
        if model not in out and set(_digits(key)) <= set(_digits(name)):
            out[model] = (model, score, _digits(key) == _digits(name))
    return sorted(out.values(), key=lambda m: -m[1])[:n]


def suggest_models(value: str, cat: Catalog, n: int = 3) -> list[str]:
    """Did-you-mean candidates for a model name the catalog does not know (numbers may differ:
    "llama-3-7b" suggests Llama 3 8B)."""

    hits = process.extract(
        normalize_name(value), list(cat.model_index), scorer=fuzz.ratio, limit=n * 4, score_cutoff=50
    )
    return list(dict.fromkeys(cat.model_index[name] for name, _, _ in hits))[:n]


_VERSION_AFTER = re.compile(r"^[\s_-]*(\d+(?:\.\d+)?)(?![\d.]*\s*[bm](?![a-z]))")

_SIZE_ONLY = re.compile(r"\d+(?:\.\d+)?b")

_SIZE_FOLLOWS = re.compile(r"[\s_-]*(\d+(?:\.\d+)?)\s*([bm])(?![a-z])")


def variants_of(name: str, cat: Catalog) -> list[str]:
    """The catalog model a name is and the models whose ids extend it ("gpt-2": gpt-2, gpt-2-medium,
    gpt-2-large, gpt-2-xl), smallest first; none when the name is no catalog model's."""
    own = model_id(name, cat)
    if not own:
        return []
    extended = [m for m in cat.models.values() if m.id.startswith(own + "-")]
    return [m.id for m in sorted([cat.models[own], *extended], key=lambda m: m.params_b)][:8]


def size_beside(text: str, start: int, end: int) -> float | None:
    """The size in billions written right before text[start:end] ("20M gpt-2") or right after it
    ("qwen3-16b-a3b", "internlm2 1.8B"), if any."""
    before = _SIZE_BEFORE.search(text, max(0, start - 12), start)
    after = before or _SIZE_FOLLOWS.match(text, end)
    return _billions(after.group(1), after.group(2)) if after else None


def family_sizes(name: str, after: str, cat: Catalog) -> tuple[str, list[str]] | None:
    """A family (and version) named without a size ("LLaMA 3", "qwen2.5"): the catalog's sizes
    of it, smallest first, so the question back can list them; None when the catalog has none."""
    version = _VERSION_AFTER.match(after)
    latin = re.match(r"[a-z0-9.\s_-]*", name.strip().lower()).group(0).strip()  # not the words after it
    key = re.sub(r"[\s_]+", "-", latin)
    if version and not re.search(r"\d$", key):
        key = f"{key}-{version.group(1)}"
    # the family's own sizes (qwen2.5-7b), not its variants (qwen2.5-coder-7b)
    sized = [
        m for m in cat.models.values() if m.id.startswith(key + "-") and _SIZE_ONLY.fullmatch(m.id[len(key) + 1 :])
    ]
    if len(sized) < 2:
        return None
    sized.sort(key=lambda m: m.params_b)
    return key, [m.id for m in sized][:8]


def suggest_gpus(value: str, cat: Catalog, n: int = 3) -> list[str]:
    """Did-you-mean candidates for a GPU name the catalog does not know."""

    hits = process.extract(normalize_name(value), list(cat.gpu_index), scorer=fuzz.ratio, limit=n * 3, score_cutoff=50)
    return list(dict.fromkeys(cat.gpu_index[name] for name, _, _ in hits))[:n]
