"""Packaging: the wheel installs one name, `gpuplan`, with its data; and the reading, estimating
and knowledge layers never import Slack."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
SLACK_FREE = ("bot/language", "estimator", "knowledge")
SLACK_MODULES = ("slack_bolt", "slack_sdk", "gpuplan.bot.slack")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """The wheel `pip wheel .` builds, from a copy of the sources (the build leaves no files here)."""
    source = tmp_path_factory.mktemp("src") / "gpuplan"
    ignore = shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", "build", ".ruff_cache", "tests")
    shutil.copytree(ROOT, source, ignore=ignore)
    out = tmp_path_factory.mktemp("wheel")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), "."]
    subprocess.run(command, cwd=source, check=True, capture_output=True, timeout=300)
    return zipfile.ZipFile(next(out.glob("gpuplan-*.whl")))


def test_wheel_installs_one_top_level_name(wheel: zipfile.ZipFile) -> None:
    tops = {name.split("/")[0] for name in wheel.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"gpuplan"}


def test_wheel_carries_every_module_and_its_data(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    for path in [*ROOT.glob("bot/**/*.py"), *ROOT.glob("estimator/*.py"), *ROOT.glob("knowledge/*.py")]:
        assert "gpuplan/" + path.relative_to(ROOT).as_posix() in names
    data = [*ROOT.glob("knowledge/*.yaml"), *ROOT.glob("knowledge/rules/**/*.yaml"), *ROOT.glob("knowledge/*.npz")]
    for path in [*data, *ROOT.glob("templates/??/*")]:
        assert "gpuplan/" + path.relative_to(ROOT).as_posix() in names
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "gpuplan = gpuplan.bot.cli:main" in wheel.read(entry).decode()


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return found


@pytest.mark.parametrize("folder", SLACK_FREE)
def test_layer_is_free_of_slack(folder: str) -> None:
    for path in (ROOT / folder).rglob("*.py"):
        slack = {name for name in _imports(path) if name.startswith(SLACK_MODULES)}
        assert not slack, f"{path.relative_to(ROOT)} imports {sorted(slack)}"


def test_lower_layers_do_not_import_the_surfaces() -> None:
    """estimator and knowledge sit under bot: they never import it."""
    for folder in ("estimator", "knowledge"):
        for path in (ROOT / folder).rglob("*.py"):
            assert not {n for n in _imports(path) if n.startswith("gpuplan.bot")}, path


def test_imports_are_under_the_one_name() -> None:
    """No module imports the folders by their bare names (two identities of one module)."""
    bare = ("bot", "estimator", "knowledge", "templates")
    for path in [*ROOT.glob("bot/**/*.py"), *ROOT.glob("estimator/*.py"), *ROOT.glob("knowledge/*.py")]:
        assert not {n for n in _imports(path) if n.split(".")[0] in bare}, path


def _imports_inside_functions(path: Path) -> list[int]:
    """Lines of imports written inside a function (TYPE_CHECKING blocks are at module level)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inner = (n for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom))
            lines += [n.lineno for n in inner]
    return lines


def test_the_reading_layer_imports_nothing_inside_a_function() -> None:
    """No import cycle held together by an import inside a function (issue 38)."""
    found = {
        path.name: lines for path in (ROOT / "bot/language").glob("*.py") if (lines := _imports_inside_functions(path))
    }
    assert not found


def test_no_module_of_the_reading_layer_is_over_400_lines() -> None:
    """A module a newcomer can read through: the Reader is split by what it reads (issue 38)."""
    long = {
        path.name: n for path in (ROOT / "bot/language").glob("*.py") if (n := len(path.read_text().splitlines())) > 400
    }
    assert not long


def test_the_reading_layer_makes_no_network_calls() -> None:
    """Looking a Hub id up is bot/hub.py's; bot/language only tells whether a word is one."""
    network = ("urllib", "http", "huggingface_hub", "requests", "socket", "gpuplan.bot.hub")
    for path in (ROOT / "bot/language").glob("*.py"):
        assert not {n for n in _imports(path) if n.startswith(network)}, path


def test_elsewhere_an_import_inside_a_function_says_why() -> None:
    """Outside bot/language only the lazy import of a heavy library (matplotlib, Slack's SDK, the
    Hub client) stays inside a function, kept off the start-up path, with a comment saying so."""
    unexplained = []
    for path in [*ROOT.glob("bot/**/*.py"), *ROOT.glob("estimator/*.py"), *ROOT.glob("knowledge/*.py")]:
        lines = path.read_text(encoding="utf-8").splitlines()
        for line in _imports_inside_functions(path):
            if not any("#" in text for text in lines[max(0, line - 4) : line]):
                unexplained.append(f"{path.relative_to(ROOT)}:{line}")
    assert not unexplained
