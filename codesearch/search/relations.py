"""Relations in the call graph: "who calls X" and "what does X call", asked as a query or by name."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..analysis.tokens import STOPWORDS
from ..store.call_graph import CallGraph
from ..store.catalog import Catalog
from ..store.schema import RESOLUTIONS
from .requests import Direction

RELATION = re.compile(r"\b(?:who|what|which\s+\w+)?\s*(calls?|uses?|invokes?|callers\s+of|references?)\s+"
                      r"`?([A-Za-z_$][\w$.:]*)`?", re.IGNORECASE)
CALLEES = re.compile(r"\b(?:what\s+does|callees\s+of)\s+`?([A-Za-z_$][\w$.:]*)`?\s*(?:call)?", re.IGNORECASE)
QUERY_DEPTH = 2  # a relation asked in words reaches two hops: the callers' callers add context


@dataclass(frozen=True)
class Related:
    """A definition found from the targets: its chunk id, the edge weight, its hops away, and
    how the edge that reached it was resolved (schema.RESOLUTIONS)."""

    id: str
    weight: float
    depth: int
    resolution: str = "name-only"


def parse_relation(query: str) -> tuple[Direction, str] | None:
    """("callers" | "callees", name) when the query asks for a relation, else None. A word of
    the sentence is no name ("for use in format strings" asks for no callers of `in`)."""
    for m in CALLEES.finditer(query):
        if m.group(1).lower() not in STOPWORDS:
            return "callees", m.group(1)
    for m in RELATION.finditer(query):
        if m.group(2).lower() not in STOPWORDS:
            return "callers", m.group(2)
    return None


def definitions_named(catalog: Catalog, name: str) -> list[str]:
    """Ids of the definitions a bare or qualified name (`a.b`, `a::b`) means: those whose
    qualified name matches it, else every definition of its last part."""
    short = re.split(r"\.|::", name)[-1]
    rows = catalog.graph.ids_with_qualified_names(short)
    exact = [i for i, qualified in rows if qualified == name or qualified.endswith("." + name)]
    return exact or [i for i, _ in rows]


def neighbours(graph: CallGraph, ids: list[str], direction: Direction, depth: int = 1) -> list[Related]:
    """Callers or callees of `ids`, breadth first: by hops, then heaviest edge first; a target
    that calls itself is among its own callers (and callees)."""
    rids = graph.rids_of(ids)
    seen = set(rids.values())
    frontier = [rids[i] for i in ids if i in rids]
    found: list[tuple[int, float, int, int]] = []  # (rid, weight, depth, how)
    recursive: set[int] = set()
    for level in range(1, depth + 1):
        nxt = []
        for node, other, weight, how in graph.calls(frontier, direction):
            if other == node and level == 1 and other not in recursive:
                recursive.add(other)
                found.append((other, weight, level, how))
            if other in seen:
                continue
            seen.add(other)
            nxt.append(other)
            found.append((other, weight, level, how))
        frontier = nxt
        if not frontier:
            break
    names = graph.ids_of([rid for rid, _, _, _ in found])
    out = [Related(names[rid], weight, level, RESOLUTIONS[how]) for rid, weight, level, how in found if rid in names]
    out.sort(key=lambda r: (r.depth, -r.weight))
    return out
