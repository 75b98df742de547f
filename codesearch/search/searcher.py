"""Query -> retrievers -> weighted RRF -> ranking -> results (the JSON contract)."""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor

from ..index import Index
from ..model import Chunk
from ..tokens import query_terms
from .fusion import weighted_rrf
from .ranking import Ranked, RankingOptions, aggregate_files, rank
from .request import MODES, SearchError, SearchRequest
from .retrievers import GraphRetriever, Hits, KeywordRetriever, VectorRetriever

_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="vector-search")
RETRIEVERS_OF_MODE = {"hybrid": ("vector", "keyword", "graph"), "vector": ("vector",),
                      "keyword": ("keyword",), "graph": ("graph",)}


class Searcher:
    """Answers queries over one Index; keeps the graph and model warm between queries."""

    def __init__(self, index: Index):
        self.index = index
        self.catalog = index.catalog
        self.settings = index.settings
        self._graph = None
        self._graph_stamp: str | None = None
        self._coverage: tuple[float, int, int] | None = None

    # --- parts ----------------------------------------------------------------------------
    def graph(self):
        stamp = self.catalog.get_meta("last_index_time")
        if self._graph is None or stamp != self._graph_stamp:
            from ..store.graph import load_graph
            self._graph = load_graph(self.catalog)
            self._graph_stamp = stamp
        return self._graph

    def vector_coverage(self) -> tuple[int, int]:
        """(chunks, chunks with vectors): a table scan, so reused for up to a second."""
        now = time.monotonic()
        if self._coverage is None or now - self._coverage[0] > 1.0:
            row = self.catalog.db.execute("SELECT COUNT(*), SUM(vector_hash = embed_hash) FROM chunks").fetchone()
            self._coverage = (now, int(row[0] or 0), int(row[1] or 0))
        return self._coverage[1], self._coverage[2]

    # --- search ---------------------------------------------------------------------------
    def search(self, request: SearchRequest) -> dict:
        query = request.query.strip()
        if not query:
            raise SearchError("the query is empty")
        if request.mode not in MODES:
            raise SearchError(f"unknown mode {request.mode!r}; choose from {', '.join(MODES)}")
        started = time.perf_counter()
        timing: dict[str, float] = {}
        s = self.settings
        names = RETRIEVERS_OF_MODE[request.mode] if request.retrievers is None else request.retrievers
        candidates = max(s.candidates, request.limit * 3)
        total, embedded = self.vector_coverage()
        lists: dict[str, list[str]] = {}
        notes: dict[str, str] = {}
        vector = VectorRetriever(self.index, s.min_semantic_score)
        nearest = None
        if "vector" in names and embedded:  # model and Chroma work beside the keyword search
            nearest = _POOL.submit(vector.nearest, query, candidates, request.filters)
        if "keyword" in names:
            t = time.perf_counter()
            hits = KeywordRetriever(self.catalog, s.min_idf).search(query, candidates, request.filters)
            lists["keyword"], notes["keyword"] = hits.ids, hits.note
            timing["keyword"] = _ms(t)
        if "vector" in names:
            t = time.perf_counter()
            if nearest is not None:
                hits = vector.search(query, candidates, request.filters, pairs=nearest.result())
            else:
                hits = Hits(note="no vectors yet")
            lists["vector"], notes["vector"] = hits.ids, hits.note
            timing["vector_wait"] = _ms(t)
        if "graph" in names:
            t = time.perf_counter()
            seeds = _interleave([lists.get("keyword", [])[:10], lists.get("vector", [])[:10]])
            hits = GraphRetriever(self.catalog, self.graph()).search(query, candidates, request.filters, seeds)
            lists["graph"], notes["graph"] = hits.ids, hits.note
            timing["graph"] = _ms(t)
        t = time.perf_counter()
        weights = {"vector": s.weight_vector, "keyword": s.weight_keyword, "graph": s.weight_graph}
        relation = "graph" in names and notes.get("graph", "").startswith(("callers", "callees"))
        if relation:  # "who calls X": the graph knows; the others only add context
            weights = {**weights, "graph": max(weights.values()) * 3}
        fused = weighted_rrf(lists, weights, k=s.rrf_k)
        chunks = self.catalog.chunks_by_ids([i for i, _ in fused], with_text=False)
        pairs = [(chunks[i], score) for i, score in fused if i in chunks]
        options = request.ranking or (RankingOptions() if s.ranking else RankingOptions.off())
        if relation:
            options = RankingOptions(symbol_boost=False, name_path_boost=False, test_penalty=options.test_penalty,
                                     parent_child_dedupe=False, file_diminishing=False)
        ranked = rank(query, pairs, options)
        timing["rank"] = _ms(t)
        ranks = {name: {cid: i for i, cid in enumerate(ids, start=1)} for name, ids in lists.items()}
        terms = query_terms(query)
        if request.files:
            entries = [(r, agg) for r, agg in aggregate_files(ranked, s.file_aggregation)][:request.limit]
        else:
            entries = [(r, None) for r in ranked[:request.limit]]
        self.catalog.fill_text([r.chunk for r, _ in entries])  # only the shown chunks need text
        results = [self._result(r, ranks, terms, request, score=agg) for r, agg in entries]
        timing["total"] = _ms(started)
        out = {"query": request.query, "mode": request.mode, "results": results,
               "timing_ms": {k: round(v, 2) for k, v in timing.items()}}
        if "vector" in names and total and embedded < total:
            out["partial"] = True
            out["embedded_share"] = round(embedded / total, 4)
        if request.explain:
            out["notes"] = {k: v for k, v in notes.items() if v}
        return out

    def _result(self, r: Ranked, ranks: dict[str, dict[str, int]], terms: list[str], request: SearchRequest,
                score: float | None = None) -> dict:
        c = r.chunk
        snippet, line = snippet_of(c, terms, 4 + 2 * request.context)
        result = {
            "path": c.path, "start_line": c.start_line, "end_line": c.end_line, "kind": c.kind,
            "name": c.name, "qualified_name": c.qualified_name, "language": c.language,
            "score": round(score if score is not None else r.score, 6),
            "sources": {name: ranks[name].get(c.id) for name in ("vector", "keyword", "graph") if name in ranks},
            "snippet": snippet, "snippet_line": line, "signature": c.signature, "id": c.id,
        }
        if request.explain:
            result["explain"] = r.notes
        return result

    # --- relations ------------------------------------------------------------------------
    def relations(self, name: str, direction: str, depth: int = 1) -> dict:
        started = time.perf_counter()
        graph = GraphRetriever(self.catalog, self.graph())
        targets = graph._ids_named(name)
        found = graph.neighbours(targets, direction, depth)
        chunks = self.catalog.chunks_by_ids([i for i, _, _ in found] + targets)
        results = []
        for cid, weight, level in found:
            c = chunks.get(cid)
            if c is None:
                continue
            snippet, line = snippet_of(c, [name.lower()], 3)
            results.append({"path": c.path, "start_line": c.start_line, "end_line": c.end_line, "kind": c.kind,
                            "name": c.name, "qualified_name": c.qualified_name, "language": c.language,
                            "score": round(weight / level, 4), "depth": level, "snippet": snippet,
                            "snippet_line": line, "id": c.id})
        return {"name": name, "direction": direction,
                "targets": [{"path": chunks[t].path, "start_line": chunks[t].start_line,
                             "qualified_name": chunks[t].qualified_name} for t in targets if t in chunks],
                "results": results, "timing_ms": {"total": round(_ms(started), 2)}}


def snippet_of(chunk: Chunk, terms: list[str], lines: int) -> tuple[str, int]:
    """A few lines of the chunk, starting near the first line that mentions a query term."""
    text_lines = chunk.text.split("\n")
    if not text_lines:
        return "", chunk.start_line
    pattern = re.compile("|".join(re.escape(t) for t in terms if len(t) > 2), re.IGNORECASE) if terms else None
    start = 0
    if pattern is not None and pattern.pattern:
        for i, line in enumerate(text_lines):
            if pattern.search(line):
                start = max(0, i - 1)
                break
    piece = text_lines[start:start + lines]
    first_line = chunk.start_line + start if chunk.kind != "file" else chunk.start_line
    return "\n".join(piece), first_line


def _interleave(lists: list[list[str]]) -> list[str]:
    out, seen = [], set()
    for i in range(max((len(x) for x in lists), default=0)):
        for x in lists:
            if i < len(x) and x[i] not in seen:
                seen.add(x[i])
                out.append(x[i])
    return out


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000
