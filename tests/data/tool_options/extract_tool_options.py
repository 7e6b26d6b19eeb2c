#!/usr/bin/env python3
"""Regenerate the option-name reference lists in this directory.

The lists are extracted *statically* from the tools' own source code with
``ast``; no tool package is imported or installed.  A "snapshot" can be

* a bare git directory as brought by the search tool's ``fetch``
  (read with ``git --git-dir=DIR show REV:path``),
* a checked-out / unpacked source directory, or
* a wheel (``.whl``) or sdist zip file (read with ``zipfile``).

Usage::

    python extract_tool_options.py vllm         SNAPSHOT [--out DIR]
    python extract_tool_options.py sglang       SNAPSHOT [--out DIR]
    python extract_tool_options.py megatron     SNAPSHOT [--out DIR]
    python extract_tool_options.py llamafactory SNAPSHOT [--out DIR]
    python extract_tool_options.py transformers SNAPSHOT [--out DIR]

Optional ``--repo``, ``--commit`` and ``--date`` override what is written in
the header when the snapshot itself does not carry them (wheels).

What each tool subcommand emulates (see README.md for the details):

vllm
    ``vllm serve``: ``make_arg_parser`` (vllm/entrypoints/common/cli_args.py
    or vllm/entrypoints/openai/cli_args.py), ``FrontendArgs.add_cli_args``
    (one flag per dataclass field), ``AsyncEngineArgs.add_cli_args`` and
    ``EngineArgs.add_cli_args`` (vllm/engine/arg_utils.py).  Flags fed by
    ``**get_kwargs(SomeConfig)["field"]`` get ``BooleanOptionalAction`` when
    the field type is a bool, exactly like ``_compute_kwargs``;
    BooleanOptionalAction adds ``--no-X`` and vLLM's ``EnableDisableAction``
    also adds ``--disable-X`` for ``--enable-X`` (and vice versa).
sglang
    ``ServerArgs.add_cli_args`` (python/sglang/srt/server_args.py): explicit
    ``add_argument`` calls plus ``add_cli_args_from_dataclass`` over the
    ``A[T, "help"]`` / ``A[T, Arg(...)]`` annotated fields (cli_name,
    aliases, no_cli, action).
megatron
    ``parse_args`` in megatron/training/arguments.py and every function it
    reaches, ``ArgumentGroupFactory(Config, exclude=...)`` groups
    (megatron/training/argument_utils.py rules: bool default False ->
    ``--x``; other bool -> ``--no-x`` and ``--disable-x``;
    ``argparse_meta["arg_names"]`` wins), plus the ``extra_args_provider``
    that pretrain_gpt.py passes.
llamafactory
    init fields of the dataclasses in ``_TRAIN_ARGS`` of
    src/llamafactory/hparams/parser.py and of their dataclass bases defined
    inside the llamafactory package (the Hugging Face base is listed by the
    ``transformers`` subcommand).
transformers
    init fields of ``Seq2SeqTrainingArguments`` and its base
    ``TrainingArguments``.
"""

from __future__ import annotations

import abc
import argparse
import ast
import datetime as _dt
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field

WARNINGS: list[str] = []


def warn(msg: str) -> None:
    WARNINGS.append(msg)
    print("warning:", msg, file=sys.stderr)


# ---------------------------------------------------------------------------
# Snapshot readers
# ---------------------------------------------------------------------------


class Source(abc.ABC):
    """Where a tool's source files come from: a git snapshot, a directory, or a wheel."""

    kind = "?"

    @abc.abstractmethod
    def read(self, path: str) -> str | None:
        """The text of one source file, or None when the snapshot lacks it."""

    def exists(self, path: str) -> bool:
        return self.read(path) is not None

    def meta(self) -> dict:
        return {}


class GitSource(Source):
    kind = "git"

    def __init__(self, git_dir: str, rev: str = "HEAD"):
        self.git_dir = git_dir
        self.rev = rev
        out = self._git("ls-tree", "-r", "--name-only", rev)
        self.files = set(out.splitlines())
        self._cache: dict[str, str | None] = {}

    def _git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "--git-dir", self.git_dir, *args],
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    def read(self, path: str) -> str | None:
        if path not in self.files:
            return None
        if path not in self._cache:
            self._cache[path] = self._git("show", f"{self.rev}:{path}")
        return self._cache[path]

    def exists(self, path: str) -> bool:
        return path in self.files

    def meta(self) -> dict:
        line = self._git("log", "-1", "--format=%H%x09%cI", self.rev).strip()
        commit, date = line.split("\t")
        return {"commit": commit, "date": date, "snapshot": f"git snapshot {self.git_dir}"}


class DirSource(Source):
    kind = "dir"

    def __init__(self, root: str):
        self.root = root

    def read(self, path: str) -> str | None:
        p = os.path.join(self.root, path)
        if not os.path.isfile(p):
            return None
        with open(p, encoding="utf-8") as f:
            return f.read()

    def meta(self) -> dict:
        return {"snapshot": f"directory {self.root}"}


class ZipSource(Source):
    kind = "zip"

    def __init__(self, path: str):
        self.path = path
        self.zf = zipfile.ZipFile(path)
        self.names = set(self.zf.namelist())

    def read(self, path: str) -> str | None:
        if path not in self.names:
            return None
        return self.zf.read(path).decode("utf-8")

    def exists(self, path: str) -> bool:
        return path in self.names

    def meta(self) -> dict:
        info: dict = {"snapshot": f"wheel {os.path.basename(self.path)}"}
        for n in self.names:
            if n.endswith(".dist-info/METADATA"):
                text = self.zf.read(n).decode("utf-8", "replace")
                m = re.search(r"^Version: (.+)$", text, re.M)
                if m:
                    info["version"] = m.group(1).strip()
            if re.fullmatch(r"[^/]+/_version\.py", n):
                text = self.zf.read(n).decode("utf-8", "replace")
                m = re.search(r"commit_id\s*=\s*'g?([0-9a-f]{7,40})'", text)
                if m:
                    info["commit"] = m.group(1) + " (abbreviated, from " + n + ")"
        newest = max(
            (_dt.datetime(*zi.date_time) for zi in self.zf.infolist()),
            default=None,
        )
        if newest is not None:
            info["date"] = "not recorded in the wheel; newest file timestamp in it: " + newest.isoformat()
        return info


def open_source(spec: str, rev: str) -> Source:
    if os.path.isfile(spec) and zipfile.is_zipfile(spec):
        return ZipSource(spec)
    if os.path.isdir(spec) and (
        os.path.isfile(os.path.join(spec, "HEAD")) and os.path.isdir(os.path.join(spec, "objects"))
    ):
        return GitSource(spec, rev)
    if os.path.isdir(os.path.join(spec, ".git")):
        return GitSource(os.path.join(spec, ".git"), rev)
    if os.path.isdir(spec):
        return DirSource(spec)
    raise SystemExit(f"cannot open snapshot {spec!r}")


# ---------------------------------------------------------------------------
# Modules and name resolution
# ---------------------------------------------------------------------------


@dataclass
class Module:
    name: str
    path: str
    tree: ast.Module
    is_pkg: bool


