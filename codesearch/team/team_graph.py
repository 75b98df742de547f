"""The graph retriever over a team store: personalized PageRank (search/pagerank.py, the local
graph retriever's own walk) over the live chunks near the seeds, by containment and the edges the
indexer resolved (as the local index resolved them). Seeds as the local retriever's: the
definitions the query names and the keyword list's best hits.

Each branch's graph (chunk ids, parents, definition names, edges) is read from Milvus once per
live generation and kept: read a hop at a time, a walk cost many filtered queries on every
search, slow in Milvus Lite."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from ..search.pagerank import personalized_pagerank
from ..search.query import Query
from ..search.retrievers.graph import MAX_NAMED_SEEDS, SEEDS_PER_LIST, joined_terms, named_words, seed_weights
from ..store.call_graph import Adjacency
from ..store.schema import CALLS, CONTAINS, IMPORTS
from ..store.sql import ascii_lower
from ..vocabulary import NON_DEFINITION_KINDS
from .milvus_store import CHUNKS, EDGES, LiveFile, MilvusStore, RepoState, is_live


class BranchGraph:
    """One branch's live graph: containment, definitions by name, and the edges the indexer
    resolved (calls and imports, each with its weight), by row key."""

    def __init__(self, chunks: Iterable[dict], edges: Iterable[dict]):
        self.parent: dict[str, str] = {}
        self.children: dict[str, list[str]] = defaultdict(list)
        self.defined: dict[str, list[str]] = defaultdict(list)  # name -> definitions (first parts)
        self.defined_lower: dict[str, list[str]] = defaultdict(list)  # the same by the name in lower case
        self.name_of: dict[str, str] = {}
        # (other end, kind, weight) of the edges out of a chunk and into it
        self.out_links: dict[str, list[tuple[str, int, float]]] = defaultdict(list)
        self.in_links: dict[str, list[tuple[str, int, float]]] = defaultdict(list)
        # a chunk's number: its place in the walk's order of files (each folder's entries by
        # name, depth first) and its file's order of chunks, as a fresh local catalog numbers its
        # chunks (PageRank keeps a node's heaviest neighbours and breaks ties between them by it)
        rows = sorted(chunks, key=lambda r: (r["path"].split("/"), r["ordinal"]))
        uid_of = {r["chunk_id"]: r["uid"] for r in rows}
        self.number = {r["uid"]: n for n, r in enumerate(rows)}
        self.uids = [r["uid"] for r in rows]
        for r in rows:
            if r["parent_id"] and r["parent_id"] in uid_of:
                self.parent[r["uid"]] = uid_of[r["parent_id"]]
                self.children[uid_of[r["parent_id"]]].append(r["uid"])
            if r["kind"] not in NON_DEFINITION_KINDS and r["part"] == 1 and r["name"]:
                self.defined[r["name"]].append(r["uid"])
                self.defined_lower[ascii_lower(r["name"])].append(r["uid"])
                self.name_of[r["uid"]] = r["name"]
        for e in edges:
            source, target = uid_of.get(e["caller_id"]), uid_of.get(e["target_id"])
            if source is None or target is None or source == target:  # a guess, or a recursive call
                continue
            kind = CALLS if e["kind"] == "calls" else IMPORTS
            self.out_links[source].append((target, kind, float(e["weight"])))
            self.in_links[target].append((source, kind, float(e["weight"])))
        # in the order the catalog's indexes give them (edges by source, kind and target; into a
        # chunk by kind, weight and source): PageRank sums an edge pair's weights in that order,
        # and its near-ties fall as the local graph's do
        for links in self.out_links.values():
            links.sort(key=lambda x: (x[1], self.number[x[0]]))
        for links in self.in_links.values():
            links.sort(key=lambda x: (x[1], x[2], self.number[x[0]]))

    def edges(self, uid: str) -> tuple[list[tuple[str, int, float]], ...]:
        """The local graph's adjacency of one chunk, in its four parts: the resolved calls and
        imports out of it and into it (a guessed call is no edge there either), its parent, its
        children."""
        parent = [(self.parent[uid], CONTAINS, 1.0)] if uid in self.parent else []
        children = [(child, CONTAINS, 1.0) for child in self.children.get(uid, ())]
        return self.out_links.get(uid, []), self.in_links.get(uid, []), parent, children


class GraphCache:
    """Each branch's BranchGraph, read again when its live generation changes."""

    def __init__(self, store: MilvusStore):
        self.store = store
        self._graphs: dict[tuple[str, str], tuple[int, BranchGraph]] = {}
        self._lock = threading.Lock()

    def of(self, state: RepoState, live: dict[str, LiveFile]) -> BranchGraph:
        """`live`: the branch's live file map (its chunks' and edges' generations)."""
        key = (state.repo, state.branch)
        with self._lock:
            have = self._graphs.get(key)
        if have is None or have[0] != state.live_gen:
            scope = MilvusStore.scope(state.repo, state.branch)
            chunks = (r for r in self.store.rows(CHUNKS, scope, ("uid", "chunk_id", "parent_id", "kind", "part",
                                                                 "name", "path", "gen", "ordinal"))
                      if is_live(r, live))
            edges = (e for e in self.store.rows(EDGES, f"{scope} and target_id != \"\"",
                                                ("caller_id", "target_id", "kind", "weight", "path", "gen"))
                     if is_live(e, live, EDGES))
            have = (state.live_gen, BranchGraph(chunks, edges))
            with self._lock:
                self._graphs[key] = have
        return have[1]


