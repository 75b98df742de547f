"""The type-aware tools the call-graph benchmark takes as truth: where the name called at a call
site is defined, according to jedi (Python), gopls (Go) or scip-typescript (TypeScript and
JavaScript). Each answers a list of call sites at once with one `Answer` per site it could place.

An answer's targets are (path relative to the indexed root, 1-based line) inside the root, plus
whether the tool placed the call in code outside it (the standard library, a dependency).
A site the tool could not follow gets no answer: the benchmark counts it as unknown.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from callgraph_links import CallSite


class OracleMissing(RuntimeError):
    """The tool a language needs is not installed; the message says how to install it."""


@dataclass(frozen=True)
class Answer:
    targets: frozenset[tuple[str, int]]  # (path, line) of definitions inside the root
    outside: bool  # the tool also (or only) placed the call outside the root


def name_column(line_text: str, name: str) -> int | None:
    """0-based column of the called name on its line: the first occurrence followed by a call's
    opening (`(`, a type argument list, a template string), else the first whole-word one."""
    word = re.escape(name)
    for pattern in (rf"(?<![\w$]){word}\s*(?:\(|<|\[|`)", rf"(?<![\w$]){word}(?![\w$])"):
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
    # the root's parent first: a package indexed on its own (src/flask) imports itself by name
    project = jedi.Project(root, added_sys_path=[str(root.parent), str(root)], smart_sys_path=True)
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
    """gopls' textDocument/definition at each site. Modules that cannot be downloaded leave the
    calls into them unanswered (unknown); the standard library is answered from GOROOT."""
    from lsp_client import LanguageServer, file_uri, path_of_uri

    if shutil.which("gopls") is None or shutil.which("go") is None:
        raise OracleMissing("Go needs gopls and go: apt-get install -y gopls golang")
    root = root.resolve()
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"}
    out: dict[CallSite, Answer] = {}
    with LanguageServer(["gopls", "serve"], root, env) as server:
        for path, file_sites in by_file(sites).items():
            text = (root / path).read_text(encoding="utf-8", errors="replace")
            lines = text.splitlines()
            uri = file_uri(root / path)
            server.open(uri, "go", text)
            for site in file_sites:
                column = name_column(lines[site.line - 1], site.name) if site.line <= len(lines) else None
                if column is None:
                    continue
                line_text = lines[site.line - 1]
                character = len(line_text[:column].encode("utf-16-le")) // 2
                locations = server.definition(uri, site.line - 1, character)
                if not locations:
                    continue
                targets, outside = set(), False
                for location in locations:
                    where = inside(root, path_of_uri(location["uri"]))
                    if where is None:
                        outside = True
                    else:
                        targets.add((where, location["range"]["start"]["line"] + 1))
                out[site] = Answer(frozenset(targets), outside)
            server.close(uri)
    return out
