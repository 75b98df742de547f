"""The graph retriever over a team store: personalized PageRank (search/pagerank.py, the local
graph retriever's own walk) over the live chunks near the seeds, their containment and their
calls read from Milvus a hop at a time. Seeds as the local retriever's: the definitions the query
names and the keyword list's best hits."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable

import numpy as np

from ..analysis.query_shape import symbol_names
from ..search.pagerank import personalized_pagerank
from ..search.query import Query
from ..search.retrievers.graph import MAX_NAMED_SEEDS, MAX_NAMED_WORDS, NAMED_SEED_WEIGHT, SEEDS_PER_LIST, interleave
from ..store.edges import CALLS, CONTAINS, Adjacency
from ..vocabulary import NON_DEFINITION_KINDS
from .milvus_store import MilvusStore, literal, row_uid

MAX_READ = 4000  # rows one hop's read takes at most
_NOT_DEFINITIONS = ", ".join(literal(k) for k in sorted(NON_DEFINITION_KINDS))


class TeamGraph:
    """Nodes are small integers handed out as chunks are met (pagerank.py works on those);
    `visible(row)` says whether a row is live."""

    def __init__(self, store: MilvusStore, visible: Callable[[dict], bool]):
        self.store = store
        self.visible = visible
        self.uids: list[str] = []
        self.rid_of: dict[str, int] = {}
        self.rows: dict[str, dict] = {}

    def rid(self, uid: str) -> int:
        if uid not in self.rid_of:
            self.rid_of[uid] = len(self.uids)
            self.uids.append(uid)
        return self.rid_of[uid]

    def rows_of(self, uids: list[str]) -> list[dict]:
        missing = [u for u in uids if u not in self.rows]
        for start in range(0, len(missing), 1000):
            self.rows.update(self.store.chunks_by_uid(missing[start:start + 1000]))
        return [self.rows[u] for u in uids if u in self.rows]

    def adjacency(self, rids: np.ndarray) -> Adjacency:
        """Containment (parent and children) and calls either way of these nodes."""
        rows = self.rows_of([self.uids[int(r)] for r in rids])
        edges: list[tuple[str, str, int]] = []
        by_branch: dict[tuple[str, str, int], list[dict]] = defaultdict(list)
        for row in rows:
            by_branch[(row["repo"], row["branch"], row["gen"])].append(row)
            if row["parent_id"]:
                edges.append((row["uid"], row_uid(row["repo"], row["branch"], row["gen"], row["parent_id"]), CONTAINS))
        for (repo, branch, gen), group in by_branch.items():
            edges += self._branch_edges(repo, branch, gen, group)
        if not edges:
            empty = np.zeros(0, dtype=np.int64)
            return Adjacency(empty, empty, empty, np.zeros(0))
        owner = np.array([self.rid(a) for a, _, _ in edges], dtype=np.int64)
        neighbour = np.array([self.rid(b) for _, b, _ in edges], dtype=np.int64)
        kind = np.array([k for _, _, k in edges], dtype=np.int64)
        return Adjacency(owner, neighbour, kind, np.ones(len(edges)))

    def _branch_edges(self, repo: str, branch: str, gen: int, rows: list[dict]) -> list[tuple[str, str, int]]:
        scope = MilvusStore.scope(repo, branch)
        ids = ", ".join(literal(r["chunk_id"]) for r in rows)
        by_chunk = {r["chunk_id"]: r["uid"] for r in rows}
        edges: list[tuple[str, str, int]] = []
        children = self.store.chunks_where(f"{scope} and gen == {gen} and parent_id in [{ids}]", MAX_READ,
                                           ("uid", "parent_id"))
        edges += [(by_chunk[c["parent_id"]], c["uid"], CONTAINS) for c in children if c["parent_id"] in by_chunk]
        # calls out: the call sites of these chunks, to the live definitions of the names they call
        sites = self.store.calls_where(f"{scope} and gen == {gen} and caller_id in [{ids}]", MAX_READ)
        called: dict[str, list[str]] = defaultdict(list)
        for s in sites:
            called[s["callee"]].append(by_chunk[s["caller_id"]])
        if called:
            names = ", ".join(literal(n) for n in called)
            defined = self.store.chunks_where(f"{scope} and name in [{names}] and kind not in [{_NOT_DEFINITIONS}] "
                                              "and part == 1", MAX_READ, ("uid", "repo", "branch", "path", "gen",
                                                                          "name"))
            for d in defined:
                if self.visible(d):
                    edges += [(caller, d["uid"], CALLS) for caller in called[d["name"]]]
        # calls in: the live chunks whose call sites name these definitions
        named = {r["name"]: r["uid"] for r in rows if r["kind"] not in NON_DEFINITION_KINDS and r["name"]}
        if named:
            names = ", ".join(literal(n) for n in named)
            for s in self.store.calls_where(f"{scope} and callee in [{names}]", MAX_READ):
                if self.visible(s):
                    edges.append((named[s["callee"]], row_uid(repo, branch, s["gen"], s["caller_id"]), CALLS))
        return edges


def named_words(query: Query) -> list[str]:
    """The words of a query that may name definitions (a report's: its identifiers written as code)."""
    if query.shape:
        return sorted(set(symbol_names(query.shape)[:MAX_NAMED_WORDS]))
    return sorted(set(re.findall(r"[A-Za-z_$][\w$]*", query.text)))[:MAX_NAMED_WORDS]


def graph_list(graph: TeamGraph, named: list[str], keyword: list[str], limit: int) -> list[str]:
    """Row keys ranked by personalized PageRank from the named definitions and the keyword list's best hits."""
    seeds = interleave([keyword[:SEEDS_PER_LIST]])
    personalization: dict[int, float] = {}
    for uid in named[:MAX_NAMED_SEEDS]:
        rid = graph.rid(uid)
        personalization[rid] = personalization.get(rid, 0) + NAMED_SEED_WEIGHT
    for rank, uid in enumerate(seeds, start=1):
        rid = graph.rid(uid)
        personalization[rid] = personalization.get(rid, 0) + 1.0 / rank
    if not personalization:
        return []
    ranked = personalized_pagerank(graph, personalization)  # type: ignore[arg-type]
    return [graph.uids[rid] for rid, _ in ranked][:limit]

