"""BM25 over the catalog's FTS5 index, with code-aware query terms."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import ClassVar

from ...analysis.query_shape import is_long_query, keyword_terms, shape_of
from ...analysis.tokens import query_terms
from ...store.catalog import Catalog
from ...vocabulary import Filters
from . import Hits

# bm25 column weights: name, path, signature+docstring, body
COLUMN_WEIGHTS = (6.0, 3.0, 3.0, 1.0)
MAX_QUERY_TERMS = 256  # a long question's first distinct terms are searched (a report: see query_shape)


class KeywordRetriever:
    """BM25 over FTS5 with code-aware terms; query terms under `min_idf` dropped (0: keep all)."""

    name: ClassVar[str] = "keyword"
    seeds_from: ClassVar[tuple[str, ...]] = ()

    def __init__(self, catalog: Catalog, min_idf: float = 0.0):
        self.catalog = catalog
        self.min_idf = min_idf

    def coverage(self) -> float | None:
        return None

    def idf(self, terms: list[str]) -> dict[str, float]:
        """BM25 idf of each (stemmed) term over all chunks."""
        total = self.catalog.chunk_count() or 1
        out = {}
        for term in terms:
            df = self.catalog.document_frequency(term)
            out[term] = math.log(1 + (total - df + 0.5) / (df + 0.5))
        return out

    def search(self, query: str, limit: int, filters: Filters, earlier: Mapping[str, Sequence[str]]) -> Hits:
        """A report (long query) is searched by its weighted code terms (query_shape), a
        question by its words."""
        long = is_long_query(query)
        terms = keyword_terms(shape_of(query)) if long else query_terms(query)[:MAX_QUERY_TERMS]
        if not terms:
            return Hits(note="no searchable words")
        if self.min_idf > 0 and len(terms) > 1 and not long:
            idf = self.idf(terms)
            kept = [t for t in terms if idf[t] >= self.min_idf]
            terms = kept or [max(terms, key=lambda t: idf[t])]
        found = self.catalog.keyword_search(terms, COLUMN_WEIGHTS, filters, limit)
        return Hits([i for i, _ in found], [s for _, s in found])
