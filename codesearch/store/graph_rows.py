"""The graph's rows as a graph library reads them: its nodes with what they show (path, name,
kind, lines) and its directed edges, for a few nodes or streamed for the whole repository."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from .schema import CALLS, CONTAINS
from .sql import CatalogCore, select_in
from .sqlite import sqlite3

_HOW = f"CASE WHEN kind = {CALLS} THEN how END"  # how a call was resolved; nothing for an import
_NODE_SELECT = ("SELECT c.rid, c.id, f.path, c.name, COALESCE(c.qualified_name, c.name), c.kind, c.start_line, "
                "c.end_line FROM chunks c JOIN files f ON f.fid = c.fid")


class NodeRow(NamedTuple):
    """A chunk as a node: its row key, its id and what a reader of the graph sees of it."""

    rid: int
    id: str
    path: str
    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int


class EdgeRow(NamedTuple):
    """A directed edge: a call or import from `src` to `dst`, or `src` containing `dst`; `how`: a
    call's schema.RESOLUTIONS (None for the other kinds)."""

    src: int
    kind: int
    dst: int
    weight: float
    how: int | None


class GraphRows:
    """Nodes and directed edges of the catalog's graph: by row key for a neighbourhood, or every
    one of them, streamed from a cursor so that nothing but the caller's graph is held."""

    def __init__(self, catalog: CatalogCore):
        self._catalog = catalog

    def nodes(self, rids: list[int]) -> list[NodeRow]:
        return [NodeRow(*r) for r in select_in(self._catalog.db, _NODE_SELECT + " WHERE c.rid IN ({})", rids)]

    def rids_of(self, ids: list[str]) -> dict[str, int]:
        return dict(select_in(self._catalog.db, "SELECT id, rid FROM chunks WHERE id IN ({})", ids))

    def edges_touching(self, rids: list[int]) -> list[EdgeRow]:
        """Every edge out of or into `rids`, containment (parent and children) included, each once."""
        db = self._catalog.db
        rows = select_in(db, f"SELECT src, kind, dst, weight, {_HOW} FROM edges WHERE src IN ({{}})", rids)
        rows += select_in(db, f"SELECT src, kind, dst, weight, {_HOW} FROM edges INDEXED BY edges_into "
                              "WHERE dst IN ({})", rids)
        rows += select_in(db, f"SELECT parent, {CONTAINS}, rid, 1.0, NULL FROM chunks WHERE rid IN ({{}}) "
                              "AND parent IS NOT NULL", rids)
        rows += select_in(db, f"SELECT parent, {CONTAINS}, rid, 1.0, NULL FROM chunks INDEXED BY chunks_parent "
                              "WHERE parent IN ({})", rids)
        return [EdgeRow(*r) for r in dict.fromkeys(tuple(r) for r in rows)]

    def all_nodes(self) -> Iterator[NodeRow]:
        """Every chunk, in row order."""
        for row in _streamed(self._catalog.db, _NODE_SELECT + " ORDER BY c.rid"):
            yield NodeRow(*row)

    def all_edges(self) -> Iterator[tuple[str, int, str, float, int | None]]:
        """(source id, kind, destination id, weight, how) of every edge, containment last."""
        yield from _streamed(self._catalog.db, f"SELECT s.id, e.kind, d.id, e.weight, CASE WHEN e.kind = {CALLS} "
                                                "THEN e.how END FROM edges e JOIN chunks s ON s.rid = e.src "
                                                "JOIN chunks d ON d.rid = e.dst")
        yield from _streamed(self._catalog.db, f"SELECT p.id, {CONTAINS}, c.id, 1.0, NULL FROM chunks c "
                                                "JOIN chunks p ON p.rid = c.parent")


def _streamed(db: sqlite3.Connection, sql: str) -> Iterator[tuple]:
    """The rows of `sql` as the cursor steps through them, never all at once."""
    cursor = db.cursor()
    cursor.row_factory = None  # plain tuples: a row object for each of a million rows costs more than the row
    cursor.execute(sql)
    try:
        yield from cursor
    finally:
        cursor.close()
