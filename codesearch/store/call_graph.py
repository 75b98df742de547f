"""The call graph read back from the catalog's rows, node by node through its indexes: what
search, relations and NetworkX export read (store/edges.py resolves and writes the rows)."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from .catalog import Catalog
from .graph_reads import GUESS_WEIGHT, MAX_CANDIDATES, definitions_by_name
from .schema import BY_NAME, CALLS, CONTAINS
from .sql import select_in
from .sqlite import sqlite3


def _candidate_order(db: sqlite3.Connection, names: list[str]) -> dict[str, dict[int, float]]:
    """Name -> {rid: weight} of the definitions a guessed call of that name goes to: the first
    MAX_CANDIDATES in candidate order, sharing GUESS_WEIGHT."""
    return {name: {row.rid: GUESS_WEIGHT / min(len(rows), MAX_CANDIDATES) for row in rows[:MAX_CANDIDATES]}
            for name, rows in definitions_by_name(db, names).items()}


@dataclass(frozen=True)
class Adjacency:
    """The undirected, weighted neighbours of some nodes, as flat arrays: entry i says that
    `owner[i]` has neighbour `neighbour[i]` by an edge of `kind[i]` and weight `weight[i]`
    (rids; kind CALLS, IMPORTS or CONTAINS)."""

    owner: np.ndarray
    neighbour: np.ndarray
    kind: np.ndarray
    weight: np.ndarray


class CallGraph:
    """The graph as the catalog holds it, read node by node through its indexes: callers and
    callees for relations, neighbourhoods for personalized PageRank. Safe on any thread (each
    reads through its own connection)."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def rids_of(self, ids: list[str]) -> dict[str, int]:
        return dict(select_in(self.catalog.db, "SELECT id, rid FROM chunks WHERE id IN ({})", ids))

    def ids_of(self, rids: list[int]) -> dict[int, str]:
        return dict(select_in(self.catalog.db, "SELECT rid, id FROM chunks WHERE rid IN ({})", rids))

    def calls(self, rids: list[int], direction: str) -> list[tuple[int, int, float, int]]:
        """(node, other end, weight, how it was resolved) of the calls into `rids` ("callers") or
        out of them ("callees"), heaviest first for each node: the resolved edges (a recursive
        call is its own caller), and the calls resolution could only guess at, by name, shared
        among the name's first MAX_CANDIDATES definitions."""
        db = self.catalog.db
        if direction == "callers":
            sql = f"SELECT dst, src, weight, how FROM edges WHERE dst IN ({{}}) AND kind = {CALLS}"
        else:
            sql = f"SELECT src, dst, weight, how FROM edges WHERE src IN ({{}}) AND kind = {CALLS}"
        found = {(r[0], r[1]): (r[2], r[3]) for r in select_in(db, sql, rids)}
        for node, other, weight in self._guessed(rids, direction):
            if node != other and (node, other) not in found:
                found[(node, other)] = (weight, BY_NAME)
        rows = sorted(found.items(), key=lambda kv: (kv[0][0], -kv[1][0], kv[0][1]))
        return [(node, other, weight, how) for (node, other), (weight, how) in rows]

    def _guessed(self, rids: list[int], direction: str) -> list[tuple[int, int, float]]:
        db = self.catalog.db
        if direction == "callers":  # calls of the targets' names that resolution left to guesses
            targets = select_in(db, "SELECT rid, name FROM chunks WHERE rid IN ({})", rids)
            names = sorted({name for _, name in targets})
            callers = select_in(db, "SELECT DISTINCT n.name, k.caller FROM names n JOIN calls k ON k.nid = n.nid "
                                    "WHERE n.name IN ({}) AND k.guess = 1", names)
            if not callers:
                return []
            order = _candidate_order(db, names)
            by_name: dict[str, list[int]] = defaultdict(list)
            for name, caller in callers:
                by_name[name].append(caller)
            return [(rid, caller, share) for rid, name in targets
                    for share in [order.get(name, {}).get(rid)] if share
                    for caller in by_name.get(name, ())]
        guessed = select_in(db, "SELECT DISTINCT k.caller, n.name FROM calls k JOIN names n ON n.nid = k.nid "
                                "WHERE k.caller IN ({}) AND k.guess = 1", rids)
        order = _candidate_order(db, [name for _, name in guessed])
        return [(caller, rid, share) for caller, name in guessed for rid, share in order.get(name, {}).items()]

    def adjacency(self, rids: np.ndarray) -> Adjacency:
        """Every edge touching `rids`, either way, with containment (parent and children). Each
        row comes as two numbers, (owner << 33 | neighbour << 2 | kind, weight), straight into a
        structured array: row objects, and four numbers a row, were most of a search's graph time.
        Rids stay below 2**30 (a billion chunks)."""
        if not len(rids):
            empty = np.zeros(0, dtype=np.int64)
            return Adjacency(empty, empty, empty, np.zeros(0))
        cursor = self.catalog.db.cursor()
        cursor.row_factory = None  # plain tuples
        rows = cursor.execute(
            "WITH n(rid) AS (SELECT value FROM json_each(?)) "
            "SELECT (n.rid << 33) | (e.dst << 2) | e.kind, e.weight FROM n JOIN edges e ON e.src = n.rid "
            "UNION ALL SELECT (n.rid << 33) | (e.src << 2) | e.kind, e.weight FROM n "
            "JOIN edges e INDEXED BY edges_into ON e.dst = n.rid "
            f"UNION ALL SELECT (n.rid << 33) | (c.parent << 2) | {CONTAINS}, 1.0 FROM n "
            "JOIN chunks c ON c.rid = n.rid WHERE c.parent IS NOT NULL "
            f"UNION ALL SELECT (n.rid << 33) | (c.rid << 2) | {CONTAINS}, 1.0 FROM n "
            "JOIN chunks c INDEXED BY chunks_parent ON c.parent = n.rid", (json.dumps([int(r) for r in rids]),))
        table = np.fromiter(rows, dtype=[("key", np.int64), ("weight", np.float64)])
        owner, neighbour, kind = table["key"] >> 33, (table["key"] >> 2) & (2**31 - 1), table["key"] & 3
        keep = owner != neighbour  # a recursive call is no neighbour
        return Adjacency(owner[keep], neighbour[keep], kind[keep], table["weight"][keep])
