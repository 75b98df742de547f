"""The one table of API methods: name -> request type, answer type, and the service call.

The socket server serves this table unchanged, and so do the HTTP, MCP and LSP front-ends:
adding a method here adds it everywhere. Clients use the same table to read answers back into
typed records.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from ..wire import Record
from .protocol import Service
from .types import (
    DefinitionAnswer,
    DefinitionRequest,
    Empty,
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


@dataclass(frozen=True)
class Method:
    name: str
    request: type[Record]
    answer: type[Record]
    call: Callable[[Service, Any], Record]
    summary: str
    # the answer's JSON text (UTF-8, in blocks to be written in order) written by the service
    # itself, where records would cost too much
    write: Callable[[Service, Any], Iterable[bytes]] | None = None


METHODS: dict[str, Method] = {m.name: m for m in (
    Method("search", SearchRequest, SearchAnswer, lambda s, r: s.search(r),
           "Search the index by words, a name or a relation; the `query --json` answer."),
    Method("callers", RelationsRequest, RelationsAnswer,
           lambda s, r: s.relations(replace(r, direction="callers")), "Who calls the definitions named `name`."),
    Method("callees", RelationsRequest, RelationsAnswer,
           lambda s, r: s.relations(replace(r, direction="callees")), "What the definitions named `name` call."),
    Method("grep", GrepRequest, GrepAnswer, lambda s, r: s.grep(r),
           "Exact text or a regular expression (ripgrep), each match placed in its chunk and ranked by structure.",
           write=lambda s, r: s.grep_json(r)),
    Method("impact", ImpactRequest, ImpactAnswer, lambda s, r: s.impact(r),
           "What may break if `name` changes: its transitive callers, grouped by file."),
    Method("definition", DefinitionRequest, DefinitionAnswer, lambda s, r: s.definitions(r),
           "Where `name` is defined, with signature and docstring."),
    Method("read", ReadRequest, ReadAnswer, lambda s, r: s.read(r),
           "Source lines of a file inside the repository, or of one chunk by id."),
    Method("symbols", SymbolsRequest, SymbolsAnswer, lambda s, r: s.symbols(r),
           "Definitions whose name contains `query` (an editor's symbol search), then the hybrid ranking."),
    Method("references", ReferencesRequest, ReferencesAnswer, lambda s, r: s.references(r),
           "The recorded call sites of `name`."),
    Method("index", IndexRequest, IndexAnswer, lambda s, r: s.index(r),
           "Reindex these paths (or everything) now and wait for it."),
    Method("stats", Empty, Stats, lambda s, r: s.stats(), "What the index holds."),
    Method("status", Empty, Status, lambda s, r: s.status(), "What the daemon is doing."),
    Method("health", Empty, Health, lambda s, r: s.health(), "Whether the daemon is up and ready."),
    Method("shutdown", Empty, Ok, lambda s, r: s.shutdown(), "Stop the daemon."),
)}


class UnknownMethod(LookupError):
    """No method of that name."""


def call(service: Service, name: str, params: dict) -> dict:
    """Serve one request: read the params, call the service, write the answer.
    Raises UnknownMethod, or RequestError for params the method cannot take."""
    method = _method(name)
    return method.call(service, method.request.from_dict(params)).to_dict()


def call_json(service: Service, name: str, params: dict) -> Iterable[bytes]:
    """`json.dumps(call(service, name, params), ensure_ascii=False)` in UTF-8, in blocks to be
    written in order: written by the service itself where the method says it can (the request is
    served before this returns; only the writing of its answer may be left)."""
    method = _method(name)
    request = method.request.from_dict(params)
    if method.write is not None:
        return method.write(service, request)
    return (json.dumps(method.call(service, request).to_dict(), ensure_ascii=False).encode(),)


def _method(name: str) -> Method:
    method = METHODS.get(name)
    if method is None:
        raise UnknownMethod(f"unknown method {name!r}")
    return method
