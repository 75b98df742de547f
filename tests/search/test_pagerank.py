"""Personalized PageRank on arrays, from neighbourhoods read node by node, gives what plain loops
over a whole in-memory graph give; and the catalog's own graph reads feed it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codesearch.search.pagerank import EDGE_KIND_WEIGHTS, MAX_NEIGHBOURS, MAX_PPR_NODES, personalized_pagerank
from codesearch.store.call_graph import Adjacency
from codesearch.store.schema import CALLS, CONTAINS, IMPORTS

KINDS = {"calls": CALLS, "imports": IMPORTS, "contains": CONTAINS}


class ListGraph:
    """A graph held as a list of edges, answering `adjacency` as the catalog's CallGraph does."""

    def __init__(self, edges: list[tuple[int, int, int, float]]):
        seen: set[tuple[int, int, int]] = set()
        self.edges = []
        for src, dst, kind, weight in edges:  # the catalog keeps one edge per (src, kind, dst)
            if src != dst and (src, kind, dst) not in seen:
                seen.add((src, kind, dst))
                self.edges.append((src, dst, kind, weight))
        self.asked: list[int] = []

    def adjacency(self, rids: np.ndarray) -> Adjacency:
        self.asked.append(len(rids))
        wanted = set(rids.tolist())
        rows = [(s, d, k, w) for s, d, k, w in self.edges if s in wanted]
        rows += [(d, s, k, w) for s, d, k, w in self.edges if d in wanted]
        table = np.array(rows, dtype=float).reshape(-1, 4)
        return Adjacency(table[:, 0].astype(np.int64), table[:, 1].astype(np.int64), table[:, 2].astype(np.int64),
                         table[:, 3])


def reference_pagerank(edges: list[tuple[int, int, int, float]], personalization: dict[int, float],
                       alpha: float = 0.85, iterations: int = 25) -> list[tuple[int, float]]:
    """The definition, written as loops: two hops from the seeds (first reached first kept, at most
    MAX_PPR_NODES), each node's MAX_NEIGHBOURS heaviest undirected neighbours (ties: the lower
    node), power iteration. Seeds without an edge are left out."""
    table: dict[int, dict[int, float]] = {}
    for src, dst, kind, weight in ListGraph(edges).edges:
        w = EDGE_KIND_WEIGHTS[kind] * weight
        for a, b in ((src, dst), (dst, src)):
            table.setdefault(a, {})[b] = table.setdefault(a, {}).get(b, 0.0) + w
    adjacency = {n: sorted(row.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_NEIGHBOURS] for n, row in table.items()}
    nodes = [n for n in personalization if n in adjacency]
    if not nodes:
        return []
    index = {n: i for i, n in enumerate(nodes)}
    frontier = list(nodes)
    for _ in range(2):
        nxt = []
        for node in frontier:
            for nbr, _w in adjacency.get(node, ()):
                if nbr not in index and len(index) < MAX_PPR_NODES:
                    index[nbr] = len(index)
                    nxt.append(nbr)
        frontier = nxt
    order = list(index)
    src, dst, weight = [], [], []
    for node, i in index.items():
        for nbr, w in adjacency.get(node, ()):
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
        for _ in range(iterations):
            scores = (1 - alpha) * restart + alpha * np.bincount(dst_a, weights=scores[src_a] * share, minlength=n)
    return [(order[i], float(scores[i])) for i in range(n) if scores[i] > 0]


EDGES = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60), st.sampled_from(sorted(KINDS.values())),
                           st.sampled_from([0.25, 0.5, 1.0])), min_size=1, max_size=400)


@settings(max_examples=200, deadline=None)
@given(EDGES, st.lists(st.integers(0, 70), min_size=1, max_size=8, unique=True), st.data())
def test_arrays_give_what_the_loops_give(edges, seeds, data):
    personalization = {s: data.draw(st.sampled_from([2.0, 1.0, 0.5, 0.25])) for s in seeds}
    got = dict(personalized_pagerank(ListGraph(edges), personalization))
    expected = dict(reference_pagerank(edges, personalization))
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_a_hub_is_cut_to_its_heaviest_neighbours_and_the_neighbourhood_to_its_cap():
    edges = []
    for i in range(2 * MAX_PPR_NODES):  # a star: the hub calls 1,200 functions, each calls 3 more
        f = 10 + i
        edges.append((1, f, CALLS, 1.0 if i % 7 else 2.0))
        edges += [(f, 100_000 + 3 * i + j, CALLS, 1.0) for j in range(3)]
    graph = ListGraph(edges)
    ranked = personalized_pagerank(graph, {1: 1.0})
    assert dict(ranked) == pytest.approx(dict(reference_pagerank(edges, {1: 1.0})))
    assert len(ranked) <= MAX_PPR_NODES and ranked[0][0] == 1
    assert len(graph.asked) <= 3  # the seeds, then one read a hop: never the whole graph


def test_seeds_without_edges_give_nothing():
    assert personalized_pagerank(ListGraph([(1, 2, CALLS, 1.0)]), {7: 1.0}) == []