class Project:
    """Maps dotted module names to files of one snapshot (several roots)."""

    def __init__(self, source: Source, prefixes: list[str]):
        self.source = source
        self.prefixes = prefixes
        self._cache: dict[str, Module | None] = {}
        self.used_files: set[str] = set()

    def load(self, modname: str) -> Module | None:
        if modname in self._cache:
            return self._cache[modname]
        mod = None
        rel = modname.replace(".", "/")
        for prefix in self.prefixes:
            for cand, is_pkg in ((f"{prefix}{rel}.py", False), (f"{prefix}{rel}/__init__.py", True)):
                text = self.source.read(cand)
                if text is not None:
                    mod = Module(modname, cand, ast.parse(text, cand), is_pkg)
                    break
            if mod:
                break
        self._cache[modname] = mod
        return mod

    def load_path(self, path: str, modname: str | None = None) -> Module | None:
        text = self.source.read(path)
        if text is None:
            return None
        name = modname or path[:-3].replace("/", ".")
        mod = Module(name, path, ast.parse(text, path), path.endswith("__init__.py"))
        self._cache.setdefault(name, mod)
        return mod

    # -- imports ---------------------------------------------------------

    @staticmethod
    def abs_module(mod: Module, level: int, target: str | None) -> str:
        if level == 0:
            return target or ""
        parts = mod.name.split(".")
        if not mod.is_pkg:
            parts = parts[:-1]
        if level > 1:
            parts = parts[: len(parts) - (level - 1)]
        base = ".".join(parts)
        if target:
            return f"{base}.{target}" if base else target
        return base

    def find_def(self, mod: Module, name: str, extra_body: list | None = None, _depth: int = 0):
        """Return ("class"|"func"|"expr"|"module"|"external", Module, node|name).

        Top-level statements (descending into if/try/with blocks, last
        definition wins) and, if given, statements of a function body (for
        function-local imports) are searched.
        """
        if _depth > 30:
            return None
        found = None
        bodies = [mod.tree.body] + ([extra_body] if extra_body else [])
        for body in bodies:
            for stmt in _flatten_stmts(body):
                if isinstance(stmt, (ast.ClassDef,)) and stmt.name == name:
                    found = ("class", mod, stmt)
                elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
                    found = ("func", mod, stmt)
                elif isinstance(stmt, ast.Assign):
                    for t in stmt.targets:
                        if isinstance(t, ast.Name) and t.id == name:
                            found = ("expr", mod, stmt.value)
                elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    if stmt.target.id == name and stmt.value is not None:
                        found = ("expr", mod, stmt.value)
                elif isinstance(stmt, ast.ImportFrom):
                    for alias in stmt.names:
                        if (alias.asname or alias.name) == name:
                            found = ("import", mod, (stmt, alias))
                elif isinstance(stmt, ast.Import):
                    for alias in stmt.names:
                        if alias.asname == name:
                            found = ("module_name", mod, alias.name)
        if found is None:
            return None
        kind, m, node = found
        if kind == "import":
            stmt, alias = node
            target_mod_name = self.abs_module(m, stmt.level, stmt.module)
            sub = self.load(f"{target_mod_name}.{alias.name}")
            if sub is not None:
                return ("module", sub, None)
            target = self.load(target_mod_name)
            if target is None:
                return ("external", None, f"{target_mod_name}.{alias.name}")
            res = self.find_def(target, alias.name, _depth=_depth + 1)
            if res is None:
                return ("external", None, f"{target_mod_name}.{alias.name}")
            return res
        if kind == "module_name":
            sub = self.load(node)
            return ("module", sub, None) if sub else ("external", None, node)
        if kind == "expr" and isinstance(node, (ast.Name, ast.Attribute)):
            # simple alias: X = Y
            res = self.resolve_expr(m, node, _depth=_depth + 1)
            if res is not None:
                return res
        return found

    def resolve_expr(self, mod: Module, node: ast.AST, extra_body: list | None = None, _depth: int = 0):
        if isinstance(node, ast.Name):
            return self.find_def(mod, node.id, extra_body, _depth=_depth)
        if isinstance(node, ast.Attribute):
            base = self.resolve_expr(mod, node.value, extra_body, _depth=_depth)
            if base and base[0] == "module" and base[1] is not None:
                return self.find_def(base[1], node.attr, _depth=_depth + 1)
            return None
        return None

    def resolve_class(self, mod: Module, node: ast.AST, extra_body: list | None = None):
        res = self.resolve_expr(mod, node, extra_body)
        if res and res[0] == "class":
            return res[1], res[2]
        if res and res[0] == "expr" and isinstance(node, ast.Name):
            # e.g. sglang: ``class ServerArgs: ...`` later rebound with
            # ``ServerArgs = msgspec.defstruct("ServerArgs", ...)``: use the class body.
            for stmt in _flatten_stmts(res[1].tree.body):
                if isinstance(stmt, ast.ClassDef) and stmt.name == node.id:
                    return res[1], stmt
        return None


def _flatten_stmts(body: list) -> list:
    out = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, ast.If):
            out.extend(_flatten_stmts(stmt.body))
            out.extend(_flatten_stmts(stmt.orelse))
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            out.extend(_flatten_stmts(stmt.body))
            for h in stmt.handlers:
                out.extend(_flatten_stmts(h.body))
            out.extend(_flatten_stmts(stmt.orelse))
            out.extend(_flatten_stmts(stmt.finalbody))
        elif isinstance(stmt, ast.With):
            out.extend(_flatten_stmts(stmt.body))
    return out


def dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return dotted(node.func) + "()"
    if isinstance(node, ast.Subscript):
        return dotted(node.value) + "[]"
    if isinstance(node, ast.Constant):
        return repr(node.value)
    return type(node).__name__


def last_name(node: ast.AST) -> str:
    return dotted(node).split(".")[-1]


