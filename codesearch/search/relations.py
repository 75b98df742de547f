"""Relations in the call graph: "who calls X" and "what does X call", asked as a query or by name."""

from __future__ import annotations

import re
from dataclasses import dataclass

import networkx as nx

from ..store.catalog import Catalog
from .types import Direction

RELATION = re.compile(r"\b(?:who|what|which\s+\w+)?\s*(calls?|uses?|invokes?|callers\s+of|references?)\s+"
                      r"`?([A-Za-z_$][\w$.:]*)`?", re.IGNORECASE)
CALLEES = re.compile(r"\b(?:what\s+does|callees\s+of)\s+`?([A-Za-z_$][\w$.:]*)`?\s*(?:call)?", re.IGNORECASE)
QUERY_DEPTH = 2  # a relation asked in words reaches two hops: the callers' callers add context


@dataclass(frozen=True)
class Related:
    """A definition found from the targets: its chunk id, the edge weight, and its hops away."""

    id: str
    weight: float
    depth: int


def parse_relation(query: str) -> tuple[Direction, str] | None:
    """("callers" | "callees", name) when the query asks for a relation, else None."""
    m = CALLEES.search(query)
    if m:
        return "callees", m.group(1)
    m = RELATION.search(query)
    if m:
        return "callers", m.group(2)
    return None


def definitions_named(catalog: Catalog, name: str) -> list[str]:
    """Ids of the definitions a bare or qualified name (`a.b`, `a::b`) means: those whose
    qualified name matches it, else every definition of its last part."""
    short = re.split(r"\.|::", name)[-1]
    rows = catalog.definitions_with_name(short)
    exact = [i for i, qualified in rows if qualified == name or qualified.endswith("." + name)]
    return exact or [i for i, _ in rows]


def neighbours(graph: nx.DiGraph, ids: list[str], direction: Direction, depth: int = 1) -> list[Related]:
    """Callers or callees of `ids`, breadth first: by hops, then heaviest edge first."""
    seen = set(ids)
    frontier = list(ids)
    out: list[Related] = []
    for level in range(1, depth + 1):
        nxt = []
        for node in frontier:
            if node not in graph:
                continue
            edges = graph.in_edges(node, data=True) if direction == "callers" else graph.out_edges(node, data=True)
            for src, dst, data in edges:
                other = src if direction == "callers" else dst
                if data.get("kind") != "calls" or other in seen:
                    continue
                seen.add(other)
                nxt.append(other)
                out.append(Related(other, data.get("weight", 1.0), level))
        frontier = nxt
    out.sort(key=lambda r: (r.depth, -r.weight))
    return out
