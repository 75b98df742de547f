"""What every retriever is: the Retriever protocol, what it is built from (SearchContext) and
what it answers (Hits)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Protocol

if TYPE_CHECKING:
    from ...indexing.index import Index
    from ...store.call_graph import CallGraph
    from ..query import Query


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

    def search(self, query: Query, limit: int, earlier: Mapping[str, Sequence[str]]) -> Hits:
        """At most `limit` chunk ids, best first, that pass the query's filters; `earlier` holds
        the lists of the retrievers named in `seeds_from` that ran."""