def const_str(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def str_list(node: ast.AST) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        out = []
        for e in node.elts:
            s = const_str(e)
            if s is None:
                return None
            out.append(s)
        return out
    return None


# ---------------------------------------------------------------------------
# Dataclass-like classes
# ---------------------------------------------------------------------------


@dataclass
class FieldInfo:
    name: str
    ann: ast.AST
    value: ast.AST | None  # raw right-hand side
    mod: Module
    owner: str
    call_kwargs: dict = field(default_factory=dict)  # kwargs of field(...)

    @property
    def default(self) -> ast.AST | None:
        if self.call_kwargs:
            return self.call_kwargs.get("default")
        return self.value

    @property
    def init(self) -> bool:
        v = self.call_kwargs.get("init")
        return not (isinstance(v, ast.Constant) and v.value is False)


FIELD_FUNCS = {"field", "Field"}


def _is_dataclass_like(proj: Project, mod: Module, cls: ast.ClassDef) -> bool:
    for d in cls.decorator_list:
        name = last_name(d.func if isinstance(d, ast.Call) else d)
        if name in ("dataclass", "config", "dataclass_transform", "pydantic_dataclass"):
            return True
    return any(dotted(b) in ("msgspec.Struct", "Struct") for b in cls.bases)


def class_mro(proj: Project, mod: Module, cls: ast.ClassDef, _seen=None) -> list:
    """C3 linearisation over the bases that can be resolved in the snapshot."""
    key = (mod.path, cls.name)
    _seen = _seen or set()
    if key in _seen:
        return [(mod, cls)]
    _seen = _seen | {key}
    base_mros = []
    bases = []
    for b in cls.bases:
        res = proj.resolve_class(mod, b)
        if res is None:
            continue
        bases.append(res)
        base_mros.append(class_mro(proj, res[0], res[1], _seen))
    seqs = [list(s) for s in base_mros] + [list(bases)]
    result = [(mod, cls)]

    def k(item):
        return (item[0].path, item[1].name)

    while True:
        seqs = [s for s in seqs if s]
        if not seqs:
            return result
        for s in seqs:
            head = s[0]
            if not any(k(head) in [k(x) for x in t[1:]] for t in seqs):
                break
        else:  # inconsistent hierarchy: fall back to DFS order
            for s in seqs:
                for item in s:
                    if k(item) not in [k(x) for x in result]:
                        result.append(item)
            return result
        result.append(head)
        seqs = [t[1:] if k(t[0]) == k(head) else t for t in seqs]


def _is_classvar(ann: ast.AST) -> bool:
    target = ann.value if isinstance(ann, ast.Subscript) else ann
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        return ann.value.startswith(("ClassVar", "typing.ClassVar"))
    return last_name(target) in ("ClassVar", "InitVar", "KW_ONLY")


def own_fields(proj: Project, mod: Module, cls: ast.ClassDef) -> list[FieldInfo]:
    out = []
    for stmt in cls.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        if _is_classvar(stmt.annotation):
            continue
        kwargs = {}
        v = stmt.value
        if isinstance(v, ast.Call) and last_name(v.func) in FIELD_FUNCS:
            kwargs = {kw.arg: kw.value for kw in v.keywords if kw.arg}
            if v.args:  # pydantic Field(default, ...)
                kwargs.setdefault("default", v.args[0])
            kwargs["__call__"] = v
        out.append(FieldInfo(stmt.target.id, stmt.annotation, v, mod, cls.name, kwargs))
    return out


def class_fields(proj: Project, mod: Module, cls: ast.ClassDef, only_pkg: str | None = None) -> dict[str, FieldInfo]:
    """Fields as ``dataclasses.fields`` would list them (nearest class wins)."""
    fields: dict[str, FieldInfo] = {}
    for m, c in reversed(class_mro(proj, mod, cls)):
        if only_pkg and not m.name.startswith(only_pkg):
            continue
        if not _is_dataclass_like(proj, m, c):
            continue
        for f in own_fields(proj, m, c):
            fields[f.name] = f
    return fields


# ---------------------------------------------------------------------------
# Type helpers
# ---------------------------------------------------------------------------


def union_members(proj: Project, mod: Module, ann: ast.AST, _depth: int = 0) -> list:
    """Flatten Annotated/Optional/Union/| ; resolve simple module aliases.

    Returns a list of ("none",) / ("name", dotted, mod) / ("other", node)."""
    if _depth > 20:
        return [("other", ann)]
    if isinstance(ann, ast.Constant):
        if ann.value is None:
            return [("none",)]
        if isinstance(ann.value, str):
            try:
                return union_members(proj, mod, ast.parse(ann.value, mode="eval").body, _depth + 1)
            except SyntaxError:
                return [("other", ann)]
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return union_members(proj, mod, ann.left, _depth + 1) + union_members(proj, mod, ann.right, _depth + 1)
    if isinstance(ann, ast.Subscript):
        head = last_name(ann.value)
        sl = ann.slice
        elts = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
        if head == "Optional":
            return union_members(proj, mod, elts[0], _depth + 1) + [("none",)]
        if head == "Union":
            out = []
            for e in elts:
                out += union_members(proj, mod, e, _depth + 1)
            return out
        if head in ("Annotated", "A"):
            return union_members(proj, mod, elts[0], _depth + 1)
        return [("other", ann)]
    if isinstance(ann, ast.Name) and ann.id == "None":
        return [("none",)]
    if isinstance(ann, (ast.Name, ast.Attribute)):
        name = dotted(ann)
        if name in ("bool", "str", "int", "float", "dict", "list", "tuple", "set", "Any"):
            return [("name", name, mod)]
        res = proj.resolve_expr(mod, ann)
        if res and res[0] == "expr" and isinstance(res[2], (ast.Subscript, ast.BinOp)):
            inner = res[2]
            # TypeAlias = Literal[...] etc.
            return union_members(proj, res[1], inner, _depth + 1)
        return [("name", name, mod)]
    return [("other", ann)]


def member_names(members: list) -> set[str]:
    out = set()
    for m in members:
        if m[0] == "none":
            out.add("None")
        elif m[0] == "name":
            out.add(m[1])
        else:
            out.add(dotted(m[1]))
    return out


def members_include_dataclass(proj: Project, members: list) -> bool:
    for m in members:
        if m[0] != "name" or m[1] in ("bool", "str", "int", "float", "dict", "list", "tuple", "set", "Any"):
            continue
        res = proj.resolve_expr(m[2], ast.parse(m[1], mode="eval").body)
        if res and res[0] == "class" and _is_dataclass_like(proj, res[1], res[2]):
            return True
    return False


# ---------------------------------------------------------------------------
# Collected options
# ---------------------------------------------------------------------------


class Options:
    def __init__(self):
        self.flags: dict[str, set[str]] = {}  # flag -> source files
        self.aliases: dict[str, str] = {}  # alias -> primary long flag
        self.groups: list[list[str]] = []  # spellings registered together
        self.conditional: dict[str, str] = {}
        self.deprecated: set[str] = set()

    def add(
        self,
        names: list[str],
        origin: str,
        boolopt: bool = False,
        enable_disable: bool = False,
        condition: str | None = None,
        deprecated: bool = False,
    ):
        names = [n for n in names if n]
        longs = [n for n in names if n.startswith("--")]
        shorts = [n for n in names if n.startswith("-") and not n.startswith("--")]
        extra = []
        if boolopt:
            for n in longs:
                extra.append("--no-" + n[2:])
            if enable_disable:
                for n in longs:
                    if n.startswith("--enable-"):
                        extra.append("--disable-" + n[len("--enable-") :])
                    elif n.startswith("--disable-"):
                        extra.append("--enable-" + n[len("--disable-") :])
        all_long = longs + extra
        for n in all_long:
            self.flags.setdefault(n, set()).add(origin)
            if condition:
                self.conditional.setdefault(n, condition)
            if deprecated:
                self.deprecated.add(n)
        if longs:
            for s in shorts:
                self.aliases[s] = longs[0]
            if len(longs) > 1:
                for n in longs[1:]:
                    self.aliases.setdefault(n, longs[0])
        elif shorts:
            warn(f"only short option strings {shorts} ({origin})")
        self.groups.append(names + extra)


# ---------------------------------------------------------------------------
# A small interpreter for add_argument-style function bodies
# ---------------------------------------------------------------------------


class ArgInterpreter:
    """Walks function bodies and records ``*.add_argument(...)`` flags.

    Hooks (``on_call``) let each tool handle its own helpers.
    """

    def __init__(self, proj: Project, opts: Options, enable_disable: bool = False):
        self.proj = proj
        self.opts = opts
        self.enable_disable = enable_disable
        self.visited: set = set()

    # values bound to local names: dict name -> python value or ("kwargs", ...)
    def run_function(self, mod: Module, func: ast.FunctionDef, cls_ctx=None, condition=None, env=None):
        key = (mod.path, func.name, cls_ctx[1].name if cls_ctx else None)
        if key in self.visited:
            return
        self.visited.add(key)
        env = dict(env or {})
        self.exec_body(mod, func, func.body, env, cls_ctx, condition)

    def exec_body(self, mod, func, body, env, cls_ctx, condition):
        for stmt in body:
            self.exec_stmt(mod, func, stmt, env, cls_ctx, condition)

    def exec_stmt(self, mod, func, stmt, env, cls_ctx, condition):
        if isinstance(stmt, ast.If):
            value = self.eval_test(func, stmt.test)
            if value is True:
                self.exec_body(mod, func, stmt.body, env, cls_ctx, condition)
                return
            if value is False:
                self.exec_body(mod, func, stmt.orelse, env, cls_ctx, condition)
                return
            cond = ast.unparse(stmt.test)
            self.exec_body(mod, func, stmt.body, env, cls_ctx, condition or f"if {cond}")
            self.exec_body(mod, func, stmt.orelse, env, cls_ctx, condition or f"if not ({cond})")
            return
        if isinstance(stmt, (ast.With,)):
            self.exec_body(mod, func, stmt.body, env, cls_ctx, condition)
            return
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self.exec_body(mod, func, stmt.body, env, cls_ctx, condition)
            for h in stmt.handlers:
                self.exec_body(mod, func, h.body, env, cls_ctx, condition)
            self.exec_body(mod, func, stmt.orelse, env, cls_ctx, condition)
            self.exec_body(mod, func, stmt.finalbody, env, cls_ctx, condition)
            return
        if isinstance(stmt, ast.For):
            seq = stmt.iter
            if isinstance(seq, (ast.List, ast.Tuple)):
                for elt in seq.elts:
                    env2 = dict(env)
                    self.bind(stmt.target, elt, env2)
                    self.exec_body(mod, func, stmt.body, env2, cls_ctx, condition)
                return
            self.on_for(mod, func, stmt, env, cls_ctx, condition)
            return
        if isinstance(stmt, ast.Assign):
            self.on_assign(mod, func, stmt, env, cls_ctx)
        # Visit calls inside the statement (also inside assignments / returns)
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                self.on_call(mod, func, node, env, cls_ctx, condition)

    @staticmethod
    def param_defaults(func) -> dict:
        """Literal defaults of a function's parameters (call sites here pass none)."""
        a = func.args
        out = {}
        pos = a.posonlyargs + a.args
        for arg, d in zip(pos[len(pos) - len(a.defaults) :], a.defaults, strict=False):
            if isinstance(d, ast.Constant):
                out[arg.arg] = d.value
        for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=False):
            if isinstance(d, ast.Constant):
                out[arg.arg] = d.value
        return out

    def eval_test(self, func, test):
        """True/False if ``test`` only uses parameters with literal defaults."""
        defaults = self.param_defaults(func)
        if isinstance(test, ast.Name) and test.id in defaults:
            return bool(defaults[test.id])
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            v = self.eval_test(func, test.operand)
            return None if v is None else not v
        return None

    def bind(self, target, value, env):
        if isinstance(target, ast.Name):
            env[target.id] = ("ast", value)
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
            for t, v in zip(target.elts, value.elts, strict=False):
                self.bind(t, v, env)

    # hooks ---------------------------------------------------------------
    def on_assign(self, mod, func, stmt, env, cls_ctx):
        """An assignment the walk meets; interpreters that track names override it (the base ignores it)."""

    def on_for(self, mod, func, stmt, env, cls_ctx, condition):
        self.exec_body(mod, func, stmt.body, env, cls_ctx, condition)

    def option_strings(self, call, env, origin) -> list[str] | None:
        names = []
        for a in call.args:
            if isinstance(a, ast.Starred):
                return names if names else None
            s = const_str(a)
            if s is None and isinstance(a, ast.Name) and a.id in env and env[a.id][0] == "ast":
                s = const_str(env[a.id][1])
            if s is None:
                if isinstance(a, ast.Constant):
                    continue
                warn(f"non-literal option string {ast.unparse(a)} at {origin}")
                continue
            names.append(s)
        return names

    def splat_info(self, mod, func, call, env, cls_ctx):
        """Return (boolopt_or_None, action_override) for ``**kwargs`` splats."""
        return None

    def on_call(self, mod, func, call, env, cls_ctx, condition):
        if isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument":
            origin = f"{mod.path}:{call.lineno}"
            names = self.option_strings(call, env, origin)
            if names is None:
                return
            names = [n for n in names if n.startswith("-")]
            if not names:
                return  # positional
            kw = {k.arg: k.value for k in call.keywords if k.arg}
            boolopt = False
            if "action" in kw:
                boolopt = last_name(kw["action"]) == "BooleanOptionalAction"
            else:
                info = self.splat_info(mod, func, call, env, cls_ctx)
                if info:
                    boolopt = info
            dep = isinstance(kw.get("deprecated"), ast.Constant) and kw["deprecated"].value is True
            self.opts.add(
                names,
                mod.path,
                boolopt=boolopt,
                enable_disable=self.enable_disable,
                condition=condition,
                deprecated=dep,
            )


