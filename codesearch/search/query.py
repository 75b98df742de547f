"""The query as every stage of a search reads it: the text and what is derived from it, parsed
once by the searcher and handed to the retrievers and the ranking, which never parse the text
again."""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.query_shape import QueryShape, exact_phrases, is_long_query, pasted_messages, shape_of
from ..analysis.tokens import looks_like_symbol, query_terms
from ..filters import Filters


@dataclass(frozen=True)
class Query:
    """`long`: a report (a bug report, a pasted trace) rather than a question; only a report has
    a `shape` (its files, frames, identifiers and messages), which its retrievers and ranking
    weigh instead of its words."""

    text: str  # stripped
    mode: str  # hybrid, vector, keyword or graph (vocabulary.MODES)
    filters: Filters
    long: bool
    shape: QueryShape | None
    terms: tuple[str, ...]  # the code-aware BM25 terms of its words (analysis/tokens.py)
    symbol: bool  # a bare name (`parse_config`, `Inventory.add_item`)
    phrases: tuple[str, ...]  # its text in runs of index terms, matched word for word (query_shape)
    messages: tuple[str, ...]  # what a message template may have produced, normalized (query_shape)

    @classmethod
    def parse(cls, text: str, mode: str = "hybrid", filters: Filters | None = None) -> Query:
        text = text.strip()
        long = is_long_query(text)
        shape = shape_of(text) if long else None
        symbol = looks_like_symbol(text)
        return cls(text=text, mode=mode, filters=filters or Filters(), long=long, shape=shape,
                   terms=tuple(query_terms(text)), symbol=symbol, phrases=exact_phrases(text, shape),
                   messages=pasted_messages(text, shape, symbol))
