"""BM25 over the catalog's FTS5 index, with code-aware query terms."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import ClassVar

from ...analysis.query_shape import keyword_terms
from ...analysis.tokens import indexed
from ...store.catalog import Catalog
from ..query import Query
from ..reindex_cache import ReindexCache
from .retriever import Hits

# bm25 column weights: name, path, signature+docstring, body
COLUMN_WEIGHTS = (6.0, 3.0, 3.0, 1.0)
MAX_QUERY_TERMS = 256  # a long question's first distinct terms are searched (a report: see query_shape)
# FTS5 scores every chunk that holds a query term: in a 1.3-million-chunk monorepo a common word
# ("error") is held by a hundred thousand. Past this many postings in all, a question's chunks
# that hold every term come first (FTS5 reads all the postings but scores only the intersection),
# then those of its rarest terms within the budget (at least one), the common ones counting where
# they name a chunk (its name or signature: a fraction of their postings) while all that is
# scored stays within twice the budget. No repository of the benchmark comes near it; scaled
# down to them, it still costs keyword search (docs/benchmarks.md).
POSTINGS_BUDGET = 90_000


def searched_terms(query: Query) -> list[str]:
    """The index terms a query is searched by: a report's weighted code terms (query_shape), a
    question's first distinct words; those the keyword index holds at all."""
    return [t for t in (keyword_terms(query.shape) if query.shape else query.terms[:MAX_QUERY_TERMS]) if indexed(t)]


class KeywordRetriever:
    """BM25 over FTS5 with code-aware terms; query terms under `min_idf` dropped (0: keep all)."""

    name: ClassVar[str] = "keyword"
    seeds_from: ClassVar[tuple[str, ...]] = ()

    def __init__(self, catalog: Catalog, min_idf: float = 0.0):
        self.catalog = catalog
        self.min_idf = min_idf
        # (chunks, term -> chunks holding it): counted once per reindex
        self._counts: ReindexCache[tuple[int, dict[str, int]]] = ReindexCache(
            catalog, lambda: (catalog.files.chunk_count(), {}), (0, {}))

    def coverage(self) -> float | None:
        return None

    def _current_counts(self) -> tuple[int, dict[str, int]]:
        return self._counts.get()

    def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """Chunks holding each (stemmed) term, kept until the next reindex (counting them reads
        the term's postings)."""
        known = self._current_counts()[1]
        for term in set(terms) - known.keys():
            known[term] = self.catalog.keywords.document_frequency(term)
        return {t: known[t] for t in terms}

    def idf(self, terms: list[str]) -> dict[str, float]:
        """BM25 idf of each (stemmed) term over all chunks."""
        total = self._current_counts()[0] or 1
        return {t: math.log(1 + (total - df + 0.5) / (df + 0.5)) for t, df in self.document_frequencies(terms).items()}

    def within_budget(self, terms: list[str]) -> tuple[list[str], list[str]]:
        """(the terms searched in every column, the terms searched in names and signatures only):
        the rarest in every column while their postings fit POSTINGS_BUDGET (the rarest one that
        some chunk holds always), the next by name while all postings stay within twice it, the
        rest left out."""
        if len(set(terms)) < 2 or self._current_counts()[0] <= POSTINGS_BUDGET:
            return terms, []
        frequency = self.document_frequencies(terms)
        kept: set[str] = set()
        named: list[str] = []
        total = 0
        for term in sorted(set(terms), key=lambda t: (frequency[t], t)):
            if named or (total and total + frequency[term] > POSTINGS_BUDGET):  # one no chunk holds costs nothing
                in_names = self._named_frequency(term)
                if total + in_names > 2 * POSTINGS_BUDGET:
                    break
                named.append(term)
                total += in_names
            else:
                kept.add(term)
                total += frequency[term]
        return [t for t in terms if t in kept], named

    def _named_frequency(self, term: str) -> int:
        """Chunks holding `term` in their name or signature, kept until the next reindex."""
        known = self._current_counts()[1]
        key = "\0named " + term  # (no analysed term has a NUL)
        if key not in known:
            known[key] = self.catalog.keywords.document_frequency(term, named=True)
        return known[key]

    def search(self, query: Query, limit: int, earlier: Mapping[str, Sequence[str]]) -> Hits:
        """A report (long query) is searched by its weighted code terms (query_shape), a
        question by its words."""
        long, filters = query.long, query.filters
        terms = searched_terms(query)
        if not terms:
            return Hits(note="no searchable words")
        if self.min_idf > 0 and len(terms) > 1 and not long:
            idf = self.idf(terms)
            kept = [t for t in terms if idf[t] >= self.min_idf]
            terms = kept or [max(terms, key=lambda t: idf[t])]
        searched, named = self.within_budget(terms)
        distinct = list(dict.fromkeys(terms))
        found: list[tuple[str, float]] = []
        if len(set(searched)) < len(distinct) and not long:  # over the budget: those holding every term first
            frequency = self.document_frequencies(distinct)
            held = [t for t in distinct if frequency[t]]  # (one that no chunk holds would leave none)
            if len(held) > 1:
                found = self.catalog.keywords.search(held, COLUMN_WEIGHTS, filters, limit, every=True)
        if len(found) < limit:
            _add_below(found, self.catalog.keywords.search(searched, COLUMN_WEIGHTS, filters, limit, named=named),
                       limit)
        return Hits([i for i, _ in found], [s for _, s in found])


def _add_below(found: list[tuple[str, float]], more: list[tuple[str, float]], limit: int) -> None:
    """`more` appended to `found` up to `limit`, those already there left out, each scored no
    higher than the last of `found` (the first list's order stands)."""
    seen = {i for i, _ in found}
    floor = min((s for _, s in found), default=None)
    found += [(i, s if floor is None else min(s, floor)) for i, s in more if i not in seen][:limit - len(found)]
