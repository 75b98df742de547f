"""The service every front-end talks to, whatever carries the request: a running daemon (in its
process), a client of its socket, or this process on its own."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from .types import (
    DefinitionAnswer,
    DefinitionRequest,
    GrepAnswer,
    GrepRequest,
    Health,
    ImpactAnswer,
    ImpactRequest,
    IndexAnswer,
    IndexRequest,
    Ok,
    ReadAnswer,
    ReadRequest,
    ReferencesAnswer,
    ReferencesRequest,
    RelationsAnswer,
    RelationsRequest,
    SearchAnswer,
    SearchRequest,
    Stats,
    Status,
    SymbolsAnswer,
    SymbolsRequest,
)


class ServiceUnavailable(RuntimeError):
    """The method needs something this service does not have (e.g. status without a daemon)."""


class Service(Protocol):
    def search(self, request: SearchRequest) -> SearchAnswer: ...

    def relations(self, request: RelationsRequest) -> RelationsAnswer: ...

    def impact(self, request: ImpactRequest) -> ImpactAnswer: ...

    def definitions(self, request: DefinitionRequest) -> DefinitionAnswer: ...

    def read(self, request: ReadRequest) -> ReadAnswer: ...

    def grep(self, request: GrepRequest) -> GrepAnswer: ...

    def grep_json(self, request: GrepRequest) -> Iterable[bytes]:
        """`json.dumps(self.grep(request).to_dict(), ensure_ascii=False)` in UTF-8, in blocks to
        be written in order (joined, the whole text), written faster where it can be (the
        searcher's: a block at a time as it is asked for; a daemon's: the reply's bytes as they came)."""
        ...

    def symbols(self, request: SymbolsRequest) -> SymbolsAnswer: ...

    def references(self, request: ReferencesRequest) -> ReferencesAnswer: ...

    def index(self, request: IndexRequest) -> IndexAnswer: ...

    def stats(self) -> Stats: ...

    def status(self) -> Status: ...

    def health(self) -> Health: ...

    def shutdown(self) -> Ok: ...
