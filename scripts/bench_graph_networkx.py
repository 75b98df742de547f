#!/usr/bin/env python3
"""The graph algorithms on NetworkX against today's: personalized PageRank (`nx.pagerank` with a
personalization on the same neighbourhood, against search/pagerank.py's power iteration on numpy)
in graph-mode searches, and impact's walk of the callers with NetworkX (the same hop-by-hop reads,
into a DiGraph, layered by `nx.bfs_layers`) against search/relations.py's. Old and new in turns on
the same index, in one process; each variant's p50 and p95 of the whole request, and how often
its top 10 differs.

Usage: scripts/bench_graph_networkx.py REPO_DIR --index-dir DIR [--rounds 5] [--names N ...]
The repository must be indexed (`codesearch index REPO_DIR --index-dir DIR --no-vectors`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import networkx as nx
import numpy as np

from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.search import pagerank, searcher
from codesearch.search.relations import Related, neighbours
from codesearch.search.requests import ImpactRequest, SearchRequest
from codesearch.search.retrievers import graph as graph_retriever
from codesearch.search.searcher import Searcher
from codesearch.store.call_graph import CallGraph

QUERIES = ["error handling", "parse configuration file", "retry with backoff", "read from a socket",
           "how are tests run", "logging setup", "convert to json", "cache invalidation", "main entry point",
           "command line arguments", "http request", "thread pool", "string formatting", "Error", "Config",
           "launch a coroutine", "cancel a job", "withContext dispatcher", "flow collect", "channel send receive"]
NAMES = ["launch", "async", "withContext", "delay", "resume", "cancel", "emit", "collect", "runBlocking",
         "flowOf", "produce", "select", "yield", "invokeOnCompletion", "Job"]


def nx_personalized_pagerank(graph: CallGraph, personalization: dict[int, float], alpha: float = 0.85,
                             iterations: int = 25) -> list[tuple[int, float]]:
    """search/pagerank.py's neighbourhood, ranked by `nx.pagerank` instead of the numpy iteration."""
    seeds = np.array(list(dict.fromkeys(personalization)), dtype=np.int64)
    owner, neighbour, weight = pagerank.neighbour_lists(graph, seeds)
    with_edges = set(owner.tolist())
    order = [s for s in seeds.tolist() if s in with_edges]
    if not order:
        return []
    lists = [(owner, neighbour, weight)]
    taken = set(order)
    frontier = order
    for _ in range(pagerank.HOPS):
        if len(order) >= pagerank.MAX_PPR_NODES or not frontier:
            break
        fresh: list[int] = []
        for node in lists[-1][1].tolist():
            if node not in taken:
                taken.add(node)
                fresh.append(node)
                if len(order) + len(fresh) >= pagerank.MAX_PPR_NODES:
                    break
        frontier = fresh
        order = order + fresh
        lists.append(pagerank.neighbour_lists(graph, np.array(fresh, dtype=np.int64)))
    inside = set(order)
    digraph = nx.DiGraph()
    digraph.add_nodes_from(order)
    digraph.add_weighted_edges_from((o, n, w) for x in lists for o, n, w in zip(*(a.tolist() for a in x))
                                    if n in inside)
    restart = {node: value for node, value in personalization.items() if node in inside}
    scores = nx.pagerank(digraph, alpha=alpha, personalization=restart, max_iter=100, tol=1e-6)
    ranked = sorted(((node, score) for node, score in scores.items() if score > 0), key=lambda kv: -kv[1])
    return ranked


def nx_neighbours(graph: CallGraph, ids: list[str], direction: str, depth: int = 1) -> list[Related]:
    """relations.neighbours with the walk held in a DiGraph: the same reads a hop at a time, the
    hops from `nx.bfs_layers`, a node's weight that of the edge that first reached it."""
    rids = graph.rids_of(ids)
    sources = [rids[i] for i in ids if i in rids]
    walked = nx.DiGraph()
    walked.add_nodes_from(sources)
    frontier = list(sources)
    for _ in range(depth):
        rows = graph.calls(frontier, direction)  # (node, other end, weight, ...)
        fresh = [row[1] for row in rows if row[1] not in walked]
        walked.add_edges_from((row[0], row[1], {"weight": row[2]}) for row in rows
                              if not walked.has_edge(row[0], row[1]))
        frontier = list(dict.fromkeys(fresh))
        if not frontier:
            break
    found: list[tuple[int, float, int]] = []
    for level, layer in enumerate(nx.bfs_layers(walked, sources)):
        if level == 0 or level > depth:
            continue
        for node in layer:
            first = next(p for p in walked.predecessors(node))
            found.append((node, walked.edges[first, node]["weight"], level))
    names = graph.ids_of([rid for rid, _, _ in found])
    out = [Related(names[rid], weight, level) for rid, weight, level in found if rid in names]
    out.sort(key=lambda r: (r.depth, -r.weight))
    return out


def timed(run: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    answer = run()
    return (time.perf_counter() - started) * 1000, answer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--names", nargs="*", default=NAMES)
    args = parser.parse_args()
    root = args.root.resolve()
    index = Index(root, load_settings(root), args.index_dir)
    s = Searcher(index)
    variants = {
        "pagerank": ("numpy", pagerank.personalized_pagerank, "networkx", nx_personalized_pagerank,
                     lambda q: s.search(SearchRequest(query=q, mode="graph", limit=10)), QUERIES,
                     (graph_retriever, "personalized_pagerank")),
        "impact": ("sets", neighbours, "networkx", nx_neighbours,
                   lambda n: s.impact(ImpactRequest(name=n)), args.names, (searcher, "neighbours")),
    }
    for path, (old_name, old, new_name, new, ask, inputs, (module, attribute)) in variants.items():
        times: dict[str, list[float]] = {old_name: [], new_name: []}
        answers: dict[str, dict[str, object]] = {old_name: {}, new_name: {}}
        for function in (old, new):  # warm both
            setattr(module, attribute, function)
            for item in inputs:
                ask(item)
        for _ in range(args.rounds):
            for item in inputs:
                for variant, function in ((old_name, old), (new_name, new)):  # in turns
                    setattr(module, attribute, function)
                    ms, answer = timed(partial(ask, item))
                    times[variant].append(ms)
                    answers[variant][item] = answer
        setattr(module, attribute, old)
        differ = sum(_top(answers[old_name][item], path) != _top(answers[new_name][item], path) for item in inputs)
        for variant in (old_name, new_name):
            ordered = sorted(times[variant])
            print(f"{path:<9} {variant:<9} p50 {statistics.median(ordered):7.2f} ms  "
                  f"p95 {ordered[int(0.95 * (len(ordered) - 1))]:7.2f} ms  ({len(ordered)} requests)")
        print(f"{path:<9} top 10 differs for {differ} of {len(inputs)}")
    index.close()
    return 0


def _top(answer: object, path: str) -> list:
    if path == "pagerank":
        return [r.id for r in answer.results[:10]]  # type: ignore[attr-defined]
    return [(f.path, tuple(c.id for c in f.callers)) for f in answer.files][:10]  # type: ignore[attr-defined]


if __name__ == "__main__":
    sys.exit(main())