# ---------------------------------------------------------------------------
# vLLM
# ---------------------------------------------------------------------------


class VllmInterpreter(ArgInterpreter):
    """Understands ``X_kwargs = get_kwargs(Config)`` and ``**X_kwargs["f"]``."""

    def __init__(self, proj, opts):
        super().__init__(proj, opts, enable_disable=True)

    def _get_kwargs_cls(self, mod, func, node):
        # get_kwargs(Cls) -> (mod, cls)
        if isinstance(node, ast.Call) and last_name(node.func) == "get_kwargs" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Name) and arg.id == "cls":
                return "cls"
            res = self.proj.resolve_class(mod, arg, func.body)
            if res is None:
                warn(f"cannot resolve get_kwargs({ast.unparse(arg)}) in {mod.path}")
            return res
        return None

    def on_assign(self, mod, func, stmt, env, cls_ctx):
        tgt = stmt.targets[0]
        v = stmt.value
        if isinstance(tgt, ast.Name):
            c = self._get_kwargs_cls(mod, func, v)
            if c:
                env[tgt.id] = ("kwcls", c if c != "cls" else cls_ctx)
                return
            # X = get_kwargs(C)["f"]  or  X = Y["f"]
            if isinstance(v, ast.Subscript) and const_str(v.slice) is not None:
                c = self._get_kwargs_cls(mod, func, v.value)
                if c:
                    env[tgt.id] = ("kwfield", c if c != "cls" else cls_ctx, const_str(v.slice), None)
                    return
                if isinstance(v.value, ast.Name) and env.get(v.value.id, ("",))[0] == "kwcls":
                    env[tgt.id] = ("kwfield", env[v.value.id][1], const_str(v.slice), None)
                    return
        # X["f"]["action"] = ...   /   X["action"] = ...
        if isinstance(tgt, ast.Subscript) and const_str(tgt.slice) == "action":
            inner = tgt.value
            if isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Name):
                var = inner.value.id
                f = const_str(inner.slice)
                if env.get(var, ("",))[0] == "kwcls" and f:
                    env.setdefault(("action", var, f), v)
                    env[("action", var, f)] = v
            elif isinstance(inner, ast.Name) and env.get(inner.id, ("",))[0] == "kwfield":
                t = env[inner.id]
                env[inner.id] = (t[0], t[1], t[2], v)

    def field_is_boolopt(self, cls_res, fname: str) -> bool | None:
        if cls_res is None:
            return None
        m, c = cls_res
        fields = class_fields(self.proj, m, c)
        f = fields.get(fname)
        if f is None:
            warn(f"field {fname} not found in {c.name} ({m.path})")
            return None
        self.opts_src_files.add(f.mod.path)
        members = union_members(self.proj, f.mod, f.ann)
        names = member_names(members)
        if members_include_dataclass(self.proj, members):
            return False
        if names == {"bool", "str", "None"}:
            return False
        return "bool" in names

    opts_src_files: set = set()

    def _splat_target(self, node, env):
        """Return (cls_res, field, action_override) for a ``**expr``."""
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            var = node.value.id
            f = const_str(node.slice)
            if env.get(var, ("",))[0] == "kwcls" and f:
                return env[var][1], f, env.get(("action", var, f))
        if isinstance(node, ast.Name) and env.get(node.id, ("",))[0] == "kwfield":
            t = env[node.id]
            return t[1], t[2], t[3]
        if isinstance(node, ast.Dict):
            base = None
            action = None
            for k, v in zip(node.keys, node.values, strict=False):
                if k is None:
                    base = self._splat_target(v, env)
                elif const_str(k) == "action":
                    action = v
            if base:
                return base[0], base[1], action or base[2]
        return None

    def splat_info(self, mod, func, call, env, cls_ctx):
        for k in call.keywords:
            if k.arg is None:
                t = self._splat_target(k.value, env)
                if t is None:
                    warn(f"unresolved **{ast.unparse(k.value)} at {mod.path}:{call.lineno}")
                    return None
                cls_res, fname, action = t
                if action is not None:
                    return last_name(action) == "BooleanOptionalAction"
                return self.field_is_boolopt(cls_res, fname)
        return None

    def on_call(self, mod, func, call, env, cls_ctx, condition):
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr == "add_cli_args" and isinstance(f.value, ast.Name):
            res = self.proj.resolve_class(mod, f.value, func.body)
            if res is None:
                warn(f"cannot resolve {f.value.id}.add_cli_args in {mod.path}")
                return
            self.run_add_cli_args(res[0], res[1], condition)
            return
        if isinstance(f, ast.Attribute) and f.attr == "pre_register_and_update":
            return
        super().on_call(mod, func, call, env, cls_ctx, condition)

    def find_method(self, m, c, name):
        for mm, cc in class_mro(self.proj, m, c):
            for stmt in cc.body:
                if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
                    return mm, cc, stmt
        return None

    def run_add_cli_args(self, m, c, condition=None):
        found = self.find_method(m, c, "add_cli_args")
        if not found:
            warn(f"no add_cli_args in {c.name}")
            return
        mm, cc, meth = found
        # Generic "one flag per dataclass field" loop (vLLM FrontendArgs)?
        loops_over_fields = any(
            isinstance(n, ast.For)
            and isinstance(n.iter, ast.Call)
            and isinstance(n.iter.func, ast.Attribute)
            and n.iter.func.attr == "items"
            for n in ast.walk(meth)
        ) and any(
            isinstance(n, ast.Call)
            and last_name(n.func) == "get_kwargs"
            and n.args
            and isinstance(n.args[0], ast.Name)
            and n.args[0].id == "cls"
            for n in ast.walk(meth)
        )
        if loops_over_fields:
            self.emit_all_fields(m, c, condition)
            return
        self.run_function(mm, meth, cls_ctx=(m, c), condition=condition)

    def emit_all_fields(self, m, c, condition):
        fields = class_fields(self.proj, m, c)
        # extra "flags" and "action" set in _customize_cli_kwargs of the MRO
        extra_flags: dict[str, list[str]] = {}
        actions: dict[str, ast.AST] = {}
        for _mm, cc in class_mro(self.proj, m, c):
            for stmt in cc.body:
                if isinstance(stmt, ast.FunctionDef) and stmt.name == "_customize_cli_kwargs":
                    for n in ast.walk(stmt):
                        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Subscript):
                            t = n.targets[0]
                            key = const_str(t.slice)
                            if isinstance(t.value, ast.Subscript):
                                fname = const_str(t.value.slice)
                                if key == "flags" and fname:
                                    extra_flags.setdefault(fname, str_list(n.value) or [])
                                elif key == "action" and fname:
                                    actions.setdefault(fname, n.value)
        for name, f in fields.items():
            self.opts_src_files.add(f.mod.path)
            flag = "--" + name.replace("_", "-")
            if name in actions:
                boolopt = last_name(actions[name]) == "BooleanOptionalAction"
            else:
                boolopt = self.field_is_boolopt((m, c), name)
            self.opts.add(
                extra_flags.get(name, []) + [flag],
                f.mod.path,
                boolopt=bool(boolopt),
                enable_disable=True,
                condition=condition,
            )


