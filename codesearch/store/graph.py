"""The call and import graph: resolved into catalog rows, loaded into NetworkX for search.

Call resolution, for a call of NAME from a chunk in file F: definitions named NAME in F first
(those in the caller's own class before others); else in files F imports, or whose import
statements in F mention NAME; else the unique definition of that name in the repository; else
every candidate (at most MAX_CANDIDATES) with a weight shared among them.
"""

from __future__ import annotations

import posixpath
import re
import sqlite3
import threading
from collections import defaultdict
from dataclasses import dataclass

import networkx as nx

from ..vocabulary import NON_DEFINITION_KINDS
from .catalog import Catalog, select_in

MAX_CANDIDATES = 8
_MODULE_SPLIT = re.compile(r"[./\\:]+")


@dataclass(frozen=True)
class Symbol:
    id: str
    path: str
    qualified_name: str


def _symbols(db: sqlite3.Connection, names: set[str] | None = None) -> dict[str, list[Symbol]]:
    sql = ("SELECT id, path, name, qualified_name FROM chunks WHERE part = 1 AND kind NOT IN "
           f"({','.join('?' * len(NON_DEFINITION_KINDS))})")
    table: dict[str, list[Symbol]] = defaultdict(list)
    for row in db.execute(sql, sorted(NON_DEFINITION_KINDS)):
        if names is None or row[2] in names:
            table[row[2]].append(Symbol(row[0], row[1], row[3]))
    for symbols in table.values():  # in a fixed order, not the order files were written in: the
        symbols.sort(key=lambda s: (s.path, s.qualified_name, s.id))  # same tree gives the same edges
    return table


def _module_keys(module: str) -> list[str]:
    """Path suffixes an import might refer to: 'a.b.c' -> 'a/b/c', './x' -> 'x', '<x.h>' -> 'x'."""
    module = module.strip().strip("\"'<>`;")
    module = re.sub(r"\.(h|hpp|js|ts|mjs|cjs|py|rb|php|zig|lua|sh|jsx|tsx)$", "", module)
    parts = [p for p in _MODULE_SPLIT.split(module) if p and p not in ("crate", "self", "super", "@")]
    keys = []
    for i in range(len(parts)):
        keys.append("/".join(parts[i:]))
    return keys


class _FileIndex:
    """Maps path suffixes without extension ('flask/app', 'app') to file paths."""

    def __init__(self, paths: list[str]):
        self.by_suffix: dict[str, list[str]] = defaultdict(list)
        for path in paths:
            stem = posixpath.splitext(path)[0]
            if posixpath.basename(stem) in ("__init__", "index", "mod", "lib"):
                stem_dir = posixpath.dirname(stem)
                if stem_dir:
                    self._add(stem_dir, path)
            self._add(stem, path)

    def _add(self, stem: str, path: str) -> None:
        parts = stem.split("/")
        for i in range(len(parts)):
            self.by_suffix["/".join(parts[i:])].append(path)

    def resolve(self, module: str, importer: str) -> list[str]:
        if module.startswith("."):  # relative import: try next to the importer first
            local = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module.lstrip(".") or "."))
            found = self.by_suffix.get(posixpath.splitext(local)[0])
            if found:
                return found[:1]
        for key in _module_keys(module):
            found = self.by_suffix.get(key)
            if found:
                return found if len(found) <= 2 else []
        return []


def rebuild_import_edges(db: sqlite3.Connection) -> None:
    """Imports change meaning when files come and go: re-resolve all of them (cheap)."""
    db.execute("DELETE FROM edges WHERE kind = 'imports'")
    file_ids = {r[0]: r[1] for r in db.execute("SELECT path, id FROM chunks WHERE kind = 'file'")}
    index = _FileIndex(list(file_ids))
    rows = []
    for path, module, line in db.execute("SELECT path, module, line FROM imports"):
        src = file_ids.get(path)
        if not src or not module:
            continue
        for target in index.resolve(module, path):
            if target != path and target in file_ids:
                rows.append((src, file_ids[target], line))
    db.executemany("INSERT INTO edges(src, dst, kind, weight, line) VALUES (?, ?, 'imports', 1, ?)", rows)


