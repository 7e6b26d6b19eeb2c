"""Regular expressions kept on disk (bot/language/compiled.py) are the ones re.compile makes."""

import re

import pytest

from gpuplan.bot.language import compiled as cache

PATTERNS = [
    (r"(?P<count>\d+)\s*(?:x|[×*])?\s*(h100|a100)(?:-(\d+)gb?)?$", 0),
    (r"(?:oom(?<!(?:[a-z])oom)|out of memory|显存不足|cuda error: out of memory)", 0),
    (r"^\s*(?:[$!>]\s*)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:torchrun|deepspeed|accelerate launch)", re.I),
    (r"(?:zero_optimization|stage)\s*[:=]\s*(\d)", re.I | re.M),
    (r"(?<![\w\-./])--?[A-Za-z][\w.\-]*(?:=\S+|[ \t]+(?!--?[A-Za-z])[^\s\u4e00-\u9fff，。；]+)?", 0),
    (r"(\d+(?:\.\d+)?)\s*(万亿|亿|万|t|b|m)(?:\s*tokens?)?", 0),
    (r"(?P<a>x)(?P=a)|(?(1)y|z)", re.S),
]


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """An empty cache in tmp_path; the process's memory of it emptied before and after."""

    def forget():
        for fn in (cache._cache_file, cache._stored, cache._checked):
            fn.cache_clear()
        cache._compiled_here.clear()
        cache._built_here.clear()

    monkeypatch.setenv("GPUPLAN_KNOWLEDGE_CACHE", str(tmp_path))
    forget()
    yield forget
    forget()


def _same(a: re.Pattern, b: re.Pattern) -> bool:
    """Equal patterns compare flags, text and program; the group tables are compared too."""
    return a == b and (a.groups, a.groupindex) == (b.groups, b.groupindex)


@pytest.mark.parametrize("pattern, flags", PATTERNS)
def test_a_pattern_compiled_then_read_back_is_re_compiles(fresh, tmp_path, pattern, flags):
    first = cache.compiled(pattern, flags)
    assert _same(first, re.compile(pattern, flags))
    cache._save()
    assert len(list(tmp_path.glob("patterns-*.marshal"))) == 1
    fresh()
    again = cache.compiled(pattern, flags)
    assert (pattern, flags) in cache._stored()[0] and not cache._compiled_here
    assert _same(again, re.compile(pattern, flags))


def test_the_whole_vocabulary_read_back_is_re_compiles(fresh):
    """Every pattern the parser's vocabulary keeps, rebuilt from the file, equals re.compile's."""
    from gpuplan.bot.language import intent, vocabulary

    vocabulary.vocabulary.cache_clear()
    intent._section_patterns.cache_clear()
    try:
        vocabulary.vocabulary()
        intent._section_patterns()
        programs = dict(cache._compiled_here)
        assert len(programs) > 100
        cache._save()
        fresh()
        for pattern, flags in programs:
            assert _same(cache.compiled(pattern, flags), re.compile(pattern, flags)), pattern[:80]
        assert not cache._compiled_here
    finally:
        vocabulary.vocabulary.cache_clear()
        intent._section_patterns.cache_clear()


@pytest.mark.parametrize("content", [b"", b"not marshal", b"\xe9\x01\x00\x00\x00", b"i\x01\x00\x00\x00"])
def test_a_damaged_file_is_compiled_again(fresh, tmp_path, content):
    pattern, flags = PATTERNS[0]
    cache.compiled(pattern, flags)
    cache._save()
    (path,) = tmp_path.glob("patterns-*.marshal")
    path.write_bytes(content)
    fresh()
    assert _same(cache.compiled(pattern, flags), re.compile(pattern, flags))


def test_a_wrong_program_in_the_file_is_compiled_again(fresh, tmp_path):
    import marshal

    pattern, flags = PATTERNS[0]
    cache.compiled(pattern, flags)
    cache._save()
    (path,) = tmp_path.glob("patterns-*.marshal")
    path.write_bytes(marshal.dumps({"programs": {(pattern, flags): (0, [1, 2, 3], 0, {}, ())}, "texts": {}}))
    fresh()
    assert _same(cache.compiled(pattern, flags), re.compile(pattern, flags))


@pytest.mark.parametrize("setting", ["off", "0", ""])
def test_with_the_cache_off_nothing_is_kept(fresh, tmp_path, monkeypatch, setting):
    monkeypatch.setenv("GPUPLAN_KNOWLEDGE_CACHE", setting)
    pattern, flags = PATTERNS[1]
    assert _same(cache.compiled(pattern, flags), re.compile(pattern, flags))
    assert not cache._compiled_here and not list(tmp_path.iterdir())


def test_a_python_whose_re_builds_otherwise_compiles_uncached(fresh, monkeypatch):
    monkeypatch.setattr(cache, "_program", lambda pattern, flags: (0, [], 0, {}, ()))
    pattern, flags = PATTERNS[2]
    assert _same(cache.compiled(pattern, flags), re.compile(pattern, flags))
    assert not cache._compiled_here


@pytest.mark.parametrize("pattern", ["(unclosed", "a{2,1}", "(?<!a+)b", "[z-a]"])
def test_a_pattern_re_rejects_is_rejected_alike(fresh, pattern):
    with pytest.raises(re.error):
        re.compile(pattern)
    with pytest.raises(re.error):
        cache.compiled(pattern)


def _spelled(words: tuple[str, ...], upper: bool = False) -> str:
    """A stand-in pattern builder that counts its calls."""
    _spelled.calls += 1
    return "|".join(w.upper() if upper else w for w in words)


_spelled.calls = 0


@pytest.mark.parametrize(
    "args",
    [(("gpu", "卡", "显卡"),), (("a100", "h100"), True), ((),), (("(?:x|y)z", r"\d+"), False)],
)
def test_a_built_pattern_is_built_once_then_read_back(fresh, args):
    calls = _spelled.calls
    text = cache.built(_spelled, *args)
    assert text == "|".join(w.upper() if args[1:] == (True,) else w for w in args[0])
    cache._save()
    fresh()
    assert cache.built(_spelled, *args) == text
    assert _spelled.calls == calls + 1 and not cache._built_here


def test_the_vocabulary_read_back_builds_no_pattern(fresh, monkeypatch):
    """A second process takes every alternation and name trie of the vocabulary from the file."""
    from gpuplan.bot.language import catalog_names, intent, patterns, vocabulary

    vocabulary.vocabulary.cache_clear()
    intent._section_patterns.cache_clear()
    try:
        first = vocabulary.vocabulary()
        intent._section_patterns()
        assert len(cache._built_here) > 50  # the word tables now live in the reading rules (engine.py)
        cache._save()
        fresh()
        vocabulary.vocabulary.cache_clear()
        intent._section_patterns.cache_clear()
        # what the builders call (replacing the builders would change the calls' names, the file's keys)
        monkeypatch.setattr(patterns, "literal_branches", lambda p: pytest.fail("an alternation built again"))
        monkeypatch.setattr(catalog_names, "_emit", lambda node: pytest.fail("a name trie built again"))
        again = vocabulary.vocabulary()
        intent._section_patterns()
        assert again.model_alias == first.model_alias and again.tables == first.tables
        assert not cache._built_here and not cache._compiled_here
    finally:
        vocabulary.vocabulary.cache_clear()
        intent._section_patterns.cache_clear()
