"""The retrievers: independent ways of turning a query into a ranked list of chunk ids.

Each one is a module here and one row of `RETRIEVERS`; which of them a search runs comes from
its mode (`vocabulary.RETRIEVERS_OF_MODE`). The searcher runs them, fuses their lists with weighted
RRF and ranks the result; it knows nothing else about any of them.
"""

from __future__ import annotations

from collections.abc import Callable

from .retriever import Retriever, SearchContext


def _keyword(context: SearchContext) -> Retriever:
    from .keyword import KeywordRetriever
    return KeywordRetriever(context.index.catalog, context.index.settings.min_idf)


def _vector(context: SearchContext) -> Retriever:
    from .vector import VectorRetriever
    return VectorRetriever(context.index, context.index.settings.min_semantic_score)


def _graph(context: SearchContext) -> Retriever:
    from .graph import GraphRetriever
    return GraphRetriever(context.index.catalog, context.graph)


# name -> how to build it (imports stay lazy: a keyword-only search never loads numpy)
RETRIEVERS: dict[str, Callable[[SearchContext], Retriever]] = {
    "vector": _vector, "keyword": _keyword, "graph": _graph}
