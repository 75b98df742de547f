"""The graph as search and call resolution read it: definitions by name (in the order
resolution ranks candidates), by file and by likeness; call sites, the names chunks call, and
how much calls into a chunk weigh."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

from .schema import BY_NAME, CALLS, NOT_DEFINITIONS, RESOLUTIONS
from .sql import CatalogCore, ascii_lower, like_escaped, select_in
from .sqlite import sqlite3

MAX_CANDIDATES = 8  # a call resolution can only guess at goes to at most this many definitions of its name
GUESS_WEIGHT = 0.5  # ... which share this weight (a resolved call weighs 1)
_NAME_ONLY_LAST = len(RESOLUTIONS)  # a site's surest edge: name-only ranks after every other resolution


class CallSiteRow(NamedTuple):
    caller_id: str
    path: str
    line: int
    reference: bool  # the name is used there, not called (a method value, an argument, a decorator)
    resolution: str | None  # schema.RESOLUTIONS


class DefinitionRow(NamedTuple):
    name: str
    rid: int
    id: str
    path: str
    qualified_name: str
    name_line: int  # 0: not known


_DEFINITIONS_SELECT = ("SELECT c.name, c.rid, c.id, f.path, COALESCE(c.qualified_name, c.name), "
                       "COALESCE(c.name_line, 0) FROM files f "
                       f"JOIN chunks c ON c.fid = f.fid WHERE c.part = 1 AND c.kind NOT IN ({NOT_DEFINITIONS}) AND ")


def _in_candidate_order(rows: list, names: set[str]) -> list[DefinitionRow]:
    """The rows of these exact names, each once (a row comes once per slice of an IN list it
    matches: "Map" in one slice and "map" in the next), by path, qualified name and id."""
    unique = {r[1]: r for r in rows if r[0] in names}
    return sorted((DefinitionRow(*r) for r in unique.values()), key=lambda r: (r.path, r.qualified_name, r.id))


def definitions_in_order(db: sqlite3.Connection, names: Iterable[str]) -> list[DefinitionRow]:
    """The definitions (first parts) of these exact names, in the order call resolution ranks
    candidates: by path, qualified name and id (so the same tree gives the same edges and the
    same guesses, however it was indexed)."""
    wanted = sorted(set(names))
    rows = select_in(db, _DEFINITIONS_SELECT + "c.name COLLATE NOCASE IN ({})", wanted)
    return _in_candidate_order(rows, set(wanted))


def definitions_by_name(db: sqlite3.Connection, names: Iterable[str]) -> dict[str, list[DefinitionRow]]:
    """definitions_in_order, each name's definitions apart (a name none defines: left out)."""
    table: dict[str, list[DefinitionRow]] = defaultdict(list)
    for row in definitions_in_order(db, names):
        table[row.name].append(row)
    return table


def definitions_in_files(db: sqlite3.Connection, names: set[str], paths: Iterable[str]) -> list[DefinitionRow]:
    """definitions_in_order for these names, only those in these files: read by file, so the
    cost follows the files, not how often the names are defined elsewhere."""
    return _in_candidate_order(select_in(db, _DEFINITIONS_SELECT + "f.path IN ({})", sorted(set(paths))), names)


def kinds_named(db: sqlite3.Connection, names: Iterable[str]) -> dict[str, set[str]]:
    """The kinds of the definitions of these exact names (is a receiver's type an interface?)."""
    wanted = sorted(set(names))
    out: dict[str, set[str]] = {}
    for name, kind in select_in(db, f"SELECT name, kind FROM chunks WHERE name COLLATE NOCASE IN ({{}}) AND part = 1 "
                                    f"AND kind NOT IN ({NOT_DEFINITIONS})", wanted):
        if name in wanted:
            out.setdefault(name, set()).add(kind)
    return out


def count_definitions_named(db: sqlite3.Connection, name: str, most: int) -> int:
    """How many definitions this exact name has, counted up to `most` (a bound, not a total: cheap
    for a name defined in thousands of files)."""
    return int(db.execute(f"SELECT COUNT(*) FROM (SELECT 1 FROM chunks WHERE name COLLATE NOCASE = ?1 AND name = ?1 "
                          f"AND part = 1 AND kind NOT IN ({NOT_DEFINITIONS}) LIMIT ?2)", (name, most)).fetchone()[0])


