"""Personalized PageRank on arrays gives exactly what the plain loops over nodes and edges give."""

from __future__ import annotations

import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from codesearch.search.pagerank import (
    EDGE_KIND_WEIGHTS,
    MAX_NEIGHBOURS,
    MAX_PPR_NODES,
    neighbour_table,
    personalized_pagerank,
)


def reference_pagerank(graph: nx.DiGraph, personalization: dict[str, float], alpha: float = 0.85,
                       iterations: int = 25) -> list[tuple[str, float]]:
    """The definition, written as loops: two hops from the seeds (first reached first kept, at most
    MAX_PPR_NODES), each node's MAX_NEIGHBOURS heaviest undirected neighbours, power iteration."""
    table: dict[str, dict[str, float]] = {}
    for src, dst, data in graph.edges(data=True):
        w = EDGE_KIND_WEIGHTS.get(data.get("kind", "calls"), 0.5) * data.get("weight", 1.0)
        for a, b in ((src, dst), (dst, src)):
            table.setdefault(a, {})[b] = table.setdefault(a, {}).get(b, 0.0) + w
    adjacency = {n: sorted(row.items(), key=lambda kv: -kv[1]) for n, row in table.items()}
    nodes = [n for n in personalization if n in adjacency]
    if not nodes:
        return sorted(personalization.items(), key=lambda kv: -kv[1])
    index = {n: i for i, n in enumerate(nodes)}
    frontier = list(nodes)
    for _ in range(2):
        nxt = []
        for node in frontier:
            for nbr, _w in adjacency.get(node, ())[:MAX_NEIGHBOURS]:
                if nbr not in index and len(index) < MAX_PPR_NODES:
                    index[nbr] = len(index)
                    nxt.append(nbr)
        frontier = nxt
    order = list(index)
    src, dst, weight = [], [], []
    for node, i in index.items():
        for nbr, w in adjacency.get(node, ())[:MAX_NEIGHBOURS]:
            j = index.get(nbr)
            if j is not None:
                src.append(i)
                dst.append(j)
                weight.append(w)
    n = len(order)
    restart = np.zeros(n)
    for node, value in personalization.items():
        if node in index:
            restart[index[node]] = value
    restart /= restart.sum()
    scores = restart
    if src:
        src_a, dst_a, w_a = np.array(src), np.array(dst), np.array(weight, dtype=float)
        share = w_a / np.bincount(src_a, weights=w_a, minlength=n)[src_a]
        scores = restart.copy()
        for _ in range(iterations):
            scores = (1 - alpha) * restart + alpha * np.bincount(dst_a, weights=scores[src_a] * share, minlength=n)
    ranked = sorted(range(n), key=lambda i: -scores[i])
    return [(order[i], float(scores[i])) for i in ranked if scores[i] > 0]


EDGES = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60), st.sampled_from(["calls", "imports", "contains"]),
                           st.sampled_from([0.25, 0.5, 1.0])), min_size=1, max_size=400)


@settings(max_examples=200, deadline=None)
@given(EDGES, st.lists(st.integers(0, 70), min_size=1, max_size=8, unique=True), st.data())
def test_arrays_give_what_the_loops_give(edges, seeds, data):
    graph = nx.DiGraph()
    for a, b, kind, weight in edges:
        if a != b:
            graph.add_edge(f"n{a}", f"n{b}", kind=kind, weight=weight)
    personalization = {f"n{s}": data.draw(st.sampled_from([2.0, 1.0, 0.5, 0.25])) for s in seeds}
    assert personalized_pagerank(neighbour_table(graph), personalization) == reference_pagerank(graph, personalization)


def test_a_hub_is_cut_to_its_heaviest_neighbours_and_the_neighbourhood_to_its_cap():
    graph = nx.DiGraph()
    for i in range(2 * MAX_PPR_NODES):  # a star: the hub calls 1,200 functions, each calls 3 more
        graph.add_edge("hub", f"f{i}", kind="calls", weight=1.0 if i % 7 else 2.0)
        for j in range(3):
            graph.add_edge(f"f{i}", f"g{i}_{j}", kind="calls", weight=1.0)
    ranked = personalized_pagerank(neighbour_table(graph), {"hub": 1.0})
    assert ranked == reference_pagerank(graph, {"hub": 1.0})
    assert len(ranked) <= MAX_PPR_NODES and ranked[0][0] == "hub"
