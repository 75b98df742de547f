"""`networkx.DiGraph`s of the catalog's graph: the neighbourhood of some chunks, read a hop at a
time, or a whole repository, streamed from SQL.

A node is a chunk id, with the chunk's `path`, `name`, `qualified_name`, `kind`, `start_line`
and `end_line`. An edge goes from caller to callee, from importer to imported, from container
to contained; a DiGraph holds one edge per ordered pair, so `kind` names every kind that joins
the pair (`calls`, `imports`, `contains`, comma-separated in that order) and `weight` is the sum
of their weights (a resolved call or an import weighs 1, containment 1, a guessed call its share
of GUESS_WEIGHT). A call's `resolution` says how it was resolved, in relations' words
(schema.RESOLUTIONS: exact, import, type, name-only, dynamic, scip); a call that resolution could only
share among the name's first definitions, which the catalog keeps on the call site and relations
follow by name, is `name-only` with its share of the weight.
"""

from __future__ import annotations

from collections.abc import Iterable

import networkx as nx

from ..indexing.index import Index
from ..store.call_graph import CallGraph
from ..store.catalog import Catalog
from ..store.graph_rows import EdgeRow, GraphRows, NodeRow
from ..store.schema import CALLS, CONTAINS, IMPORTS, RESOLUTIONS

KIND_NAMES = {CALLS: "calls", IMPORTS: "imports", CONTAINS: "contains"}
_KIND_ORDER = ("calls", "imports", "contains")


def neighbourhood(source: Index | Catalog, chunk_ids: Iterable[str], hops: int = 2, *,
                  guesses: bool = True) -> nx.DiGraph:
    """The chunks `hops` edges or fewer from `chunk_ids`, either way along any kind of edge, and
    every edge between them: what the graph retriever's PageRank and `impact` walk (the
    retriever keeps each node's heaviest neighbours; this keeps them all). `guesses`: also the
    calls resolution could only guess at, as relations follow them. Ids the catalog does not
    hold are left out."""
    catalog = _catalog_of(source)
    rows = GraphRows(catalog)
    calls = CallGraph(catalog) if guesses else None
    taken = set(rows.rids_of(list(dict.fromkeys(chunk_ids))).values())
    frontier = sorted(taken)
    edges: dict[tuple[int, int], dict[str, object]] = {}
    for hop in range(hops + 1):
        if not frontier:
            break
        found = rows.edges_touching(frontier)
        guessed = _guessed(calls, frontier, found) if calls is not None else []
        last = hop == hops
        reached: list[int] = []
        for edge in found + guessed:
            if last and (edge.src not in taken or edge.dst not in taken):
                continue  # the last ring's edges that leave the neighbourhood
            for end in (edge.src, edge.dst):
                if end not in taken:
                    taken.add(end)
                    reached.append(end)
            _merge(edges, (edge.src, edge.dst), KIND_NAMES[edge.kind], edge.weight, edge.how)
        frontier = reached
    graph = nx.DiGraph()
    ids: dict[int, str] = {}
    for node in sorted(rows.nodes(sorted(taken))):
        ids[node.rid] = node.id
        graph.add_node(node.id, **_node_attributes(node))
    for (src, dst), attributes in sorted(edges.items()):
        if src in ids and dst in ids:
            graph.add_edge(ids[src], ids[dst], **_joined(attributes))
    return graph


def repository_graph(source: Index | Catalog) -> nx.DiGraph:
    """The whole repository's graph, streamed from the catalog row by row (a million-chunk
    repository holds its graph in memory, nothing besides). Resolved edges only: a guessed call
    would stand for up to MAX_CANDIDATES edges per call site, which the catalog does not store
    for that reason."""
    rows = GraphRows(_catalog_of(source))
    graph = nx.DiGraph()
    for node in rows.all_nodes():
        graph.add_node(node.id, **_node_attributes(node))
    adjacency = graph.adj
    for src, kind, dst, weight, how in rows.all_edges():
        name = KIND_NAMES[kind]
        attributes = adjacency[src].get(dst)
        if attributes is None:
            resolution = {} if how is None else {"resolution": RESOLUTIONS[how]}
            graph.add_edge(src, dst, kind=name, weight=weight, **resolution)
        else:  # a second kind between the same two chunks: kinds in their fixed order, weights summed
            kinds = set(attributes["kind"].split(",")) | {name}
            attributes["kind"] = ",".join(k for k in _KIND_ORDER if k in kinds)
            attributes["weight"] += weight
            if how is not None:
                attributes["resolution"] = RESOLUTIONS[how]
    return graph


def _catalog_of(source: Index | Catalog) -> Catalog:
    return source.catalog if isinstance(source, Index) else source


def _guessed(calls: CallGraph, frontier: list[int], resolved: list[EdgeRow]) -> list[EdgeRow]:
    """The calls into and out of `frontier` that relations follow by name, less those resolved."""
    stored = {(e.src, e.dst) for e in resolved if e.kind == CALLS}
    out = [EdgeRow(caller, CALLS, node, weight, how) for node, caller, weight, how in calls.calls(frontier, "callers")]
    out += [EdgeRow(node, CALLS, callee, weight, how) for node, callee, weight, how in calls.calls(frontier, "callees")]
    return [e for e in dict.fromkeys(out) if (e.src, e.dst) not in stored]


def _merge(edges: dict[tuple[int, int], dict[str, object]], pair: tuple[int, int], kind: str, weight: float,
           how: int | None) -> None:
    """One kind of edge between the pair, added to what is there (an edge read from both ends counts once)."""
    entry = edges.setdefault(pair, {"kinds": {}, "resolution": None})
    kinds: dict[str, float] = entry["kinds"]  # type: ignore[assignment]
    kinds.setdefault(kind, weight)
    if how is not None:
        entry["resolution"] = RESOLUTIONS[how]


def _joined(entry: dict[str, object]) -> dict[str, object]:
    kinds: dict[str, float] = entry["kinds"]  # type: ignore[assignment]
    attributes: dict[str, object] = {"kind": ",".join(k for k in _KIND_ORDER if k in kinds),
                                     "weight": sum(kinds.values())}
    if entry["resolution"] is not None:
        attributes["resolution"] = entry["resolution"]
    return attributes


def _node_attributes(node: NodeRow) -> dict[str, object]:
    return {"path": node.path, "name": node.name, "qualified_name": node.qualified_name, "kind": node.kind,
            "start_line": node.start_line, "end_line": node.end_line}
