"""The service every front-end talks to, whatever carries the request: a running daemon (in its
process), a client of its socket, or this process on its own. Its methods are those the method
table (`methods`) names; the records are named here for the type checker alone, so that a client
that needs only `ServiceUnavailable` builds none."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterable

    from . import types as t


class ServiceUnavailable(RuntimeError):
    """The method needs something this service does not have (e.g. status without a daemon)."""


class Service(Protocol):
    def search(self, request: t.SearchRequest) -> t.SearchAnswer: ...

    def relations(self, request: t.RelationsRequest) -> t.RelationsAnswer: ...

    def impact(self, request: t.ImpactRequest) -> t.ImpactAnswer: ...

    def definitions(self, request: t.DefinitionRequest) -> t.DefinitionAnswer: ...

    def read(self, request: t.ReadRequest) -> t.ReadAnswer: ...

    def grep(self, request: t.GrepRequest) -> t.GrepAnswer: ...

    def grep_json(self, request: t.GrepRequest) -> Iterable[bytes]:
        """`json.dumps(self.grep(request).to_dict(), ensure_ascii=False)` in UTF-8, in blocks to
        be written in order (joined, the whole text), written faster where it can be (the
        searcher's: a block at a time as it is asked for; a daemon's: the reply's bytes as they came)."""
        ...

    def symbols(self, request: t.SymbolsRequest) -> t.SymbolsAnswer: ...

    def references(self, request: t.ReferencesRequest) -> t.ReferencesAnswer: ...

    def index(self, request: t.IndexRequest) -> t.IndexAnswer: ...

    def stats(self) -> t.Stats: ...

    def status(self) -> t.Status: ...

    def health(self) -> t.Health: ...

    def shutdown(self) -> t.Ok: ...
