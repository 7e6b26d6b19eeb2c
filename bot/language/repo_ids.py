"""Whether a word names a Hugging Face model repo: `org/name` or its huggingface.co address.

Pure text: the reader asks it of words it meets ("`xverse/XVERSE-65B`", a pasted `--model` flag);
fetching the repo's config.json is bot/hub.py's, outside the language layer.
"""

from __future__ import annotations

import re

from gpuplan.knowledge import catalog

# --- recognising a repo id --------------------------------------------------------------------

# huggingface_hub.utils._validators.REPO_ID_REGEX: ASCII letters, digits, '_', '-' and '.', at most 96,
# no '--'/'..' (not `\w`, which takes any letter: "A/0μ0" made huggingface_hub raise)
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9])?"
_REPO_ID = re.compile(rf"({_PART})/({_PART})")
_HUB_URL = re.compile(
    rf"(?:https?://)?(?:www\.)?(?:huggingface\.co|hf\.co)/({_PART})/({_PART})(?:/(?:tree|blob|resolve)/\S*)?/?"
    r"(?:[?#]\S*)?",
    re.IGNORECASE,
)
# huggingface.co's own routes, which no user or organisation can take; and common folder names
_NOT_ORGS = re.compile(
    r"models|datasets|spaces|docs|api|settings|organizations|collections|papers|blog|learn|tasks|join|login|pricing|"
    r"enterprise|new|posts|chat|src|data|dataset|checkpoints?|ckpts?|outputs?|out|home|tmp|var|usr|mnt|lib|bin|etc|"
    r"scripts|configs|tests|runs|logs|weights|local|root|workspace|cache",
    re.IGNORECASE,
)
_FILE = re.compile(
    r"\.(py|ipynb|json|jsonl|ya?ml|toml|cfg|ini|txt|md|rst|csv|tsv|parquet|arrow|sh|bash|log|pt|pth|bin|ckpt|"
    r"safetensors|gguf|onnx|h5|pkl|npy|npz|tar|gz|tgz|zip|xz|zst|c|cc|cpp|h|hpp|cu|js|ts|go|rs|java|rb|"
    r"html|css|png|jpe?g|pdf|whl|lock|env|conf|sql|db)$",
    re.IGNORECASE,
)
_JARGON = (
    re.compile(r"v?\d[\d.,]*[a-z]{0,3}", re.IGNORECASE),  # 12.1, 2024, 7B, 80GB, 4x, v2
    re.compile(r"(mx|nv)?(fp|bf|tf|int|uint|nf|float|bfloat)\d*", re.IGNORECASE),  # fp16, bf16, int8, mxfp4
)
_TRIM = "`'\"()[]{},;:!?*_"


def repo_id_from(text: str) -> str | None:
    """The `org/name` a word or huggingface.co link names, or None ('src/train.py', 'N/A', '1/5', 'A100/H100')."""
    word = text.strip().strip(_TRIM)
    if word.startswith("<") and word.endswith(">"):  # a Slack link: <https://...|label>
        word = word[1:-1].split("|", 1)[0]
    url = _HUB_URL.fullmatch(word)
    match = url or (None if "://" in word else _REPO_ID.fullmatch(word))
    if match is None:
        return None
    org, name = match.group(1), match.group(2)
    return f"{org}/{name}" if _plausible(org, name) else None


def looks_like_repo_id(text: str) -> bool:
    """True for a Hugging Face model id (`microsoft/phi-4`) or its huggingface.co address."""
    return repo_id_from(text) is not None


def _plausible(org: str, name: str) -> bool:
    """Model repos' names carry a size, version or separator; chat shorthand ('TCP/IP', 'and/or') does not."""
    if "--" in org + name or ".." in org + name or name.lower().endswith(".git"):
        return False
    if _NOT_ORGS.fullmatch(org) or _FILE.search(name) or not re.search(r"[\d._-]", name):
        return False
    if any(rx.fullmatch(part) for rx in _JARGON for part in (org, name)):
        return False
    return not any(_is_gpu(part) for part in (org, name))


def _is_gpu(word: str) -> bool:
    return catalog().find_gpu(re.sub(r"^\d+\s*[x×]", "", word)) is not None