def extract_vllm(proj: Project):
    opts = Options()
    interp = VllmInterpreter(proj, opts)
    interp.opts_src_files = set()
    cand = ["vllm.entrypoints.common.cli_args", "vllm.entrypoints.openai.cli_args"]
    for name in cand:
        mod = proj.load(name)
        if mod is None:
            continue
        res = proj.find_def(mod, "make_arg_parser")
        if res and res[0] == "func":
            interp.run_function(res[1], res[2])
            opts.add(["-h", "--help"], "argparse (add_help=True)")
            files = sorted({p for s in opts.flags.values() for p in s if p.endswith(".py")} | interp.opts_src_files)
            return opts, files
    raise SystemExit("make_arg_parser not found in " + ", ".join(cand))


# ---------------------------------------------------------------------------
# SGLang
# ---------------------------------------------------------------------------


class SglangInterpreter(ArgInterpreter):
    def __init__(self, proj, opts):
        super().__init__(proj, opts, enable_disable=False)
        self.src_files: set[str] = set()

    def on_call(self, mod, func, call, env, cls_ctx, condition):
        if last_name(call.func) == "add_cli_args_from_dataclass" and len(call.args) >= 2:
            only = None
            for k in call.keywords:
                if k.arg == "fields":
                    only = str_list(k.value)
            self.emit_dataclass(mod, func, call.args[1], only, condition)
            return
        super().on_call(mod, func, call, env, cls_ctx, condition)

    def record_fields(self, mod, cls_node_expr, func):
        """Fields of the ServerArgs record (handles the _INPUT_NAMESPACES layout)."""
        res = self.proj.resolve_class(mod, cls_node_expr, func.body)
        if res is None:
            warn(f"cannot resolve {ast.unparse(cls_node_expr)}")
            return {}
        m, c = res
        fields: dict[str, FieldInfo] = {}
        ns = self.proj.find_def(m, "_INPUT_NAMESPACES")
        if ns and ns[0] == "expr" and isinstance(ns[2], (ast.List, ast.Tuple)):
            for e in ns[2].elts:
                r = self.proj.resolve_class(m, e)
                if r is None:
                    warn(f"cannot resolve namespace class {ast.unparse(e)}")
                    continue
                for f in own_fields(self.proj, r[0], r[1]):
                    fields[f.name] = f
        # the class's own annotated fields (and dataclass bases)
        for m2, c2 in reversed(class_mro(self.proj, m, c)):
            for f in own_fields(self.proj, m2, c2):
                fields[f.name] = f
        return fields

    def arg_meta(self, f: FieldInfo):
        """Return None (no CLI metadata) or a dict of Arg(...) keyword nodes."""
        ann = f.ann
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            ann = ast.parse(ann.value, mode="eval").body
        if not (isinstance(ann, ast.Subscript) and last_name(ann.value) in ("A", "Annotated")):
            return None
        sl = ann.slice
        elts = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
        for e in elts[1:]:
            node = e
            if isinstance(node, ast.Name):
                r = self.proj.resolve_expr(f.mod, node)
                if r and r[0] == "expr":
                    node = r[2]
            if isinstance(node, ast.Call) and last_name(node.func) == "Arg":
                return {k.arg: k.value for k in node.keywords if k.arg}
            if isinstance(node, ast.Call):
                continue  # NS(...), Derived(...), ...
            if isinstance(node, (ast.Constant, ast.JoinedStr, ast.BinOp)):
                if isinstance(node, ast.Constant) and not isinstance(node.value, str):
                    continue
                return {}
            warn(f"unknown Annotated metadata {ast.unparse(e)} for field {f.name} ({f.mod.path})")
            return {}
        return None

    def emit_dataclass(self, mod, func, cls_expr, only, condition):
        fields = self.record_fields(mod, cls_expr, func)
        for name, f in fields.items():
            if only is not None and name not in only:
                continue
            meta = self.arg_meta(f)
            if meta is None:
                continue
            nc = meta.get("no_cli")
            if isinstance(nc, ast.Constant) and nc.value is True:
                continue
            cli = const_str(meta["cli_name"]) if "cli_name" in meta else None
            names = [cli or "--" + name.replace("_", "-")]
            if "aliases" in meta:
                al = str_list(meta["aliases"])
                if al is None:
                    warn(f"non-literal aliases for {name}")
                else:
                    names += al
            boolopt = "action" in meta and last_name(meta["action"]) == "BooleanOptionalAction"
            self.src_files.add(f.mod.path)
            self.opts.add(names, f.mod.path, boolopt=boolopt, condition=condition)


