"""Nearest chunks by cosine similarity of their embeddings, in the vector store."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import ClassVar

from ...analysis.query_shape import embedding_text
from ...filters import Filters
from ...indexing.index import Index
from ...store.chroma import VectorStoreError
from ...store.space import full_disk_line, is_out_of_space
from ..query import Query
from .retriever import Hits

COVERAGE_TTL_SECONDS = 1.0  # counting embedded chunks is a table scan: reuse it for this long ...
COVERAGE_SHARE = 0.02  # ... at least, and so long that counting takes at most this share of the time


class VectorRetriever:
    """Embeds the query and asks Chroma; language and kind filters go into Chroma, a path glob
    is checked against the catalog afterwards (Chroma cannot match globs)."""

    name: ClassVar[str] = "vector"
    seeds_from: ClassVar[tuple[str, ...]] = ()

    def __init__(self, index: Index, min_score: float = 0.0):
        self.index = index
        self.min_score = min_score
        self._coverage: tuple[float, int, int] | None = None  # (counted again after, chunks, with vectors)
        self._foreign_key: str | None = None  # the key of the index's vectors, when not this model's
        self._lock = threading.Lock()

    def counts(self) -> tuple[int, int]:
        """(chunks that get vectors, those with current vectors), counted again after a second,
        or after COVERAGE_SHARE^-1 times as long as the count took (a table scan, slow on a
        monorepo, which then counts less often). Vectors of another model (the
        index was embedded with other settings) count as none."""
        with self._lock:
            now = time.monotonic()
            if self._coverage is None or now > self._coverage[0]:
                total, embedded = self.index.catalog.vectors.coverage()
                stored = self.index.catalog.get_meta("model")
                self._foreign_key = stored if stored and stored != self.index.vector_key else None
                took = time.monotonic() - now
                self._coverage = (now + max(COVERAGE_TTL_SECONDS, took / COVERAGE_SHARE), total,
                                  0 if self._foreign_key else embedded)
            return self._coverage[1], self._coverage[2]

    def coverage(self) -> float | None:
        total, embedded = self.counts()
        if self.index.vectors.problem:
            return 0.0 if total else None
        return max(0, embedded - self.index.vectors.shortfall) / total if total else None

    def search(self, query: Query, limit: int, earlier: Mapping[str, Sequence[str]]) -> Hits:
        if not self.counts()[1]:
            if self._foreign_key:
                return Hits(note=f"the index's vectors are {self._foreign_key}'s", problem=(
                    f"the index was embedded by {self._foreign_key}, not {self.index.vector_key}: answering "
                    "from keyword and graph until codesearch index (or a running daemon) embeds it again"))
            return Hits(note="no vectors yet")
        if self.index.vectors.problem:
            return self._unusable(self.index.vectors.problem)
        # a report: the model reads its title and the code it names, not its first 128 tokens of prose
        vector = self.index.embedder.encode_query(embedding_text(query.shape) if query.shape else query.text)
        filters = query.filters
        fetch = limit * 3 if filters.path_glob else limit
        try:
            pairs = self.index.vectors.store.query(vector, fetch, filters)
        except VectorStoreError as exc:
            if is_out_of_space(exc, self.index.dir):  # passing: nothing to rebuild, the same read works later
                line = full_disk_line(self.index.dir)
                return Hits(note=line, problem=f"{line}: answering from keyword and graph until space is freed")
            self.index.vectors.mark_damaged(str(exc))
            return self._unusable(str(exc))
        if filters.path_glob:
            allowed = self.index.catalog.files.ids_matching([i for i, _ in pairs], Filters(path_glob=filters.path_glob))
            pairs = [(i, s) for i, s in pairs if i in allowed]
        pairs = [(i, s) for i, s in pairs if s >= self.min_score][:limit]
        lacking = self.index.vectors.shortfall
        problem = (f"the vector store lacks {lacking} vectors the catalog expects; codesearch index (or a running "
                   "daemon) restores them") if lacking else ""
        return Hits([i for i, _ in pairs], [s for _, s in pairs], problem=problem)

    def _unusable(self, problem: str) -> Hits:
        return Hits(note=problem, problem=f"{problem}: answering from keyword and graph until it is rebuilt "
                                          "(codesearch index, or a running daemon, rebuilds it)")
