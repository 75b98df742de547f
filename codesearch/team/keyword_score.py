"""The team store's keyword field, written and read: the local catalog's keyword columns in one
Milvus BM25 field, and the local catalog's keyword score over its candidates (SQLite FTS5's bm25
with the catalog's column weights and its idf over the chunks of the branches searched; its
phrase matches).

Milvus's BM25 sees one field (the columns repeated by weight), so a chunk's length counts its
name six times, and its statistics are the whole collection's (every repository's). It serves a
deeper candidate list, which is scored here as the local index scores it: each candidate's
columns read back from its keyword field, the statistics (chunks, their terms, how many hold
each term) those of the live chunks of the branches searched.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..search.retrievers.keyword import COLUMN_WEIGHTS
from .milvus_store import MAX_TEXT_BYTES, cut
from .stemming import stemmed

# the local catalog's bm25 column weights (name, path, signature+docstring, body): Milvus has one
# BM25 field per function, so each column's terms are repeated as often as its weight
COLUMN_REPEATS = tuple(round(w) for w in COLUMN_WEIGHTS)
# the keyword field's columns are parted by this, which Milvus's analyzer drops
COLUMN_SEPARATOR = " | "
K1 = 1.2  # FTS5's bm25 parameters
B = 0.75
MIN_IDF = 1e-6  # FTS5's idf of a term held by more than half the chunks


@dataclass(frozen=True)
class Collection:
    """What bm25 reads of the chunks searched: how many, their mean length in terms, and how many
    hold each term."""

    chunks: int
    terms: int
    holding: Mapping[str, int]

    @classmethod
    def of(cls, keyword_fields: Iterable[str]) -> Collection:
        """The statistics of the chunks whose keyword fields these are."""
        chunks = terms = 0
        holding: Counter[str] = Counter()
        for keywords in keyword_fields:
            columns = columns_of(keywords)
            chunks += 1
            terms += sum(len(c) for c in columns)
            holding.update({t for c in columns for t in c})
        return cls(chunks, terms, holding)

    @classmethod
    def joined(cls, parts: Sequence[Collection], terms: Iterable[str]) -> Collection:
        """The statistics of several branches' chunks at once, for `terms`."""
        wanted = set(terms)
        return cls(sum(p.chunks for p in parts), sum(p.terms for p in parts),
                   {t: sum(p.holding.get(t, 0) for p in parts) for t in wanted})

    @property
    def mean_length(self) -> float:
        return self.terms / self.chunks if self.chunks else 1.0

    def idf(self, term: str) -> float:
        n = self.holding.get(term, 0)
        idf = math.log((self.chunks - n + 0.5) / (n + 0.5)) if self.chunks else 0.0
        return idf if idf > 0 else MIN_IDF


def keyword_text(columns: Sequence[str]) -> str:
    """The chunk's keyword field from its keyword-index columns (analysis/rows.py): each column's
    Porter-stemmed terms, repeated by its weight, the columns parted by COLUMN_SEPARATOR."""
    stems = [stemmed(c) for c in columns]
    return cut(COLUMN_SEPARATOR.join(" ".join([terms] * n) if terms else "" for terms, n in zip(stems, COLUMN_REPEATS)),
               MAX_TEXT_BYTES)


def columns_of(keywords: str) -> list[list[str]]:
    """A keyword field's columns as terms, each once (the field repeats each by its weight)."""
    parts = keywords.split(COLUMN_SEPARATOR.strip())
    out = []
    for i, n in enumerate(COLUMN_REPEATS):
        terms = parts[i].split() if i < len(parts) else []
        out.append(terms[:len(terms) // n] if n > 1 else terms)
    return out


def bm25(terms: Sequence[str], columns: Sequence[Sequence[str]], weights: Sequence[float],
         collection: Collection) -> float:
    """FTS5's bm25 (higher is better) of a chunk for a query of `terms`, each a phrase of its own
    (a repeated term counts again): per term, its idf times its column-weighted frequency,
    saturated by the chunk's length (all columns, unweighted) against the mean."""
    length = sum(len(c) for c in columns)
    norm = K1 * (1 - B + B * length / collection.mean_length)
    score = 0.0
    for term in terms:
        frequency = sum(w * column.count(term) for w, column in zip(weights, columns))
        if frequency:
            score += collection.idf(term) * frequency * (K1 + 1) / (frequency + norm)
    return score


def phrases_held(phrases: Sequence[Sequence[str]], columns: Sequence[Sequence[str]]) -> int:
    """How many of `phrases` (each its terms in order) one column holds word for word, as an
    FTS5 phrase query matches."""
    texts = [f" {' '.join(c)} " for c in columns]
    return sum(any(f" {' '.join(p)} " in t for t in texts) for p in phrases if p)
