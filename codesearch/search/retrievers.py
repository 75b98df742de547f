"""The three independent retrievers. Each returns chunk ids, best first, with a score."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from ..store.catalog import Catalog, select_in
from ..tokens import identifier_terms, query_terms
from .request import Filters

# bm25 column weights: name, path, signature+docstring, body
COLUMN_WEIGHTS = (6.0, 3.0, 3.0, 1.0)


@dataclass
class Hits:
    ids: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    note: str = ""


class KeywordRetriever:
    """BM25 over FTS5 with code-aware terms; low-IDF query terms dropped."""

    def __init__(self, catalog: Catalog, min_idf: float = 0.0):
        self.catalog = catalog
        self.min_idf = min_idf

    def idf(self, terms: list[str]) -> dict[str, float]:
        """BM25 idf of each (stemmed) term over all chunks."""
        db = self.catalog.db
        total = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] or 1
        out = {}
        for term in terms:  # counted through MATCH, so the term is stemmed exactly as indexed
            df = db.execute("SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (f'"{term}"',)).fetchone()[0]
            out[term] = math.log(1 + (total - df + 0.5) / (df + 0.5))
        return out

    def search(self, query: str, limit: int, filters: Filters) -> Hits:
        terms = query_terms(query)
        if not terms:
            return Hits(note="no searchable words")
        if self.min_idf > 0 and len(terms) > 1:
            idf = self.idf(terms)
            kept = [t for t in terms if idf[t] >= self.min_idf]
            terms = kept or [max(terms, key=lambda t: idf[t])]
        match = " OR ".join(f'"{t}"' for t in terms)
        where, params = filters.sql()
        weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
        rows = self.catalog.db.execute(
            f"SELECT c.id, bm25(chunks_fts, {weights}) AS score FROM chunks_fts "
            f"JOIN chunks c ON c.rid = chunks_fts.rowid WHERE chunks_fts MATCH ?{where} "
            f"ORDER BY score LIMIT ?", [match, *params, limit]).fetchall()
        return Hits([r[0] for r in rows], [-r[1] for r in rows])


class VectorRetriever:
    """Nearest chunks by cosine similarity in Chroma."""

    def __init__(self, index, min_score: float = 0.0):
        self.index = index
        self.min_score = min_score

    def nearest(self, query: str, limit: int, filters: Filters) -> list[tuple[str, float]]:
        """Model and Chroma only (no catalog access): safe to run beside the keyword retriever."""
        vector = self.index.embedder.encode_query(query)
        fetch = limit * 3 if filters.path_glob else limit
        return self.index.vectors.query(vector, fetch, filters.chroma_where())

    def search(self, query: str, limit: int, filters: Filters,
               pairs: list[tuple[str, float]] | None = None) -> Hits:
        if pairs is None:
            pairs = self.nearest(query, limit, filters)
        if filters.path_glob:
            allowed = _paths_matching(self.index.catalog, [i for i, _ in pairs], filters.path_glob)
            pairs = [(i, s) for i, s in pairs if i in allowed]
        pairs = [(i, s) for i, s in pairs if s >= self.min_score][:limit]
        return Hits([i for i, _ in pairs], [s for _, s in pairs])


def _paths_matching(catalog: Catalog, ids: list[str], glob: str) -> set[str]:
    rows = select_in(catalog.db, "SELECT id FROM chunks WHERE path GLOB ? AND id IN ({})", ids, before=(glob,))
    return {r[0] for r in rows}


RELATION = re.compile(r"\b(?:who|what|which\s+\w+)?\s*(calls?|uses?|invokes?|callers\s+of|references?)\s+"
                      r"`?([A-Za-z_$][\w$.:]*)`?", re.IGNORECASE)
CALLEES = re.compile(r"\b(?:what\s+does|callees\s+of)\s+`?([A-Za-z_$][\w$.:]*)`?\s*(?:call)?", re.IGNORECASE)


MAX_PPR_NODES = 600
MAX_NEIGHBOURS = 25  # a hub (a file of 500 functions, a helper called everywhere) adds its heaviest


def personalized_pagerank(adjacency: dict[str, list[tuple[str, float]]], personalization: dict[str, float],
                          alpha: float = 0.85, iterations: int = 25) -> list[tuple[str, float]]:
    """PageRank restarted at the seeds, over their neighbourhood (two hops, bounded), by power
    iteration on numpy arrays: milliseconds where the whole graph would take seconds."""
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
    if not src:
        scores = restart
    else:
        src_a, dst_a, w_a = np.array(src), np.array(dst), np.array(weight, dtype=float)
        out_weight = np.bincount(src_a, weights=w_a, minlength=n)
        share = w_a / out_weight[src_a]
        scores = restart.copy()
        for _ in range(iterations):
            spread = np.bincount(dst_a, weights=scores[src_a] * share, minlength=n)
            scores = (1 - alpha) * restart + alpha * spread
    ranked = sorted(range(n), key=lambda i: -scores[i])
    return [(order[i], float(scores[i])) for i in ranked if scores[i] > 0]


class GraphRetriever:
    """Personalized PageRank from the definitions a query names and the other retrievers' hits.

    A relation query ("who calls parse_config") ranks the callers of the named definition first.
    """

    def __init__(self, catalog: Catalog, graph: nx.DiGraph, edge_weights: dict[str, float] | None = None):
        self.catalog = catalog
        self.graph = graph
        self.edge_weights = edge_weights or {"calls": 1.0, "imports": 0.5, "contains": 0.3}

    def named_definitions(self, query: str) -> list[str]:
        """Definitions whose name is a word of the query (or a joined identifier)."""
        words = set(re.findall(r"[A-Za-z_$][\w$]*", query))
        joined = {identifier_terms(w)[0] for w in words}
        if not words:
            return []
        names = sorted(words)
        rows = self.catalog.db.execute(
            f"SELECT id, name FROM chunks WHERE part = 1 AND kind NOT IN ('file', 'block', 'section') "
            f"AND (name IN ({','.join('?' * len(names))}) OR lower(name) IN ({','.join('?' * len(joined))}))",
            [*names, *sorted(joined)]).fetchall()
        return [r[0] for r in rows]

    def relation(self, query: str) -> tuple[str, list[str]] | None:
        """('callers'|'callees', target ids) for relation queries, else None."""
        m = CALLEES.search(query)
        if m:
            return "callees", self._ids_named(m.group(1))
        m = RELATION.search(query)
        if m:
            return "callers", self._ids_named(m.group(2))
        return None

    def _ids_named(self, name: str) -> list[str]:
        short = re.split(r"\.|::", name)[-1]
        rows = self.catalog.db.execute(
            "SELECT id, qualified_name FROM chunks WHERE part = 1 AND name = ? AND kind NOT IN "
            "('file', 'block', 'section')", (short,)).fetchall()
        exact = [r[0] for r in rows if r[1] == name or r[1].endswith("." + name)]
        return exact or [r[0] for r in rows]

    def neighbours(self, ids: list[str], direction: str, depth: int = 1) -> list[tuple[str, float, int]]:
        """(id, weight, depth) of callers or callees of `ids`, breadth first."""
        seen = set(ids)
        frontier = list(ids)
        out: list[tuple[str, float, int]] = []
        for level in range(1, depth + 1):
            nxt = []
            for node in frontier:
                if node not in self.graph:
                    continue
                edges = self.graph.in_edges(node, data=True) if direction == "callers" else \
                    self.graph.out_edges(node, data=True)
                for src, dst, data in edges:
                    other = src if direction == "callers" else dst
                    if data.get("kind") != "calls" or other in seen:
                        continue
                    seen.add(other)
                    nxt.append(other)
                    out.append((other, data.get("weight", 1.0), level))
            frontier = nxt
        out.sort(key=lambda t: (t[2], -t[1]))
        return out

    def search(self, query: str, limit: int, filters: Filters, seeds: list[str] | None = None) -> Hits:
        relation = self.relation(query)
        if relation and relation[1]:
            direction, targets = relation
            found = self.neighbours(targets, direction, depth=2)
            if filters.active:
                allowed = self._allowed([i for i, _, _ in found], filters)
                found = [f for f in found if f[0] in allowed]
            ids = [i for i, _, _ in found]
            return Hits(ids[:limit], [1.0 / d for _, _, d in found][:limit], note=f"{direction} of {len(targets)} definitions")
        named = self.named_definitions(query)
        personalization: dict[str, float] = {}
        for node in named:
            if node in self.graph:
                personalization[node] = personalization.get(node, 0) + 2.0
        for rank, node in enumerate(seeds or [], start=1):
            if node in self.graph:
                personalization[node] = personalization.get(node, 0) + 1.0 / rank
        if not personalization:
            return Hits(note="no seed in the graph")
        ranked = personalized_pagerank(self.adjacency(), personalization)
        if filters.active:
            allowed = self._allowed([n for n, _ in ranked], filters)
            ranked = [(n, s) for n, s in ranked if n in allowed]
        ranked = ranked[:limit]
        return Hits([n for n, _ in ranked], [s for _, s in ranked])

    def adjacency(self) -> dict[str, list[tuple[str, float]]]:
        """Undirected weighted neighbours per node, heaviest first (built once per graph)."""
        cached = self.graph.graph.get("_adjacency")
        if cached is None:
            table: dict[str, dict[str, float]] = {}
            for src, dst, data in self.graph.edges(data=True):
                w = self.edge_weights.get(data.get("kind", "calls"), 0.5) * data.get("weight", 1.0)
                for a, b in ((src, dst), (dst, src)):
                    row = table.setdefault(a, {})
                    row[b] = row.get(b, 0.0) + w
            cached = {n: sorted(row.items(), key=lambda kv: -kv[1]) for n, row in table.items()}
            self.graph.graph["_adjacency"] = cached
        return cached

    def _allowed(self, ids: list[str], filters: Filters) -> set[str]:
        where, params = filters.sql()
        rows = select_in(self.catalog.db, f"SELECT c.id FROM chunks c WHERE c.id IN ({{}}){where}", ids,
                         after=tuple(params))
        return {r[0] for r in rows}
