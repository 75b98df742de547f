"""Precise call edges from a SCIP index: the name-based edges and references of the files the index
covers replaced by the ones a type-aware indexer found.

A file is covered when the index has a document for it and the file has not changed since the
index was made (its mtime is not later); a changed file keeps codesearch's own resolution. In a
covered file, each occurrence of a symbol that is not its definition becomes an edge, marked
`scip`, from the chunk it stands in to the chunk that holds the symbol's definition: a call where
the parser recorded a call of that name on that line, a reference otherwise (recorded as a call
site with `ref` = 2, so that relations list it and a later run can take it back). A symbol the
index defines in no document (the standard library, a dependency) links to nothing; so does one
defined where no chunk of that name stands (a local variable, a field).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from ..ingest.scip import (
    METHOD,
    NAMESPACE,
    PARAMETER,
    TYPE_PARAMETER,
    Descriptor,
    ScipIndex,
    descriptors,
    symbol_key,
)
from ..vocabulary import NON_DEFINITION_KINDS
from .files import name_ids
from .schema import BY_SCIP, CALLS
from .sql import select_in
from .sqlite import sqlite3

SCIP_REFERENCE = 2  # calls.ref of a use that only the SCIP index recorded
# descriptors no chunk stands for: a file or folder (a namespace), a parameter
_NO_CHUNK = frozenset({NAMESPACE, PARAMETER, TYPE_PARAMETER})
CONSTRUCTORS = frozenset({"constructor", "__init__", "new", "init"})  # and `<constructor>`, `<init>`


@dataclass
class ScipCoverage:
    """What an application of a SCIP index did: the files it covered, those it left to
    codesearch's resolution because they changed after it was made."""

    files: int = 0
    stale: int = 0
    covered: tuple[str, ...] = ()  # the files whose edges are the SCIP index's


@dataclass(frozen=True)
class _Chunk:
    rid: int
    kind: str
    name: str
    qualified_name: str
    start_line: int
    end_line: int
    part: int
    name_line: int | None
    name_column: int | None
    parent: int | None


class _Files:
    """The chunks of the files an application reads, by path: where a use stands (its caller)
    and where a definition stands (its target)."""

    def __init__(self, db: sqlite3.Connection, paths: list[str]):
        self.fid: dict[str, int] = {
            path: fid for fid, path in select_in(db, "SELECT fid, path FROM files WHERE skip_reason IS NULL "
                                                       "AND path IN ({})", paths)}
        self.chunks: dict[str, list[_Chunk]] = defaultdict(list)
        self._callers: dict[tuple[str, int], int | None] = {}
        self.named: dict[tuple[str, str], list[_Chunk]] = defaultdict(list)  # a file's definitions of a name
        path_of = {fid: path for path, fid in self.fid.items()}
        for fid, *row in select_in(db, "SELECT fid, rid, kind, name, COALESCE(qualified_name, name), start_line, "
                                       "end_line, part, name_line, name_column, parent FROM chunks WHERE fid IN ({})",
                                   sorted(path_of)):
            chunk = _Chunk(*row)
            self.chunks[path_of[fid]].append(chunk)
            if chunk.part == 1 and chunk.kind not in NON_DEFINITION_KINDS:
                self.named[(path_of[fid], chunk.name)].append(chunk)

    def caller_at(self, path: str, line: int) -> int | None:
        """The chunk a use on this 1-based line belongs to, as the parser attributes calls: the
        innermost definition around it (its first part), else the file. Worked out once a line:
        a line holds many uses."""
        key = (path, line)
        if key not in self._callers:
            self._callers[key] = self._caller_at(path, line)
        return self._callers[key]

    def _caller_at(self, path: str, line: int) -> int | None:
        chunks = self.chunks.get(path, [])
        around = [c for c in chunks if c.kind not in NON_DEFINITION_KINDS and c.start_line <= line <= c.end_line]
        if around:
            inner = min(around, key=lambda c: (c.end_line - c.start_line, -c.start_line))
            if inner.part == 1:
                return inner.rid
            first = [c for c in chunks if c.part == 1 and c.parent == inner.parent and c.name == inner.name
                     and c.qualified_name == inner.qualified_name]
            return first[0].rid if first else inner.rid
        files = [c.rid for c in chunks if c.kind == "file"]
        return files[0] if files else None

    def definition(self, path: str, line: int, name: str, column: int | None = None) -> int | None:
        """The chunk of the definition of `name` whose name stands on this 1-based line of
        `path` (the file unchanged since the SCIP index was made), and at this 1-based column
        where one is given (and the chunk knows its own)."""
        found = [c for c in self.named.get((path, name), ()) if c.name_line == line
                 and (column is None or c.name_column in (None, column))]
        return found[0].rid if found else None

    def at(self, path: str, line: int, chain: list[Descriptor], fresh: bool) -> int | None:
        """The chunk of the definition the last of `chain` names, whose name stands on this
        1-based line of `path`; in a changed file (lines may have moved), the one definition of
        that name there whose qualified name ends as the chain does (or the only one)."""
        if fresh:  # where the index says: a name elsewhere in the file is another thing (`var cookie` and `res.cookie`)
            return self.definition(path, line, chain[-1].name)
        named = self.named.get((path, chain[-1].name), [])
        words = [d.name for d in chain if d.suffix not in _NO_CHUNK]
        for depth in range(len(words), 0, -1):
            dotted = ".".join(words[-depth:])
            found = [c for c in named if c.qualified_name == dotted or c.qualified_name.endswith("." + dotted)]
            if len(found) == 1:
                return found[0].rid
        return named[0].rid if len(named) == 1 else None


