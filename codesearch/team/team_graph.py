"""The graph retriever over a team store: personalized PageRank (search/pagerank.py, the local
graph retriever's own walk) over the live chunks near the seeds, by containment and calls. Seeds
as the local retriever's: the definitions the query names and the keyword list's best hits.

Each branch's graph (chunk ids, parents, definition names, call sites) is read from Milvus once
per live generation and kept: read a hop at a time, a walk cost many filtered queries on every
search, slow in Milvus Lite."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Iterable

import numpy as np

from ..search.pagerank import personalized_pagerank
from ..search.query import Query
from ..search.retrievers.graph import MAX_NAMED_SEEDS, SEEDS_PER_LIST, joined_terms, named_words, seed_weights
from ..store.edges import CALLS, CONTAINS, Adjacency
from ..store.sql import ascii_lower
from ..vocabulary import NON_DEFINITION_KINDS
from .milvus_store import CALLS as CALL_ROWS
from .milvus_store import CHUNKS, MilvusStore, RepoState


class BranchGraph:
    """One branch's live graph: containment, definitions by name and calls, by row key."""

    def __init__(self, chunks: Iterable[dict], calls: Iterable[dict]):
        self.parent: dict[str, str] = {}
        self.children: dict[str, list[str]] = defaultdict(list)
        self.defined: dict[str, list[str]] = defaultdict(list)  # name -> definitions (first parts)
        self.defined_lower: dict[str, list[str]] = defaultdict(list)  # the same by the name in lower case
        self.name_of: dict[str, str] = {}
        self.calls_out: dict[str, list[str]] = defaultdict(list)  # caller -> names it calls
        self.callers_of: dict[str, list[str]] = defaultdict(list)  # name -> callers
        rows = sorted(chunks, key=lambda r: (r["path"], r["start_line"], r["part"]))
        uid_of = {r["chunk_id"]: r["uid"] for r in rows}
        # a chunk's number: its place in path and line order, as a local catalog numbers its chunks
        # (PageRank breaks ties between neighbours by it)
        self.number = {r["uid"]: n for n, r in enumerate(rows)}
        self.uids = [r["uid"] for r in rows]
        self.path_of = {r["uid"]: r["path"] for r in rows}
        for r in rows:
            if r["parent_id"] and r["parent_id"] in uid_of:
                self.parent[r["uid"]] = uid_of[r["parent_id"]]
                self.children[uid_of[r["parent_id"]]].append(r["uid"])
            if r["kind"] not in NON_DEFINITION_KINDS and r["part"] == 1 and r["name"]:
                self.defined[r["name"]].append(r["uid"])
                self.defined_lower[ascii_lower(r["name"])].append(r["uid"])
                self.name_of[r["uid"]] = r["name"]
        for c in calls:
            caller = uid_of.get(c["caller_id"])
            if caller is not None:
                self.calls_out[caller].append(c["callee"])
                self.callers_of[c["callee"]].append(caller)

    def edges(self, uid: str) -> list[tuple[str, int]]:
        """Containment either way, and calls either way; a call of a name defined in several
        places joins only a definition in the caller's own file (the local store keeps no edge
        for such a guess either: it answers it by name)."""
        out = [(self.parent[uid], CONTAINS)] if uid in self.parent else []
        out += [(child, CONTAINS) for child in self.children.get(uid, ())]
        path = self.path_of[uid]
        for called in self.calls_out.get(uid, ()):
            out += [(d, CALLS) for d in self._resolved(called, path)]
        own = self.name_of.get(uid)
        if own is not None:
            out += [(caller, CALLS) for caller in self.callers_of.get(own, ())
                    if uid in self._resolved(own, self.path_of[caller])]
        return out

    def _resolved(self, name: str, caller_path: str) -> list[str]:
        defined = self.defined.get(name, [])
        if len(defined) <= 1:
            return defined
        return [d for d in defined if self.path_of[d] == caller_path]


class GraphCache:
    """Each branch's BranchGraph, read again when its live generation changes."""

    def __init__(self, store: MilvusStore):
        self.store = store
        self._graphs: dict[tuple[str, str], tuple[int, BranchGraph]] = {}
        self._lock = threading.Lock()

    def of(self, state: RepoState, visible: Callable[[dict], bool]) -> BranchGraph:
        key = (state.repo, state.branch)
        with self._lock:
            have = self._graphs.get(key)
        if have is None or have[0] != state.live_gen:
            scope = MilvusStore.scope(state.repo, state.branch)
            chunks = (r for r in self.store.rows(CHUNKS, scope, ("uid", "chunk_id", "parent_id", "kind", "part",
                                                                 "name", "repo", "branch", "path", "gen",
                                                                 "start_line"))
                      if visible(r))
            calls = (c for c in self.store.rows(CALL_ROWS, scope, ("caller_id", "callee", "repo", "branch", "path",
                                                                   "gen")) if visible(c))
            have = (state.live_gen, BranchGraph(chunks, calls))
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
        for rid in rids.tolist():
            at = int(np.searchsorted(self.offsets, rid, side="right")) - 1
            branch, offset = self.branches[at], int(self.offsets[at])
            for other, how in branch.edges(branch.uids[rid - offset]):
                owner.append(rid)
                neighbour.append(offset + branch.number[other])
                kind.append(how)
        return Adjacency(np.array(owner, dtype=np.int64), np.array(neighbour, dtype=np.int64),
                         np.array(kind, dtype=np.int64), np.ones(len(owner)))


def definitions_named(branches: list[BranchGraph], words: Iterable[str]) -> list[str]:
    """Definitions named one of `words` exactly, or, in lower case, one of the words joined as an
    identifier's whole term (`http_exception` names HTTPException), as the local retriever's."""
    exact = set(words)
    lowered = joined_terms(exact)
    found = []
    for g in branches:
        for name in sorted(exact | lowered):
            found += [uid for uid in g.defined_lower.get(ascii_lower(name), ())
                      if g.name_of[uid] in exact or ascii_lower(g.name_of[uid]) in lowered]
    return list(dict.fromkeys(found))


def graph_list(branches: list[BranchGraph], query: Query, keyword: list[str], limit: int) -> list[str]:
    """Row keys ranked by personalized PageRank from the named definitions and the keyword list's best hits."""
    graph = TeamGraph(branches)
    named = definitions_named(branches, named_words(query))[:MAX_NAMED_SEEDS]
    personalization = seed_weights(named, keyword[:SEEDS_PER_LIST], graph.rid)
    if not personalization:
        return []
    ranked = personalized_pagerank(graph, personalization)  # type: ignore[arg-type]
    return [graph.uid(rid) for rid, _ in ranked][:limit]