def extract_sglang(proj: Project):
    opts = Options()
    interp = SglangInterpreter(proj, opts)
    mod = proj.load("sglang.srt.server_args")
    if mod is None:
        raise SystemExit("sglang/srt/server_args.py not found")
    proj.find_def(mod, "ServerArgs")
    cls = None
    for stmt in _flatten_stmts(mod.tree.body):
        if isinstance(stmt, ast.ClassDef) and stmt.name == "ServerArgs":
            cls = stmt
    if cls is None:
        raise SystemExit("class ServerArgs not found")
    meth = next(s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "add_cli_args")
    interp.run_function(mod, meth, cls_ctx=(mod, cls))
    opts.add(["-h", "--help"], "argparse (add_help=True)")
    files = sorted({p for s in opts.flags.values() for p in s if p.endswith(".py")} | interp.src_files)
    return opts, files


# ---------------------------------------------------------------------------
# Megatron-LM
# ---------------------------------------------------------------------------


class MegatronInterpreter(ArgInterpreter):
    def __init__(self, proj, opts):
        super().__init__(proj, opts, enable_disable=False)
        self.src_files: set[str] = set()

    def on_assign(self, mod, func, stmt, env, cls_ctx):
        tgt = stmt.targets[0]
        if isinstance(tgt, ast.Name):
            env[tgt.id] = ("ast", stmt.value)

    def is_factory(self, mod, func, node) -> bool:
        if last_name(node) == "ArgumentGroupFactory":
            return True
        res = self.proj.resolve_class(mod, node, func.body)
        if res:
            return any(c.name == "ArgumentGroupFactory" for _, c in class_mro(self.proj, *res))
        return False

    def on_call(self, mod, func, call, env, cls_ctx, condition):
        f = call.func
        if isinstance(f, (ast.Name, ast.Attribute)) and self.is_factory(mod, func, f) and call.args:
            exclude = []
            for k in call.keywords:
                if k.arg == "exclude":
                    v = k.value
                    if isinstance(v, ast.Name) and env.get(v.id, ("",))[0] == "ast":
                        v = env[v.id][1]
                    exclude = str_list(v)
                    if exclude is None:
                        warn(f"non-literal exclude list at {mod.path}:{call.lineno}")
                        exclude = []
            if len(call.args) > 1:
                exclude = str_list(call.args[1]) or exclude
            self.emit_factory(mod, func, call.args[0], set(exclude), condition)
            return
        if isinstance(f, ast.Name):
            res = self.proj.find_def(mod, f.id, func.body)
            if res and res[0] == "func" and res[1].path == mod.path:
                self.run_function(res[1], res[2], condition=condition)
                return
        super().on_call(mod, func, call, env, cls_ctx, condition)

    def emit_factory(self, mod, func, cls_expr, exclude, condition):
        res = self.proj.resolve_class(mod, cls_expr, func.body)
        if res is None:
            warn(f"cannot resolve ArgumentGroupFactory({ast.unparse(cls_expr)}) in {mod.path}")
            return
        fields = class_fields(self.proj, *res)
        for name, f in fields.items():
            if name in exclude or not f.init:
                continue
            self.src_files.add(f.mod.path)
            names = None
            boolopt = False
            meta = f.call_kwargs.get("metadata")
            ap = None
            if isinstance(meta, ast.Dict):
                for k, v in zip(meta.keys, meta.values, strict=False):
                    if const_str(k) == "argparse_meta":
                        ap = v
            elif meta is not None:
                r = meta
                if isinstance(meta, ast.Name):
                    rr = self.proj.resolve_expr(f.mod, meta)
                    r = rr[2] if rr and rr[0] == "expr" else None
                if isinstance(r, ast.Dict):
                    for k, v in zip(r.keys, r.values, strict=False):
                        if const_str(k) == "argparse_meta":
                            ap = v
                elif r is None:
                    warn(f"unresolved metadata for {name} in {f.mod.path}")
            if ap is not None and isinstance(ap, ast.Dict):
                for k, v in zip(ap.keys, ap.values, strict=False):
                    if const_str(k) == "arg_names":
                        names = str_list(v)
                        if names is None:
                            warn(f"non-literal arg_names for {name}")
                    if const_str(k) == "action":
                        boolopt = last_name(v) == "BooleanOptionalAction"
            elif ap is not None:
                warn(f"non-literal argparse_meta for {name} in {f.mod.path}")
            if names is None:
                members = union_members(self.proj, f.mod, f.ann)
                non_none = [m for m in members if m[0] != "none"]
                is_bool = len(non_none) == 1 and non_none[0][0] == "name" and non_none[0][1] == "bool"
                flag = "--" + name.replace("_", "-")
                if is_bool:
                    d = f.default
                    if isinstance(d, ast.Constant) and d.value is False:
                        names = [flag]
                    else:
                        if not isinstance(d, ast.Constant):
                            warn(f"bool field {name} has non-literal default {ast.unparse(d) if d else None}")
                        names = ["--no-" + name.replace("_", "-"), "--disable-" + name.replace("_", "-")]
                else:
                    names = [flag]
            self.opts.add(names, f.mod.path, boolopt=boolopt, condition=condition)