def resolve_call_edges(db: sqlite3.Connection, changed_paths: set[str], dirty_names: set[str],
                       everything: bool = False) -> None:
    """Re-resolve every call site of the affected callers: those in changed files and those that
    call a name the changed files define or defined."""
    if everything:
        db.execute("DELETE FROM edges WHERE kind = 'calls'")
        call_rows = db.execute("SELECT caller_id, path, name, line FROM calls").fetchall()
    else:
        affected = {r[0] for r in select_in(db, "SELECT caller_id FROM calls WHERE path IN ({})",
                                             sorted(changed_paths))}
        affected |= {r[0] for r in select_in(db, "SELECT caller_id FROM calls WHERE name IN ({})",
                                              sorted(dirty_names))}
        if not affected:
            return
        callers = sorted(affected)
        select_in(db, "DELETE FROM edges WHERE kind = 'calls' AND src IN ({})", callers)
        call_rows = select_in(db, "SELECT caller_id, path, name, line FROM calls WHERE caller_id IN ({})",
                               callers)
    names = {r[2] for r in call_rows}
    symbols = _symbols(db, names)
    paths = sorted({r[1] for r in call_rows})
    import_texts: dict[str, list[str]] = defaultdict(list)
    for path, text in select_in(db, "SELECT path, text FROM imports WHERE path IN ({})", paths):
        import_texts[path].append(text)
    imported_files: dict[str, set[str]] = defaultdict(set)
    for src_path, dst_path in db.execute(
            "SELECT a.path, b.path FROM edges e JOIN chunks a ON a.id = e.src JOIN chunks b ON b.id = e.dst "
            "WHERE e.kind = 'imports'"):
        imported_files[src_path].add(dst_path)
    caller_names = dict(select_in(db, "SELECT id, qualified_name FROM chunks WHERE id IN ({})",
                                   sorted({r[0] for r in call_rows})))
    choices: dict[tuple[str, str, str], tuple[list[Symbol], float]] = {}  # by (path, scope, name)
    import_words: dict[str, frozenset[str]] = {}
    edges: dict[tuple[str, str], tuple[float, int]] = {}
    for caller, path, name, line in call_rows:
        candidates = symbols.get(name)
        if not candidates:
            continue
        scope = _scope_of(caller_names.get(caller, ""))
        key = (path, scope, name)
        choice = choices.get(key)
        if choice is None:
            if path not in import_words:
                import_words[path] = frozenset(_IMPORT_WORD.findall("\n".join(import_texts.get(path, ()))))
            choice = choices[key] = _choose(candidates, scope, path, imported_files.get(path, set()),
                                            import_texts.get(path, []), import_words[path], name)
        chosen, weight = choice
        for symbol in chosen:
            if symbol.id != caller and (caller, symbol.id) not in edges:
                edges[(caller, symbol.id)] = (weight, line)
    db.executemany("INSERT INTO edges(src, dst, kind, weight, line) VALUES (?, ?, 'calls', ?, ?)",
                   [(s, d, w, line) for (s, d), (w, line) in edges.items()])


_IMPORT_WORD = re.compile(r"\w+")


def _scope_of(caller_qualified: str) -> str:
    """The enclosing scope of a caller (`Outer.method` -> `Outer`): calls prefer definitions there."""
    return caller_qualified.rsplit(".", 1)[0] if "." in caller_qualified else ""


def _mentions(name: str, import_texts: list[str], import_words: frozenset[str]) -> bool:
    """Whether an import statement names `name` as a whole word."""
    if _IMPORT_WORD.fullmatch(name):
        return name in import_words
    return any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", t) for t in import_texts)


def _choose(candidates: list[Symbol], scope: str, path: str, imported: set[str], import_texts: list[str],
            import_words: frozenset[str], name: str) -> tuple[list[Symbol], float]:
    same_file = [s for s in candidates if s.path == path]
    if same_file:
        same_scope = [s for s in same_file if scope and s.qualified_name.startswith(scope + ".")]
        pick = same_scope or same_file
        return pick, 1.0 / len(pick)
    from_imports = [s for s in candidates if s.path in imported]
    if not from_imports and _mentions(name, import_texts, import_words):
        from_imports = [s for s in candidates if any(
            posixpath.splitext(posixpath.basename(s.path))[0] in t for t in import_texts)]
    if from_imports:
        return from_imports, 1.0 / len(from_imports)
    if len(candidates) == 1:
        return candidates, 1.0
    return candidates[:MAX_CANDIDATES], 0.5 / min(len(candidates), MAX_CANDIDATES)


def load_graph(catalog: Catalog) -> nx.DiGraph:
    """All edges as a weighted directed graph over chunk ids (node attribute: kind)."""
    graph = nx.DiGraph()
    for src, dst, kind, weight in catalog.db.execute("SELECT src, dst, kind, weight FROM edges"):
        if graph.has_edge(src, dst):
            graph[src][dst]["weight"] = max(graph[src][dst]["weight"], weight)
        else:
            graph.add_edge(src, dst, kind=kind, weight=weight)
    return graph


class GraphCache:
    """The catalog's graph in NetworkX, shared by every search thread: loaded on first use and
    again after each reindex (when the catalog's `last_index_time` changes)."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self._graph: nx.DiGraph | None = None
        self._stamp: str | None = None
        self._lock = threading.Lock()

    def get(self) -> nx.DiGraph:
        stamp = self.catalog.get_meta("last_index_time")
        with self._lock:  # one thread loads; the others wait for it rather than load it again
            if self._graph is None or stamp != self._stamp:
                self._graph = load_graph(self.catalog)
                self._stamp = stamp
            return self._graph