def count_chunks_named(db: sqlite3.Connection, name: str, most: int) -> int:
    """How many chunks of any kind carry this name in any case, counted up to `most`: read from
    the name index alone, so a bound on the name's definitions at the cost of a lookup."""
    return int(db.execute("SELECT COUNT(*) FROM (SELECT 1 FROM chunks INDEXED BY chunks_name "
                          "WHERE name COLLATE NOCASE = ? LIMIT ?)", (name, most)).fetchone()[0])



def _site_resolution(surest: int | None, guessed: bool) -> str | None:
    if surest is not None:
        return RESOLUTIONS[BY_NAME if surest == _NAME_ONLY_LAST else surest]
    return RESOLUTIONS[BY_NAME] if guessed else None


class GraphReads:
    """Definitions, call sites and callers, read for search and for indexing's bookkeeping."""

    def __init__(self, catalog: CatalogCore):
        self._catalog = catalog

    def definitions_in_file(self, path: str) -> set[tuple[str, str]]:
        """(name, chunk id) of the definitions a file holds: what call resolution can choose."""
        rows = self._catalog.db.execute(f"SELECT c.name, c.id FROM chunks c JOIN files f ON f.fid = c.fid WHERE "
                               f"f.path = ? AND c.part = 1 AND c.kind NOT IN ({NOT_DEFINITIONS})", (path,))
        return {(r[0], r[1]) for r in rows}  # tuples: a sqlite3.Row equals no tuple

    def chunk_names_in_file(self, path: str) -> set[str]:
        """The names of a file's chunks, of every kind: whose callers a change of the file may
        resolve otherwise."""
        db = self._catalog.db
        return {r[0] for r in db.execute("SELECT DISTINCT c.name FROM chunks c JOIN files f ON f.fid = c.fid "
                                         "WHERE f.path = ?", (path,))}

    def ids_defining(self, names: Iterable[str], lowered: Iterable[str] = ()) -> list[str]:
        """Ids of definitions (first parts) named exactly one of `names`, or, lower-cased, one of
        `lowered`: one lookup in the case-blind name index, then the exact test here."""
        exact, lower = set(names), {ascii_lower(n) for n in lowered}
        if not exact and not lower:
            return []
        wanted = sorted(exact | lower)
        rows = select_in(self._catalog.db, f"SELECT rid, id, name FROM chunks WHERE name COLLATE NOCASE IN ({{}}) "
                                           f"AND part = 1 AND kind NOT IN ({NOT_DEFINITIONS})", wanted)
        return [r[1] for r in sorted(rows, key=lambda r: r[0]) if r[2] in exact or ascii_lower(r[2]) in lower]

    def ids_with_qualified_names(self, name: str) -> list[tuple[str, str]]:
        """(id, qualified name) of the definitions (first parts) named `name`."""
        rows = self._catalog.db.execute(f"SELECT id, COALESCE(qualified_name, name), name FROM chunks "
                               f"WHERE name COLLATE NOCASE = ? AND part = 1 AND kind NOT IN ({NOT_DEFINITIONS}) "
                               f"ORDER BY rid", (name,)).fetchall()
        return [(r[0], r[1]) for r in rows if r[2] == name]

    def ids_defining_like(self, text: str, limit: int) -> list[str]:
        """Ids of definitions (first parts) whose name contains `text`, case-insensitively: the
        exact name first, then the same name in another case, then names that start with it,
        then the rest; shorter names first within each."""
        lowered = text.lower()
        escaped = like_escaped(lowered)
        rows = self._catalog.db.execute(  # LIKE ignores ASCII case already (as lower() is ASCII only)
            f"SELECT c.id FROM chunks c JOIN files f ON f.fid = c.fid WHERE c.name LIKE ? ESCAPE '\\' "
            f"AND c.part = 1 AND c.kind NOT IN ({NOT_DEFINITIONS}) "
            f"ORDER BY c.name = ? DESC, lower(c.name) = ? DESC, c.name LIKE ? ESCAPE '\\' DESC, length(c.name), "
            f"f.path, c.start_line LIMIT ?", (f"%{escaped}%", text, lowered, f"{escaped}%", limit)).fetchall()
        return [r[0] for r in rows]

    def call_sites(self, name: str, limit: int) -> list[CallSiteRow]:
        """The recorded uses of `name` (calls and references), in path and line order, each with
        how its caller's edges to definitions of the name were resolved (of several, the surest;
        a guess where resolution left only the name; None where no definition here was chosen)."""
        rows = self._catalog.db.execute(
            "SELECT c.id, f.path, k.line, k.ref, k.guess, (SELECT MIN(CASE e.how WHEN ? THEN ? ELSE e.how END) "
            f"FROM edges e JOIN chunks d ON d.rid = e.dst WHERE e.src = k.caller AND e.kind = {CALLS} "
            "AND d.name = n.name) FROM names n JOIN calls k ON k.nid = n.nid JOIN chunks c ON c.rid = k.caller "
            "JOIN files f ON f.fid = c.fid WHERE n.name = ? ORDER BY f.path, k.line LIMIT ?",
            (BY_NAME, _NAME_ONLY_LAST, name, limit)).fetchall()
        return [CallSiteRow(r[0], r[1], r[2], bool(r[3]), _site_resolution(r[5], bool(r[4]))) for r in rows]

    def called_names(self, caller_ids: list[str]) -> list[str]:
        """The names these chunks call, sorted."""
        rows = select_in(self._catalog.db, "SELECT DISTINCT n.name FROM chunks c JOIN calls k ON k.caller = c.rid "
                                  "JOIN names n ON n.nid = k.nid WHERE c.id IN ({})", caller_ids)
        return sorted({r[0] for r in rows})

    def call_lines(self, caller_ids: list[str], names: list[str]) -> dict[tuple[str, str], list[int]]:
        """(caller id, called name) -> the lines where that caller calls that name."""
        return {key: [line for line, _ in sites] for key, sites in self.call_line_hints(caller_ids, names).items()}

    def call_line_hints(self, caller_ids: list[str], names: list[str]) -> dict[tuple[str, str], list[tuple[int, str]]]:
        """(caller id, called name) -> (line, hint) of each call of that name by that caller, by
        line: what the parser knew of the receiver there (ingest/scopes.py; "" for nothing)."""
        out: dict[tuple[str, str], list[tuple[int, str]]] = {}
        if not caller_ids or not names:
            return out
        wanted = set(names)
        rows = select_in(self._catalog.db, "SELECT c.id, n.name, k.line, COALESCE(k.hint, '') FROM chunks c "
                                           "JOIN calls k ON k.caller = c.rid JOIN names n ON n.nid = k.nid "
                                           "WHERE c.id IN ({})", caller_ids)
        for caller, name, line, hint in rows:
            if name in wanted:
                out.setdefault((caller, name), []).append((line, hint))
        for sites in out.values():
            sites.sort()
        return out

    def caller_weights(self, ids: list[str]) -> dict[str, float]:
        """Chunk id -> the summed weight of the calls and imports into it (its centrality): its
        resolved edges, and the calls of its name that resolution could only guess at, each
        shared among the name's first MAX_CANDIDATES definitions as the graph shares it."""
        out: dict[str, float] = {r[0]: float(r[1]) for r in select_in(
            self._catalog.db, "SELECT c.id, SUM(e.weight) FROM chunks c JOIN edges e ON e.dst = c.rid "
                     "WHERE c.id IN ({}) AND e.src != e.dst GROUP BY c.id", ids)}
        named = select_in(self._catalog.db, f"SELECT c.id, c.name FROM chunks c WHERE c.id IN ({{}}) AND c.part = 1 "
                                   f"AND c.kind NOT IN ({NOT_DEFINITIONS})", ids)
        if not named:
            return out
        guessed = dict(select_in(self._catalog.db, "SELECT n.name, COUNT(*) FROM names n JOIN calls k ON k.nid = n.nid "
                                          "WHERE n.name IN ({}) AND k.guess = 1 GROUP BY n.name",
                                 sorted({name for _, name in named})))
        if not guessed:
            return out
        order = {name: [row.id for row in rows]
                 for name, rows in definitions_by_name(self._catalog.db, guessed).items()}
        for chunk_id, name in named:
            candidates = order.get(name, [])
            if name in guessed and chunk_id in candidates[:MAX_CANDIDATES]:
                share = GUESS_WEIGHT / min(len(candidates), MAX_CANDIDATES)
                out[chunk_id] = out.get(chunk_id, 0.0) + guessed[name] * share
        return out

    def names_like(self, name: str, limit: int) -> list[str]:
        """Definition names that contain `name` (case-insensitively), shortest first: what to
        suggest for a name that means nothing."""
        pattern = "%" + like_escaped(name.lower()) + "%"
        rows = self._catalog.db.execute(
            f"SELECT DISTINCT name FROM chunks WHERE part = 1 AND kind NOT IN ({NOT_DEFINITIONS}) "
            f"AND name LIKE ? ESCAPE '\\' ORDER BY length(name), name LIMIT ?", (pattern, limit)).fetchall()
        return [r[0] for r in rows]

