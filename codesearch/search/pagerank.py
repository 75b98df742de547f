"""Personalized PageRank over a bounded neighbourhood of the seeds, read from the catalog.

A query gathers its seeds' neighbourhood (two hops, each node's heaviest MAX_NEIGHBOURS edges
either way, at most MAX_PPR_NODES nodes, first reached first kept) in three reads of the
catalog's edge indexes (store/edges.py `CallGraph.adjacency`), then runs the power iteration on
numpy arrays: nothing of the graph is loaded or kept between queries, whatever its size.
"""

from __future__ import annotations

import numpy as np

from ..store.call_graph import CallGraph
from ..store.schema import CALLS, CONTAINS, IMPORTS

MAX_PPR_NODES = 600
MAX_NEIGHBOURS = 25  # a hub (a file of 500 functions, a helper called everywhere) adds its heaviest
EDGE_KIND_WEIGHTS = {CALLS: 1.0, IMPORTS: 0.5, CONTAINS: 0.3}
HOPS = 2


def neighbour_lists(graph: CallGraph, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(owner, neighbour, weight): each of `nodes`' heaviest MAX_NEIGHBOURS neighbours either way,
    an edge's kind weighting its weight and two edges between the same pair adding up; heaviest
    first (then by neighbour) within each owner, owners in the order of `nodes`."""
    adjacency = graph.adjacency(nodes)
    if not len(adjacency.owner):
        return adjacency.owner, adjacency.neighbour, adjacency.weight
    kind_weight = np.zeros(max(EDGE_KIND_WEIGHTS) + 1)
    for kind, w in EDGE_KIND_WEIGHTS.items():
        kind_weight[kind] = w
    weight = kind_weight[adjacency.kind] * adjacency.weight
    keys, inverse = np.unique((adjacency.owner << 32) | adjacency.neighbour, return_inverse=True)  # rids < 2**31
    summed = np.bincount(inverse, weights=weight, minlength=len(keys))
    owner, neighbour = keys >> 32, keys & 0xFFFFFFFF
    owner_order, _ = _local(nodes, owner)
    order = np.lexsort((neighbour, -summed, owner_order))  # by owner as given, heaviest, neighbour
    owner, neighbour, summed = owner[order], neighbour[order], summed[order]
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    rank_in_owner = np.arange(len(owner)) - np.repeat(starts, np.diff(np.r_[starts, len(owner)]))
    keep = rank_in_owner < MAX_NEIGHBOURS
    return owner[keep], neighbour[keep], summed[keep]


def _local(nodes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position in `nodes` of each of `values`, whether it is there at all); `nodes` distinct."""
    sorter = np.argsort(nodes, kind="stable")
    at = np.minimum(np.searchsorted(nodes[sorter], values), len(nodes) - 1)
    return sorter[at], nodes[sorter[at]] == values


def personalized_pagerank(graph: CallGraph, personalization: dict[int, float], alpha: float = 0.85,
                          iterations: int = 25) -> list[tuple[int, float]]:
    """PageRank restarted at the seeds (rids with their weights), over their neighbourhood, by
    power iteration: milliseconds, where the whole graph would take seconds. Seeds without any
    edge are left out; none left: an empty list."""
    seeds = np.array(list(dict.fromkeys(personalization)), dtype=np.int64)
    owner, neighbour, weight = neighbour_lists(graph, seeds)
    with_edges = set(owner.tolist())
    order = np.array([s for s in seeds.tolist() if s in with_edges], dtype=np.int64)
    if not len(order):
        return []
    lists = [(owner, neighbour, weight)]
    taken = set(order.tolist())
    frontier = order
    for _ in range(HOPS):
        if len(order) >= MAX_PPR_NODES or not len(frontier):
            break
        reached = lists[-1][1]
        fresh: list[int] = []
        for node in reached.tolist():  # first reached, first kept (owners in frontier order)
            if node not in taken:
                taken.add(node)
                fresh.append(node)
                if len(order) + len(fresh) >= MAX_PPR_NODES:
                    break
        frontier = np.array(fresh, dtype=np.int64)
        order = np.concatenate([order, frontier])
        lists.append(neighbour_lists(graph, frontier))
    owner = np.concatenate([x[0] for x in lists])
    neighbour = np.concatenate([x[1] for x in lists])
    weight = np.concatenate([x[2] for x in lists])
    dst, inside = _local(order, neighbour)
    src, _ = _local(order, owner[inside])
    dst, w = dst[inside], weight[inside]
    n = len(order)
    restart = np.zeros(n)
    at, known = _local(order, np.array(list(personalization), dtype=np.int64))
    np.add.at(restart, at[known], np.array(list(personalization.values()), dtype=float)[known])
    restart /= restart.sum()
    scores = restart
    if len(src):
        out_weight = np.bincount(src, weights=w, minlength=n)
        share = w / out_weight[src]
        for _ in range(iterations):
            spread = np.bincount(dst, weights=scores[src] * share, minlength=n)
            scores = (1 - alpha) * restart + alpha * spread
    ranked = np.argsort(-scores, kind="stable")
    ranked = ranked[scores[ranked] > 0]
    return list(zip(order[ranked].tolist(), scores[ranked].tolist()))