def covered_paths(db: sqlite3.Connection, index: ScipIndex, made_ns: int) -> tuple[list[str], list[str]]:
    """(covered, stale): the indexed files the SCIP index has documents for, unchanged since it
    was made or changed after."""
    rows = select_in(db, "SELECT path, mtime_ns FROM files WHERE skip_reason IS NULL AND path IN ({})",
                     sorted(index.documents))
    covered = sorted(path for path, mtime_ns in rows if (mtime_ns or 0) <= made_ns)
    stale = sorted(path for path, mtime_ns in rows if (mtime_ns or 0) > made_ns)
    return covered, stale


def drop_scip_edges(db: sqlite3.Connection) -> list[str]:
    """Forget what a SCIP index gave: the uses only it recorded go, and the files whose chunks
    had its edges are returned, for codesearch's own resolution to redo their calls."""
    paths = [r[0] for r in db.execute(
        f"SELECT DISTINCT f.path FROM edges e JOIN chunks c ON c.rid = e.src JOIN files f ON f.fid = c.fid "
        f"WHERE e.kind = {CALLS} AND e.how = {BY_SCIP} "
        f"UNION SELECT DISTINCT f.path FROM calls k JOIN chunks c ON c.rid = k.caller "
        f"JOIN files f ON f.fid = c.fid WHERE k.ref = {SCIP_REFERENCE}")]
    db.execute(f"DELETE FROM calls WHERE ref = {SCIP_REFERENCE}")
    return sorted(paths)


