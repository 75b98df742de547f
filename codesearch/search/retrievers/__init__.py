"""The retrievers: independent ways of turning a query into a ranked list of chunk ids.

Each one is a module here and one row of `RETRIEVERS`; which of them a search runs comes from
its mode (`model.RETRIEVERS_OF_MODE`). The searcher runs them, fuses their lists with weighted
RRF and ranks the result; it knows nothing else about any of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Protocol

from ...vocabulary import Filters

if TYPE_CHECKING:
    from ...indexing.index import Index
    from ...store.edges import CallGraph


@dataclass
class Hits:
    """A retriever's answer: chunk ids, best first, their scores, and a note for --explain."""

    ids: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    note: str = ""
    problem: str = ""  # why this retriever could not search at all: told to the user in the answer


@dataclass(frozen=True)
class SearchContext:
    """What retrievers are built from: the index (catalog, vectors, embedder, settings) and its
    call graph."""

    index: Index
    graph: CallGraph


class Retriever(Protocol):
    name: ClassVar[str]
    # retrievers whose lists this one starts from: it runs after them and is handed their lists
    seeds_from: ClassVar[tuple[str, ...]]

    def coverage(self) -> float | None:
        """The share of the index this retriever can find now (None: all of it)."""

    def search(self, query: str, limit: int, filters: Filters, earlier: Mapping[str, Sequence[str]]) -> Hits:
        """At most `limit` chunk ids, best first, that pass `filters`; `earlier` holds the lists
        of the retrievers named in `seeds_from` that ran."""


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