def extract_megatron(proj: Project):
    opts = Options()
    interp = MegatronInterpreter(proj, opts)
    mod = proj.load("megatron.training.arguments")
    if mod is None:
        raise SystemExit("megatron/training/arguments.py not found")
    res = proj.find_def(mod, "parse_args")
    interp.run_function(res[1], res[2])
    # extra_args_provider of pretrain_gpt.py
    pre = proj.load_path("pretrain_gpt.py", "pretrain_gpt")
    extra_files = []
    if pre is not None:
        extra_files.append(pre.path)
        for node in ast.walk(pre.tree):
            if isinstance(node, ast.Call):
                for k in node.keywords:
                    if k.arg != "extra_args_provider":
                        continue
                    cond = None
                    v = k.value
                    cands = [v]
                    if isinstance(v, ast.IfExp):
                        cond = f"only if {ast.unparse(v.test)} (pretrain_gpt.py)"
                        cands = [v.body, v.orelse]
                    for cnd in cands:
                        if isinstance(cnd, ast.Constant):
                            continue
                        r = proj.resolve_expr(pre, cnd)
                        if r and r[0] == "func":
                            interp.run_function(r[1], r[2], condition=cond)
                        else:
                            warn(f"cannot resolve extra_args_provider {ast.unparse(cnd)}")
    opts.add(["-h", "--help"], "argparse (add_help=True)")
    files = sorted(
        {p for s in opts.flags.values() for p in s if p.endswith(".py")} | interp.src_files | set(extra_files)
    )
    return opts, files


# ---------------------------------------------------------------------------
# LLaMA-Factory and transformers (HfArgumentParser: init fields)
# ---------------------------------------------------------------------------


def extract_llamafactory(proj: Project):
    mod = proj.load("llamafactory.hparams.parser")
    if mod is None:
        raise SystemExit("src/llamafactory/hparams/parser.py not found")

    def classes_of(listname):
        r = proj.find_def(mod, listname)
        if not r or r[0] != "expr" or not isinstance(r[2], (ast.List, ast.Tuple)):
            raise SystemExit(f"{listname} not found")
        out = []
        for e in r[2].elts:
            c = proj.resolve_class(mod, e)
            if c is None:
                warn(f"cannot resolve {ast.unparse(e)}")
                continue
            out.append(c)
        return out

    def fields_of(classes):
        names: dict[str, FieldInfo] = {}
        external_bases = set()
        for m, c in classes:
            for b in _external_bases(proj, m, c):
                external_bases.add(b)
            for name, f in class_fields(proj, m, c, only_pkg="llamafactory").items():
                if f.init:
                    names.setdefault(name, f)
        return names, external_bases

    train, ext = fields_of(classes_of("_TRAIN_ARGS"))
    opts = Options()
    for name, f in train.items():
        opts.add(["--" + name], f.mod.path)  # stored with -- prefix internally
    extra = {}
    try:
        mb, _ = fields_of(classes_of("_TRAIN_MBRIDGE_ARGS"))
        extra = {n: f for n, f in mb.items() if n not in train}
    except SystemExit as missing:  # versions before Megatron-Bridge support define no such arguments
        warn(f"no Megatron-Bridge arguments: {missing}")
    # every dataclass defined in the hparams files that feed _TRAIN_ARGS
    covered = {(f.mod.path, f.owner) for f in train.values()}
    files = sorted({f.mod.path for f in train.values()})
    return opts, files, ext, extra, covered


def _external_bases(proj, m, c):
    """Dotted names of bases that resolve outside the snapshot."""
    out = set()
    for mm, cc in class_mro(proj, m, c):
        for b in cc.bases:
            r = proj.resolve_expr(mm, b)
            if r and r[0] == "external":
                out.add(r[2])
            elif r and r[0] == "expr":
                # e.g. BaseTrainingArguments = Seq2SeqTrainingArguments (conditional)
                out.add(f"{dotted(b)} = {ast.unparse(r[2])}")
    return out


def extract_transformers(proj: Project):
    mod = proj.load("transformers.training_args_seq2seq")
    if mod is None:
        raise SystemExit("transformers/training_args_seq2seq.py not found")
    res = proj.resolve_class(mod, ast.Name("Seq2SeqTrainingArguments"))
    fields = class_fields(proj, *res)
    opts = Options()
    for name, f in fields.items():
        if f.init:
            opts.add(["--" + name], f.mod.path)
    files = sorted({f.mod.path for f in fields.values()})
    return opts, files


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def write_list(path: str, header: list[str], names: list[str]) -> None:
    names = sorted(set(names))
    with open(path, "w", encoding="utf-8") as f:
        for h in header:
            f.write("# " + h + "\n" if h else "#\n")
        for n in names:
            f.write(n + "\n")
    print(f"wrote {path}: {len(names)} names", file=sys.stderr)


def header_lines(tool: str, repo: str, meta: dict, files: list[str], extra: list[str]) -> list[str]:
    return [
        f"tool: {tool}",
        f"repository: {repo}",
        f"commit: {meta.get('commit', 'unknown')}",
        f"commit date: {meta.get('date', 'unknown')}",
        "source files: " + ", ".join(files),
        f"snapshot read: {meta.get('snapshot', '?')}"
        + (f" (version {meta['version']})" if meta.get("version") else ""),
        "generated by extract_tool_options.py (static ast parsing; nothing imported)",
        *extra,
    ]


