"""The type-aware tools the call-graph benchmark takes as truth: where the name called at a call
site is defined, according to jedi (Python), gopls (Go) or scip-typescript (TypeScript and
JavaScript); jedi is imported only where its language is asked for. Each
answers a list of call sites at once with one `Answer` per site it could place.

An answer's targets are (path relative to the indexed root, 1-based line) inside the root, plus
whether the tool placed the call in code outside it (the standard library, a dependency).
A site the tool could not follow gets no answer: the benchmark counts it as unknown.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from callgraph_links import CallSite

from codesearch.ingest.scip import parse_index


class OracleMissing(RuntimeError):
    """The tool a language needs is not installed; the message says how to install it."""


@dataclass(frozen=True)
class Answer:
    targets: frozenset[tuple[str, int]]  # (path, line) of definitions inside the root
    outside: bool  # the tool also (or only) placed the call outside the root
    local: bool = False  # a local symbol: a definition of the site's own name, else a local value (a parameter)


def name_column(line_text: str, name: str) -> int | None:
    """0-based column of the called name on its line: the first occurrence followed by `(`, else
    by another call's opening (a type argument list, a template string), else the first whole-word
    one (`x: f<T> = f(...)` calls the second `f`)."""
    word = re.escape(name)
    for pattern in (rf"(?<![\w$]){word}\s*\(", rf"(?<![\w$]){word}\s*(?:<|\[|`)", rf"(?<![\w$]){word}(?![\w$])"):
        m = re.search(pattern, line_text)
        if m:
            return m.start()
    return None


def inside(root: Path, path: Path | str | None) -> str | None:
    """`path` relative to `root` when it lies inside it, else None."""
    if path is None:
        return None
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return None


def by_file(sites: Iterable[CallSite]) -> dict[str, list[CallSite]]:
    out: dict[str, list[CallSite]] = {}
    for site in sorted(sites):
        out.setdefault(site.path, []).append(site)
    return out


# --- Python: jedi -------------------------------------------------------------------------------
_VALUE_KINDS = frozenset({"statement", "param"})  # a name bound to a value: follow the value


def jedi_answers(root: Path, sites: list[CallSite]) -> dict[CallSite, Answer]:
    """jedi's `goto(follow_imports=True)` at each site; a name bound to a value (`f = g`, a
    parameter) is followed with `infer` to the function or class it holds."""
    try:
        import jedi
    except ImportError as exc:
        raise OracleMissing("Python needs jedi: .venv/bin/pip install -e .[oracle] "
                            "(or pip install 'jedi>=0.20,<0.21')") from exc
    root = root.resolve()
    # the root and its parent before the environment's paths: a package indexed on its own
    # (src/click) imports itself by name, and must not find the copy installed beside this script
    sys_path = [str(root.parent), str(root), *(p for p in jedi.get_default_environment().get_sys_path() if p)]
    project = jedi.Project(root, sys_path=sys_path, smart_sys_path=False)
    out: dict[CallSite, Answer] = {}
    for path, file_sites in by_file(sites).items():
        source = (root / path).read_text(encoding="utf-8", errors="replace")
        lines = source.splitlines()
        script = jedi.Script(source, path=root / path, project=project)
        for site in file_sites:
            column = name_column(lines[site.line - 1], site.name) if site.line <= len(lines) else None
            if column is None:
                continue
            try:
                names = script.goto(site.line, column, follow_imports=True)
                if names and all(n.type in _VALUE_KINDS and inside(root, n.module_path) for n in names):
                    names = [n for n in script.infer(site.line, column) if n.type in ("function", "class")]
            except Exception:  # jedi fails on some code; that site is unknown  # noqa: BLE001
                continue
            answer = _jedi_answer(root, names)
            if answer is not None:
                out[site] = answer
    return out


def _jedi_answer(root: Path, names: list) -> Answer | None:
    targets, outside = set(), False
    for n in names:
        where = None if n.in_builtin_module() else inside(root, n.module_path)
        if where is None:
            outside = True
        elif n.line is not None:
            targets.add((where, n.line))
    return Answer(frozenset(targets), outside) if targets or outside else None


# --- Go: gopls, spoken to as a language server ----------------------------------------------------
def gopls_answers(root: Path, sites: list[CallSite]) -> dict[CallSite, Answer]:
    """gopls' textDocument/definition at each site. Dependencies cannot be downloaded here (no
    module proxy), and a module whose requirements are missing loads no package at all, so gopls
    reads a copy of the root whose go.mod keeps its module and go lines alone: calls into the
    dependencies stay unanswered (unknown), the standard library is answered from GOROOT."""
    from lsp_client import LanguageServer, file_uri, path_of_uri

    if shutil.which("gopls") is None or shutil.which("go") is None:
        raise OracleMissing("Go needs gopls and go: apt-get install -y gopls golang")
    root = root.resolve()
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"}
    out: dict[CallSite, Answer] = {}
    with tempfile.TemporaryDirectory(prefix="gopls-") as scratch:
        copy = Path(scratch) / root.name
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".git"), symlinks=True)
        _without_requirements(copy)
        with LanguageServer(["gopls", "serve"], copy, env) as server:
            for path, file_sites in by_file(sites).items():
                text = (copy / path).read_text(encoding="utf-8", errors="replace")
                lines = text.splitlines()
                uri = file_uri(copy / path)
                server.open(uri, "go", text)
                for site in file_sites:
                    column = name_column(lines[site.line - 1], site.name) if site.line <= len(lines) else None
                    if column is None:
                        continue
                    character = len(lines[site.line - 1][:column].encode("utf-16-le")) // 2
                    answer = _lsp_answer(copy.resolve(), server.definition(uri, site.line - 1, character),
                                         path_of_uri)
                    if answer is not None:
                        out[site] = answer
                server.close(uri)
    return out


def _without_requirements(root: Path) -> None:
    """go.mod cut to its module and go lines, go.sum gone: packages load without the dependencies."""
    mod = root / "go.mod"
    if mod.exists():
        kept = [line for line in mod.read_text().splitlines() if line.startswith(("module ", "go "))]
        mod.write_text("\n".join(kept) + "\n")
        (root / "go.sum").unlink(missing_ok=True)


def _lsp_answer(root: Path, locations: list[dict], path_of_uri: Callable[[str], Path | None]) -> Answer | None:
    if not locations:
        return None
    targets, outside = set(), False
    for location in locations:
        where = inside(root, path_of_uri(location["uri"]))
        if where is None:
            outside = True
        else:
            targets.add((where, location["range"]["start"]["line"] + 1))
    # gopls places a name where it is declared: a definition of that name on that line, else a
    # parameter or a local variable (on its function's line, but not that function)
    return Answer(frozenset(targets), outside, local=True)


# --- TypeScript and JavaScript: scip-typescript ------------------------------------------------
SCIP_DEFAULT = Path("/tmp/scip/node_modules/.bin/scip-typescript")
SCIP_TIMEOUT_S = 1800
_PARAMETER = re.compile(r"\)\.?\([^()]+\)$")  # a SCIP parameter descriptor after its method's: `f().(x)`


def scip_answers(root: Path, sites: list[CallSite]) -> dict[CallSite, Answer]:
    """The symbol scip-typescript records at each site, placed at its definition in the index.
    A symbol the index holds no definition of lies outside the project (a library's types);
    a site with no symbol (an import that did not resolve: dependencies not installed), with a
    local symbol its document does not define (one the tool could not name), or with a symbol of
    the project's own package that no indexed document defines (a file its tsconfig.json leaves
    out of the index), is unknown.
    The project is the nearest folder at or above the root with a tsconfig.json."""
    root = root.resolve()
    with tempfile.TemporaryDirectory(prefix="scip-") as scratch:
        output = Path(scratch) / "index.scip"
        project = run_scip_typescript(root, output)
        docs = parse_index(output.read_bytes()).documents
    defined: dict[tuple[str, str], set[tuple[str | None, int]]] = {}  # symbol key -> (root-relative path, line)
    for doc_path, occurrences in docs.items():
        for o in occurrences:
            if o.definition:
                defined.setdefault(_symbol_key(doc_path, o.symbol), set()).add((inside(root, project / doc_path),
                                                                               o.line + 1))
    own = {_package(symbol) for _, symbol in defined if not symbol.startswith("local ")}
    out: dict[CallSite, Answer] = {}
    for path, file_sites in by_file(sites).items():
        doc_path = (root / path).relative_to(project).as_posix()
        lines = (root / path).read_text(encoding="utf-8", errors="replace").splitlines()
        on_line: dict[int, list] = {}
        for o in docs.get(doc_path, ()):
            on_line.setdefault(o.line, []).append(o)
        for site in file_sites:
            column = name_column(lines[site.line - 1], site.name) if site.line <= len(lines) else None
            if column is None:
                continue
            character = len(lines[site.line - 1][:column].encode("utf-16-le")) // 2
            # every symbol there: a nested function's overloads are one symbol each, all at the call
            hits = {o.symbol for o in on_line.get(site.line - 1, ()) if o.start <= character < o.end and o.symbol}
            if not hits:
                continue
            places = set().union(*(defined.get(_symbol_key(doc_path, symbol), set()) for symbol in hits))
            if not places and all(s.startswith("local ") or _package(s) in own for s in hits):
                continue  # a symbol the tool could not name, or one of a file it did not index
            targets = frozenset((p, line) for p, line in places if p is not None)
            out[site] = Answer(targets, outside=not targets, local=any(map(_value_symbol, hits)))
    return out


def run_scip_typescript(root: Path, output: Path) -> Path:
    """scip-typescript's index of the project `root` is part of, written to `output`; the
    project: the nearest folder at or above the root with a tsconfig.json (else the root, its
    configuration inferred)."""
    binary = Path(os.environ.get("SCIP_TYPESCRIPT") or shutil.which("scip-typescript") or SCIP_DEFAULT)
    if not binary.exists():
        raise OracleMissing("TypeScript needs scip-typescript: npm install --prefix /tmp/scip "
                            "@sourcegraph/scip-typescript@0.4.0 (or set SCIP_TYPESCRIPT)")
    project = next((p for p in (root, *root.parents) if (p / "tsconfig.json").exists()), None)
    command = [str(binary), "index", "--output", str(output)]
    inferred = None
    if project is None:
        project, inferred = root, root / "tsconfig.json"
        command.append("--infer-tsconfig")
    try:
        subprocess.run(command, cwd=project, check=True, capture_output=True, timeout=SCIP_TIMEOUT_S)
    finally:
        if inferred is not None:  # the tool writes the configuration it inferred there: not left in the checkout
            inferred.unlink(missing_ok=True)
    return project


def _value_symbol(symbol: str) -> bool:
    """Whether a symbol names a value, no definition: a local one ("local 3"), or a function's
    parameter (`sendfile().(callback)`), which the tool places on its function's line."""
    return symbol.startswith("local ") or bool(_PARAMETER.search(symbol))


def _package(symbol: str) -> str:
    """The package a global symbol belongs to (`scip-typescript npm immer 10.0.3`)."""
    return " ".join(symbol.split(" ", 4)[:4])


def _symbol_key(doc_path: str, symbol: str) -> tuple[str, str]:
    """A local symbol ("local 3") means something only inside its document."""
    return (doc_path if symbol.startswith("local ") else "", symbol)