def apply_scip_edges(db: sqlite3.Connection, index: ScipIndex, made_ns: int,
                     callers: Iterable[int] | None = None) -> ScipCoverage:
    """Replace the call edges and references of the covered files' chunks (or only of these
    `callers`, those a run resolved again by name) with the SCIP index's."""
    covered, stale = covered_paths(db, index, made_ns)
    coverage = ScipCoverage(files=len(covered), stale=len(stale), covered=tuple(covered))
    definitions = index.definitions()
    wanted = set(callers) if callers is not None else None
    if wanted is not None:  # only the files these callers are in
        around = {r[0] for r in select_in(db, "SELECT DISTINCT f.path FROM chunks c JOIN files f ON f.fid = c.fid "
                                              "WHERE c.rid IN ({})", sorted(wanted))}
        covered = [path for path in covered if path in around]
    sites: list[tuple[str, int, str, list[Descriptor]]] = []  # (path, 1-based line, symbol key, its chain)
    target_paths: set[str] = set()
    known: dict[str, list[Descriptor] | None] = {}  # symbol key -> its chain (None: it reaches nothing here)
    for path in covered:
        for occurrence in index.documents[path]:
            if occurrence.definition:
                continue
            key = symbol_key(path, occurrence.symbol)
            if key not in known:
                known[key] = _reaching(key, occurrence.symbol, definitions, target_paths)
            chain = known[key]
            if chain is not None:
                sites.append((path, occurrence.line + 1, key, chain))
    files = _Files(db, sorted(set(covered) | target_paths))
    fresh = set(covered)
    mine = [c.rid for path in covered for c in files.chunks.get(path, ())
            if wanted is None or c.rid in wanted]
    if not mine:
        return coverage
    mine_set = set(mine)
    recorded: dict[tuple[str, int], dict[str, int]] = defaultdict(dict)  # (path, line) -> name -> caller recorded
    for caller, path, line, name in select_in(db, "SELECT k.caller, f.path, k.line, n.name FROM calls k "
                                                   "JOIN names n ON n.nid = k.nid JOIN chunks c ON c.rid = k.caller "
                                                   "JOIN files f ON f.fid = c.fid WHERE k.caller IN ({})", mine):
        recorded[(path, line)][name] = caller
    select_in(db, f"DELETE FROM edges WHERE kind = {CALLS} AND src IN ({{}})", mine)
    select_in(db, "UPDATE calls SET guess = 0 WHERE caller IN ({}) AND guess = 1", mine)
    select_in(db, f"DELETE FROM calls WHERE ref = {SCIP_REFERENCE} AND caller IN ({{}})", mine)
    edges: set[tuple[int, int]] = set()
    references: set[tuple[int, str, int]] = set()  # (caller, name, line)
    for path, line, key, chain in sites:
        at_line = recorded.get((path, line), {})
        if not chain:  # a local symbol: a function defined inside another, called where the parser saw a call
            for name, caller in at_line.items():
                local = [t for where, at, column in definitions[key]
                         if (t := files.definition(where, at + 1, name, column + 1))]
                edges.update((caller, t) for t in local if caller in mine_set)
            continue
        caller, target_chain = _use(at_line, chain)
        places = definitions.get(target_chain[-1].symbol, [])
        targets = {t for where, at, _ in places if (t := files.at(where, at + 1, target_chain, where in fresh))}
        if not targets:
            continue
        if caller is None:
            caller = files.caller_at(path, line)
        if caller is None or caller not in mine_set:
            continue
        edges.update((caller, t) for t in targets)
        if target_chain[-1].name not in at_line:
            references.add((caller, target_chain[-1].name, line))
    _write(db, edges, references)
    return coverage


def _reaching(key: str, symbol: str, definitions: dict[str, list[tuple[str, int, int]]],
              target_paths: set[str]) -> list[Descriptor] | None:
    """A symbol's descriptors, if it (or what it belongs to: a constructor's class) is defined
    in the index's documents and can stand for a chunk; the files of those definitions are
    added to `target_paths`."""
    chain = descriptors(symbol)
    if chain[-1:] and chain[-1].suffix in _NO_CHUNK:
        return None
    reached = [k for k in [key, *(d.symbol for d in chain[:-1])] if k in definitions]
    target_paths.update(where for k in reached for where, *_ in definitions[k])
    return chain if reached else None


def _use(at_line: dict[str, int], chain: list[Descriptor]) -> tuple[int | None, list[Descriptor]]:
    """The recorded call site this occurrence stands at, and the part of its symbol that names
    what is called: `new Circle()` is recorded as a call of `Circle`, and the index names the
    constructor (`Circle#<constructor>().`), so the call goes to the class. (None, the whole
    chain) where the parser recorded no call of any of its names on that line."""
    for depth in range(len(chain), 0, -1):
        descriptor = chain[depth - 1]
        caller = at_line.get(descriptor.name)
        if caller is not None and descriptor.suffix not in _NO_CHUNK:
            return caller, chain[:depth]
        constructor = descriptor.suffix == METHOD and (descriptor.name in CONSTRUCTORS
                                                       or descriptor.name.startswith("<"))
        if depth == len(chain) and not constructor:
            break  # only a constructor stands for the type it belongs to
    return None, chain


def _write(db: sqlite3.Connection, edges: set[tuple[int, int]], references: set[tuple[int, str, int]]) -> None:
    db.executemany(f"INSERT OR IGNORE INTO edges(src, kind, dst, weight, how) VALUES (?, {CALLS}, ?, 1.0, {BY_SCIP})",
                   sorted(edges))
    nid = name_ids(db, (name for _, name, _ in references))
    db.executemany(f"INSERT OR IGNORE INTO calls(nid, caller, line, ref) VALUES (?, ?, ?, {SCIP_REFERENCE})",
                   sorted((nid[name], caller, line) for caller, name, line in references))