class TeamGraph:
    """The branches a search covers as one graph of integer nodes (pagerank.py's rids): a branch's
    chunk numbers, past the numbers of the branches before it."""

    def __init__(self, branches: list[BranchGraph]):
        self.branches = branches
        self.offsets = list(np.cumsum([0] + [len(b.uids) for b in branches]))

    def rid(self, uid: str) -> int | None:
        for offset, branch in zip(self.offsets, self.branches):
            number = branch.number.get(uid)
            if number is not None:
                return int(offset) + number
        return None

    def uid(self, rid: int) -> str:
        at = int(np.searchsorted(self.offsets, rid, side="right")) - 1
        return self.branches[at].uids[rid - int(self.offsets[at])]

    def adjacency(self, rids: np.ndarray) -> Adjacency:
        owner: list[int] = []
        neighbour: list[int] = []
        kind: list[int] = []
        weight: list[float] = []
        nodes = []
        for rid in rids.tolist():
            at = int(np.searchsorted(self.offsets, rid, side="right")) - 1
            branch, offset = self.branches[at], int(self.offsets[at])
            nodes.append((rid, branch, offset, branch.edges(branch.uids[rid - offset])))
        for part in range(4):  # each part for every node, then the next, as the catalog's query reads them
            for rid, branch, offset, parts in nodes:
                for other, how, heavy in parts[part]:
                    owner.append(rid)
                    neighbour.append(offset + branch.number[other])
                    kind.append(how)
                    weight.append(heavy)
        return Adjacency(np.array(owner, dtype=np.int64), np.array(neighbour, dtype=np.int64),
                         np.array(kind, dtype=np.int64), np.array(weight, dtype=np.float64))


def definitions_named(branches: list[BranchGraph], words: Iterable[str]) -> list[str]:
    """Definitions named one of `words` exactly, or, in lower case, one of the words joined as an
    identifier's whole term (`http_exception` names HTTPException), as the local retriever's: each
    branch's in its chunks' order (the local lookup's, by rid; the first MAX_NAMED_SEEDS seed)."""
    exact = set(words)
    lowered = joined_terms(exact)
    found = []
    for g in branches:
        mine: set[str] = set()
        for name in exact | lowered:
            mine.update(uid for uid in g.defined_lower.get(ascii_lower(name), ())
                        if g.name_of[uid] in exact or ascii_lower(g.name_of[uid]) in lowered)
        found += sorted(mine, key=g.number.__getitem__)
    return found


def graph_list(branches: list[BranchGraph], query: Query, keyword: list[str], limit: int) -> list[str]:
    """Row keys ranked by personalized PageRank from the named definitions and the keyword list's best hits."""
    graph = TeamGraph(branches)
    named = definitions_named(branches, named_words(query))[:MAX_NAMED_SEEDS]
    personalization = seed_weights(named, keyword[:SEEDS_PER_LIST], graph.rid)
    if not personalization:
        return []
    ranked = personalized_pagerank(graph, personalization)  # type: ignore[arg-type]
    return [graph.uid(rid) for rid, _ in ranked][:limit]
