"""The one table of API methods: for each, its name on the wire, the Service method that answers
it, and its request and answer records.

The socket server serves this table unchanged, and so do the HTTP, MCP and LSP front-ends:
adding a method here adds it everywhere. The socket client (`daemon.client.DaemonClient`) is made
from it too, and reads answers back into typed records. Records are named here, not imported:
a client that only searches builds no other record class (each costs about a millisecond to make).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..wire import Record
    from .protocol import Service


@dataclass(frozen=True)
class Method:
    name: str  # on the wire
    service: str  # the Service method that answers it
    request_record: str  # the records' names: search's own in `search.requests`, the rest in `api.types`
    answer_record: str
    summary: str
    # request fields this name fixes: one Service method may be served under several names
    fixed: tuple[tuple[str, str], ...] = ()
    # the service writes the answer's JSON text itself (its method `<service>_json`), where
    # records would cost too much
    writes_json: bool = False

    @property
    def request(self) -> type[Record]:
        return record(self.request_record)

    @property
    def answer(self) -> type[Record]:
        return record(self.answer_record)

    def call(self, service: Service, request: Record) -> Record:
        """The service's answer to a request of this method."""
        if not self.fixed:
            return getattr(service, self.service)(*self._arguments(request))
        return getattr(service, self.service)(replace(request, **dict(self.fixed)))  # type: ignore[type-var]

    def write(self, service: Service, request: Record) -> Iterable[bytes]:
        """The answer's JSON text in UTF-8, in blocks to be written in order."""
        if self.writes_json:
            return getattr(service, self.service + "_json")(*self._arguments(request))
        return (json.dumps(self.call(service, request).to_dict(), ensure_ascii=False).encode(),)

    def _arguments(self, request: Record) -> tuple[Record, ...]:
        return () if self.request_record == "Empty" else (request,)


METHODS: dict[str, Method] = {m.name: m for m in (
    Method("search", "search", "SearchRequest", "SearchAnswer",
           "Search the index by words, a name or a relation; the `query --json` answer."),
    Method("callers", "relations", "RelationsRequest", "RelationsAnswer",
           "Who calls the definitions named `name`.", fixed=(("direction", "callers"),)),
    Method("callees", "relations", "RelationsRequest", "RelationsAnswer",
           "What the definitions named `name` call.", fixed=(("direction", "callees"),)),
    Method("grep", "grep", "GrepRequest", "GrepAnswer",
           "Exact text or a regular expression (ripgrep), each match placed in its chunk and ranked by structure.",
           writes_json=True),
    Method("impact", "impact", "ImpactRequest", "ImpactAnswer",
           "What may break if `name` changes: its transitive callers, grouped by file."),
    Method("definition", "definitions", "DefinitionRequest", "DefinitionAnswer",
           "Where `name` is defined, with signature and docstring."),
    Method("read", "read", "ReadRequest", "ReadAnswer",
           "Source lines of a file inside the repository, or of one chunk by id."),
    Method("symbols", "symbols", "SymbolsRequest", "SymbolsAnswer",
           "Definitions whose name contains `query` (an editor's symbol search), then the hybrid ranking."),
    Method("references", "references", "ReferencesRequest", "ReferencesAnswer",
           "The recorded call sites of `name`."),
    Method("index", "index", "IndexRequest", "IndexAnswer", "Reindex these paths (or everything) now and wait for it."),
    Method("stats", "stats", "Empty", "Stats", "What the index holds."),
    Method("status", "status", "Empty", "Status", "What the daemon is doing."),
    Method("health", "health", "Empty", "Health", "Whether the daemon is up and ready."),
    Method("shutdown", "shutdown", "Empty", "Ok", "Stop the daemon."),
)}

# the names a Service answers to: its methods, and `<method>_json` where it writes the JSON itself
SERVICE_METHODS = frozenset({m.service for m in METHODS.values()}
                            | {m.service + "_json" for m in METHODS.values() if m.writes_json})


@cache
def record(name: str) -> type[Record]:
    """The record class of that name: search's own from `search.requests` (a client that only
    searches imports no more), the rest from `api.types`."""
    from ..search import requests
    found = getattr(requests, name, None)
    if found is None:
        from . import types
        found = getattr(types, name)
    return found


def method_for(service_method: str, request: Record | None) -> Method:
    """The method that carries a call of the Service method `service_method` with this request
    (of `relations`: the one its direction names). LookupError when no method does."""
    base = service_method.removesuffix("_json")
    for method in METHODS.values():
        if method.service == base and (method.writes_json or base == service_method) \
                and all(getattr(request, field) == value for field, value in method.fixed):
            return method
    raise LookupError(service_method)


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
    return method.write(service, method.request.from_dict(params))


def _method(name: str) -> Method:
    method = METHODS.get(name)
    if method is None:
        raise UnknownMethod(f"unknown method {name!r}")
    return method
