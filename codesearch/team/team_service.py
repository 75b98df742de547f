"""The team store as a `Service`: what the HTTP front-end (and the CLI) call, across every
repository and branch in the store, narrowed by the request's `repo` and `branch` filters.

Methods that need the files themselves (read, grep) or a daemon of one repository (index,
status) are not served: indexing is the stateless indexers' work (`codesearch index --store`)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from ..api import types as t
from ..api.protocol import ServiceUnavailable
from ..config import Settings
from ..embedding.base import Embedder
from ..search.present import definition_of, impact_of
from ..search.requests import (
    DefinitionAnswer,
    DefinitionRequest,
    ImpactAnswer,
    ImpactRequest,
    RelationsAnswer,
    RelationsRequest,
    SearchAnswer,
    SearchRequest,
)
from .milvus_store import EDGES, MilvusStore
from .team_search import Scope, TeamSearcher, _chunk
from .uri import StoreUri


class TeamService:
    """`embedder`: the model for vector search (None: keyword search alone)."""

    def __init__(self, store: MilvusStore, settings: Settings, embedder: Embedder | None,
                 scope: Scope | None = None, http: str | None = None):
        self.store = store
        self.searcher = TeamSearcher(store, settings, embedder)
        self.embedder = embedder
        self.scope = scope or Scope()
        self.http = http
        self.started = time.time()
        self.stopping = threading.Event()

    def _scope(self, filters) -> Scope:
        return Scope(filters.repo or self.scope.repo, filters.branch or self.scope.branch)

    def search(self, request: SearchRequest) -> SearchAnswer:
        return self.searcher.search(request, self._scope(request.filters))

    def relations(self, request: RelationsRequest) -> RelationsAnswer:
        return self.searcher.relations(request, self._scope(request.filters))

    def impact(self, request: ImpactRequest) -> ImpactAnswer:
        return impact_of(self.relations(replace(request, direction="callers")), request.depth)

    def definitions(self, request: DefinitionRequest) -> DefinitionAnswer:
        started = time.perf_counter()
        rows = self.searcher.definitions_named(self.searcher.states(self.scope), request.name)
        rows.sort(key=lambda r: (r["qualified_name"] != request.name, r["repo"], r["path"], r["start_line"]))
        found = tuple(definition_of(_chunk(r)) for r in rows[:request.limit])
        return DefinitionAnswer(name=request.name, definitions=found,
                                timing_ms={"total": round((time.perf_counter() - started) * 1000, 2)},
                                note=None if found else f"no definition named {request.name!r} in the team store")

    def read(self, request: t.ReadRequest) -> t.ReadAnswer:
        raise ServiceUnavailable("a team store does not serve files; read them from the repository")

    def grep(self, request: t.GrepRequest) -> t.GrepAnswer:
        raise ServiceUnavailable("a team store does not serve grep (it holds chunks, not files)")

    def grep_json(self, request: t.GrepRequest) -> Iterable[bytes]:
        return self.grep(request)  # type: ignore[return-value]

    def symbols(self, request: t.SymbolsRequest) -> t.SymbolsAnswer:
        raise ServiceUnavailable("a team store does not serve symbols; use definition or search")

    def references(self, request: t.ReferencesRequest) -> t.ReferencesAnswer:
        raise ServiceUnavailable("a team store does not serve references; use callers")

    def index(self, request: t.IndexRequest) -> t.IndexAnswer:
        raise ServiceUnavailable("a team store is written by indexers: codesearch index REPO --store URI")

    def status(self) -> t.Status:
        raise ServiceUnavailable("a team store has no daemon status; ask stats or health")

    def stats(self) -> t.Stats:
        states = self.searcher.states(self.scope)
        uri: StoreUri = self.store.uri
        size = Path(uri.address).stat().st_size if uri.lite and os.path.exists(uri.address) else 0
        chunks, vectors = sum(s.chunks for s in states), sum(s.vectors for s in states)
        return t.Stats(files=sum(s.files for s in states), chunks=chunks, vectors=vectors,
                       edges=self.store.counts().get(EDGES, 0), skipped={}, languages={},
                       chunks_without_vectors=chunks - vectors, index_bytes=size, source_bytes=0,
                       index_dir=str(uri), root=str(uri), model=states[0].embedder if states else "",
                       last_index_time=max((s.updated for s in states), default=None), last_index_seconds=None)

    def health(self) -> t.Health:
        return t.Health(ok=True, pid=os.getpid(), ready=True, root=str(self.store.uri), http=self.http)

    def shutdown(self) -> t.Ok:
        self.stopping.set()
        return t.Ok()
