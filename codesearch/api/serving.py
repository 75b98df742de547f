"""One repository's service, written once: the searcher's methods behind the rules every service
of an index applies before it answers (the daemon's and the one in this process alike).

The rules, in one wrapper (`Serving`): the service is told it was asked (`touch`), refuses while it
cannot answer (a catalog being rebuilt: ServiceUnavailable), runs reads inside an admission slot
where it has one, and, while it has no model to embed a query with, answers searches from keyword
and graph alone, marked partial with a note.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..indexing.index import Index
from ..search.searcher import Searcher
from .admission import Admission
from .protocol import ServiceUnavailable
from .reading import read_source

if TYPE_CHECKING:
    from . import types as t

WITHOUT_VECTORS = ("keyword", "graph")


@dataclass(frozen=True)
class NoModelYet:
    """Why a service has no model yet, and how far that reaches.

    `every_search`: the vectors are being made elsewhere (the daemon a first query started), so
    every mode answers from keyword and graph, and symbols keep their ranking; otherwise (the
    model is still loading) only the modes that embed the query change (vector mode then runs
    no retriever), and symbols are ranked without vectors."""

    note: str
    every_search: bool = False

    def search(self, request: t.SearchRequest) -> t.SearchRequest | None:
        """The request answered without a model, or None when the rule leaves it alone."""
        if self.every_search:
            return replace(request, retrievers=WITHOUT_VECTORS)
        if request.mode == "hybrid":
            return replace(request, retrievers=WITHOUT_VECTORS)
        if request.mode == "vector":
            return replace(request, retrievers=())
        return None

    def symbols_retrievers(self) -> tuple[str, ...] | None:
        return None if self.every_search else WITHOUT_VECTORS

    def mark(self, answer: t.SearchAnswer) -> t.SearchAnswer:
        return replace(answer, partial=True, embedded_share=answer.embedded_share or 0.0, note=self.note)


def _nothing() -> None:
    return None


class Serving:
    """The rules a service applies before it answers from its index.

    `touch`: told of every request; `unavailable`: why the service cannot answer now (None: it
    can); `admission`: the slots reads run in (None: no limit); `no_model`: the rule while there
    is no model (None: there is one)."""

    def __init__(self, touch: Callable[[], None] = _nothing, unavailable: Callable[[], str | None] = _nothing,
                 admission: Admission | None = None, no_model: Callable[[], NoModelYet | None] = _nothing):
        self.touch = touch
        self.unavailable = unavailable
        self.admission = admission
        self.no_model = no_model

    def check(self) -> None:
        """Told of the request; ServiceUnavailable when it cannot be answered now."""
        self.touch()
        problem = self.unavailable()
        if problem:
            raise ServiceUnavailable(problem)

    @contextmanager
    def slot(self) -> Iterator[bool]:
        """Inside an admission slot; yields whether the read runs alone (and may spread over
        several threads itself)."""
        if self.admission is None:
            yield True
            return
        with self.admission.slot() as alone:
            yield alone

    @contextmanager
    def reading(self) -> Iterator[bool]:
        """Checked, then inside an admission slot."""
        self.check()
        with self.slot() as alone:
            yield alone


class IndexService:
    """The API's methods that read one index, each behind `serving`; the rest of the Service
    (index, stats, status, health, shutdown) is the subclass's own."""

    serving: Serving
    reader_index: Index  # the index reads answer from
    _searcher: Searcher | None = None

    @property
    def searcher(self) -> Searcher:
        if self._searcher is None:
            self._searcher = self.open_searcher()
        return self._searcher

    def open_searcher(self) -> Searcher:
        return Searcher(self.reader_index)

    def search(self, request: t.SearchRequest) -> t.SearchAnswer:
        self.serving.check()
        rule = self.serving.no_model()
        asked = rule.search(request) if rule is not None else None
        with self.serving.slot() as alone:
            answer = self.searcher.search(asked or request, side_by_side=alone)
        if rule is not None and asked is not None:
            answer = rule.mark(answer)
        return self.finished(answer)

    def finished(self, answer: t.SearchAnswer) -> t.SearchAnswer:
        """A search's answer as the service hands it out (the daemon marks what is stale)."""
        return answer

    def relations(self, request: t.RelationsRequest) -> t.RelationsAnswer:
        with self.serving.reading():
            return self.searcher.relations(request)

    def impact(self, request: t.ImpactRequest) -> t.ImpactAnswer:
        with self.serving.reading():
            return self.searcher.impact(request)

    def definitions(self, request: t.DefinitionRequest) -> t.DefinitionAnswer:
        with self.serving.reading():
            return self.searcher.definitions(request)

    def read(self, request: t.ReadRequest) -> t.ReadAnswer:
        self.serving.check()
        return read_source(self.reader_index, request)

    def grep(self, request: t.GrepRequest) -> t.GrepAnswer:
        with self.serving.reading():
            return self.searcher.grep(request)

    def grep_json(self, request: t.GrepRequest) -> Iterable[bytes]:
        with self.serving.reading():
            return self.searcher.grep_json(request)

    def symbols(self, request: t.SymbolsRequest) -> t.SymbolsAnswer:
        self.serving.check()
        rule = self.serving.no_model()
        retrievers = rule.symbols_retrievers() if rule is not None else None
        with self.serving.slot():
            return self.searcher.symbols(request, retrievers=retrievers)

    def references(self, request: t.ReferencesRequest) -> t.ReferencesAnswer:
        with self.serving.reading():
            return self.searcher.references(request)
