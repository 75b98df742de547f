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
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..filters import matches_no_file, unmatched_path_line
from ..indexing.index import Index
from ..search.early_answer import early_answer, first_index_unfinished
from ..search.searcher import Searcher
from .admission import Admission
from .protocol import ServiceUnavailable
from .reading import read_source

if TYPE_CHECKING:
    from . import types as t

WITHOUT_VECTORS = ("keyword", "graph")
FIRST_INDEX_NOTE = "the index is being built for the first time, and later queries use it"


@dataclass(frozen=True)
class NoModelYet:
    """Why a service has no model yet, and how far that reaches.

    `every_search`: the vectors are being made elsewhere (the daemon a first query started), so
    every mode answers from keyword and graph, and symbols keep their ranking; otherwise (the
    model is still loading) only the modes that embed the query change (vector mode then runs
    no retriever), and symbols are ranked without vectors. `wait`: a read that would embed the
    query first waits for the model this way (true: it loaded, and the rule is left aside)."""

    note: str
    every_search: bool = False
    wait: Callable[[], bool] | None = field(default=None, compare=False)

    def search(self, request: t.SearchRequest) -> t.SearchRequest | None:
        """The request answered without a model, or None when the rule leaves it alone."""
        if self.every_search:
            return replace(request, retrievers=WITHOUT_VECTORS)
        if request.mode not in ("hybrid", "vector") or self._model_came():
            return None
        return replace(request, retrievers=WITHOUT_VECTORS if request.mode == "hybrid" else ())

    def symbols_retrievers(self) -> tuple[str, ...] | None:
        return None if self.every_search or self._model_came() else WITHOUT_VECTORS

    def _model_came(self) -> bool:
        return self.wait is not None and self.wait()

    def mark(self, answer: t.SearchAnswer, share: float) -> t.SearchAnswer:
        """The answer marked partial, with the share of vectors the index holds (not whether a
        model is loaded)."""
        return replace(answer, partial=True, embedded_share=share, note=self.note)


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
    _indexed_once = False  # the index finished a run once: searches read it from then on

    @property
    def searcher(self) -> Searcher:
        if self._searcher is None:
            self._searcher = self.open_searcher()
        return self._searcher

    def open_searcher(self) -> Searcher:
        return Searcher(self.reader_index)

    def vector_coverage(self) -> float | None:
        """The share of the chunks that get a vector which have one now, as vector search sees
        it (None: no chunk gets one)."""
        return self.searcher.retriever("vector").coverage()

    def embedded_share(self) -> float:
        """`vector_coverage` as answers, status and clients show it (1.0 when no chunk gets a
        vector): counted in the index, the same whether or not a model is loaded."""
        coverage = self.vector_coverage()
        return 1.0 if coverage is None else round(coverage, 4)

    def first_index_building(self) -> bool:
        """Whether the index has never finished a run: its keyword index and graph then hold only
        the files written so far, so searches are answered from ripgrep instead (early_answer)."""
        if not self._indexed_once:
            self._indexed_once = not first_index_unfinished(self.reader_index)
        return not self._indexed_once

    def search(self, request: t.SearchRequest) -> t.SearchAnswer:
        self.serving.check()
        if self.first_index_building():
            index = self.reader_index
            with self.serving.slot():
                answer = early_answer(index.root, index.dir, index.settings, request, FIRST_INDEX_NOTE)
            return self.finished(answer)
        rule = self.serving.no_model()
        asked = rule.search(request) if rule is not None else None
        with self.serving.slot() as alone:
            answer = self.searcher.search(asked or request, side_by_side=alone)
        if rule is not None and asked is not None:
            answer = rule.mark(answer, self.embedded_share())
        return self.finished(self._path_note(request, answer))

    def _path_note(self, request: t.SearchRequest, answer: t.SearchAnswer) -> t.SearchAnswer:
        """An empty answer whose path filter matched no file in the tree says so (every
        front-end: socket, HTTP, MCP, LSP), rather than reading as "nothing there matched". The
        catalog is asked first; the tree is walked only when no indexed file matches (the filter
        may name files the index leaves out)."""
        glob = request.filters.path_glob
        if answer.results or answer.note or not glob:
            return answer
        index = self.reader_index
        if index.catalog.files.any_path_matching(glob) or not matches_no_file(str(index.root), glob):
            return answer
        return replace(answer, note=unmatched_path_line(glob))

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