CHECKS = {
    "vllm": [
        "--tensor-parallel-size",
        "--pipeline-parallel-size",
        "--data-parallel-size",
        "--enable-expert-parallel",
        "--max-model-len",
        "--max-num-seqs",
        "--gpu-memory-utilization",
        "--quantization",
        "--kv-cache-dtype",
        "--port",
        "--host",
        "--dtype",
        "--max-num-batched-tokens",
        "--served-model-name",
    ],
    "sglang": [
        "--model-path",
        "--tp-size",
        "--dp-size",
        "--ep-size",
        "--enable-dp-attention",
        "--context-length",
        "--max-running-requests",
        "--mem-fraction-static",
        "--quantization",
        "--kv-cache-dtype",
        "--port",
        "--host",
        "--pp-size",
    ],
    "megatron": [
        "--tensor-model-parallel-size",
        "--pipeline-model-parallel-size",
        "--num-layers-per-virtual-pipeline-stage",
        "--sequence-parallel",
        "--expert-model-parallel-size",
        "--context-parallel-size",
        "--micro-batch-size",
        "--global-batch-size",
        "--seq-length",
        "--recompute-granularity",
        "--recompute-method",
        "--recompute-num-layers",
        "--use-distributed-optimizer",
        "--bf16",
        "--fp16",
        "--fp8-format",
        "--num-experts",
        "--moe-router-topk",
        "--moe-ffn-hidden-size",
        "--num-layers",
        "--hidden-size",
        "--ffn-hidden-size",
        "--num-attention-heads",
        "--group-query-attention",
        "--num-query-groups",
        "--swiglu",
        "--normalization",
        "--position-embedding-type",
        "--untie-embeddings-and-output-weights",
        "--disable-bias-linear",
        "--train-iters",
        "--save-interval",
        "--data-path",
        "--tokenizer-type",
        "--tokenizer-model",
        "--save",
        "--load",
        "--max-position-embeddings",
        "--kv-channels",
        "--use-flash-attn",
        "--attention-backend",
        "--moe-shared-expert-intermediate-size",
        "--moe-layer-freq",
        "--overlap-grad-reduce",
        "--overlap-param-gather",
        "--lr",
        "--log-interval",
    ],
    "llamafactory": [
        "model_name_or_path",
        "stage",
        "do_train",
        "finetuning_type",
        "lora_rank",
        "lora_target",
        "quantization_bit",
        "quantization_method",
        "dataset",
        "template",
        "cutoff_len",
        "output_dir",
        "per_device_train_batch_size",
        "gradient_accumulation_steps",
        "learning_rate",
        "num_train_epochs",
        "bf16",
        "fp16",
        "deepspeed",
        "disable_gradient_checkpointing",
        "lora_alpha",
        "logging_steps",
        "save_steps",
        "plot_loss",
        "overwrite_output_dir",
    ],
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tool", choices=["vllm", "sglang", "megatron", "llamafactory", "transformers"])
    ap.add_argument("snapshot", help="bare git dir, source dir, or wheel/zip")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--repo")
    ap.add_argument("--commit")
    ap.add_argument("--date")
    ap.add_argument("--note", action="append", default=[], help="extra header comment line")
    ap.add_argument("--hf-list", help="hf_training_args.txt, for the llamafactory check")
    args = ap.parse_args(argv)

    src = open_source(args.snapshot, args.rev)
    meta = src.meta()
    if args.commit:
        meta["commit"] = args.commit
    if args.date:
        meta["date"] = args.date

    if args.tool == "vllm":
        proj = Project(src, [""])
        opts, files = extract_vllm(proj)
        repo = args.repo or "vllm-project/vllm"
        longs = sorted(opts.flags)
        missing = [c for c in CHECKS["vllm"] if c not in opts.flags]
        dep = sorted(opts.deprecated)
        hdr = header_lines(
            "vllm serve (every long option string the serve parser registers)",
            repo,
            meta,
            files,
            [
                *args.note,
                "includes --no-X for BooleanOptionalAction flags and --disable-X/--enable-X inverses added by",
                "vLLM's EnableDisableAction; deprecated flags are included (still accepted).",
                "FlexibleArgumentParser also accepts '_' for '-' in names and --json-arg.key=value sub-keys.",
                "conditionally registered: "
                + (", ".join(f"{k} [{v}]" for k, v in sorted(opts.conditional.items())) or "none"),
                "deprecated (registered with deprecated=True): " + (", ".join(dep) or "none"),
                "checked names NOT found: " + (", ".join(missing) or "none"),
            ],
        )
        write_list(os.path.join(args.out, "vllm_serve.txt"), hdr, longs)
        alias_lines = sorted(f"{a} {b}" for a, b in opts.aliases.items() if not a.startswith("--"))
        write_list(
            os.path.join(args.out, "vllm_serve_aliases.txt"),
            header_lines("vllm serve short option aliases (format: ALIAS LONG-FLAG)", repo, meta, files, [*args.note]),
            alias_lines,
        )
    elif args.tool == "sglang":
        proj = Project(src, ["", "python/"])
        opts, files = extract_sglang(proj)
        repo = args.repo or "sgl-project/sglang"
        missing = [c for c in CHECKS["sglang"] if c not in opts.flags]
        hdr = header_lines(
            "python -m sglang.launch_server / sglang serve (every long option string)",
            repo,
            meta,
            files,
            [
                *args.note,
                "every spelling of an option (cli_name and aliases) is listed; "
                "--no-X is added for BooleanOptionalAction.",
                "conditionally registered: "
                + (", ".join(f"{k} [{v}]" for k, v in sorted(opts.conditional.items())) or "none"),
                "checked names NOT found: " + (", ".join(missing) or "none"),
            ],
        )
        write_list(os.path.join(args.out, "sglang_server.txt"), hdr, list(opts.flags))
        alias_lines = sorted(f"{a} {b}" for a, b in opts.aliases.items())
        write_list(
            os.path.join(args.out, "sglang_server_aliases.txt"),
            header_lines(
                "sglang server alternative spellings (format: ALIAS PRIMARY-FLAG)", repo, meta, files, [*args.note]
            ),
            alias_lines,
        )
    elif args.tool == "megatron":
        proj = Project(src, [""])
        opts, files = extract_megatron(proj)
        repo = args.repo or "NVIDIA/Megatron-LM"
        missing = [c for c in CHECKS["megatron"] if c not in opts.flags]
        hdr = header_lines(
            "Megatron-LM pretrain_gpt.py (every option string)",
            repo,
            meta,
            files,
            [
                *args.note,
                "parser is argparse.ArgumentParser(allow_abbrev=False): only these exact spellings are accepted.",
                "conditionally registered: "
                + (", ".join(f"{k} [{v}]" for k, v in sorted(opts.conditional.items())) or "none"),
                "checked names NOT found: " + (", ".join(missing) or "none"),
            ],
        )
        write_list(os.path.join(args.out, "megatron_pretrain.txt"), hdr, list(opts.flags))
    elif args.tool == "llamafactory":
        proj = Project(src, ["src/", ""])
        opts, files, ext, extra, covered = extract_llamafactory(proj)
        repo = args.repo or "hiyouga/LLaMA-Factory"
        names = [n[2:] for n in opts.flags]
        hf = set()
        if args.hf_list and os.path.exists(args.hf_list):
            with open(args.hf_list) as listed:
                hf = {line.strip() for line in listed if line.strip() and not line.startswith("#")}
        missing = [c for c in CHECKS["llamafactory"] if c not in names and c not in hf]
        hdr = header_lines(
            "llamafactory-cli train <yaml>: accepted top-level keys defined by LLaMA-Factory itself",
            repo,
            meta,
            files,
            [
                *args.note,
                "keys = init fields of the dataclasses in _TRAIN_ARGS (hparams/parser.py) and their dataclass bases",
                "inside src/llamafactory; the Hugging Face base class fields are in hf_training_args.txt.",
                "external base classes (not listed here): " + (", ".join(sorted(ext)) or "none"),
                "only with USE_MEGATRON_BRIDGE=1 (MegatronBridgeArguments; not listed): "
                + (", ".join(sorted(extra)) or "none"),
                "checked names NOT accepted by this list or hf_training_args.txt: "
                + (", ".join(missing) or "none")
                + ("" if hf else " (hf list not given)"),
            ],
        )
        write_list(os.path.join(args.out, "llamafactory_train.txt"), hdr, names)
    elif args.tool == "transformers":
        proj = Project(src, ["src/", ""])
        opts, files = extract_transformers(proj)
        repo = args.repo or "huggingface/transformers"
        names = [n[2:] for n in opts.flags]
        hdr = header_lines(
            "transformers Seq2SeqTrainingArguments (+ TrainingArguments): init field names",
            repo,
            meta,
            files,
            [
                *args.note,
                "LLaMA-Factory passes these through (its TrainingArguments subclasses Seq2SeqTrainingArguments).",
            ],
        )
        write_list(os.path.join(args.out, "hf_training_args.txt"), hdr, names)
    if WARNINGS:
        print(f"{len(WARNINGS)} warning(s)", file=sys.stderr)


if __name__ == "__main__":
    main()
