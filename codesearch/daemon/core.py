"""The daemon's work: keep one index fresh while answering queries.

Three kinds of threads share the index, each with its own catalog connection (SQLite WAL: readers
never wait for writers; writers take turns):
- the writer applies batches of changed paths to the catalog, keyword index and graph, so a
  change is searchable in well under a second;
- the embedder gives vectors to what lacks them, most useful chunks first, in small slices; it
  alone talks to Chroma for writing, and never holds up the writer;
- request threads answer queries side by side, each through its own catalog connection; until
  the model is loaded, queries are answered from the keyword index and the graph, marked
  partial (over an index that holds vectors, only once a short wait for the model is over).

The daemon is the API's `Service`: the socket server (and every other front-end) calls it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import replace
from pathlib import Path

from ..api.admission import Admission
from ..api.local import confined_paths, index_answer
from ..api.protocol import ServiceUnavailable
from ..api.serving import IndexService, NoModelYet, Serving
from ..api.stats import collect_stats
from ..api.types import Health, IndexAnswer, IndexRequest, Ok, SearchAnswer, Stats, Status
from ..config import Settings
from ..embedding.backends import SharedEmbedder
from ..embedding.worker import daemon_embedder
from ..indexing.index import CATALOG_NAME, Index
from ..indexing.rebuild import remove_index_files, salvage_cache
from ..paths import index_dir_for
from ..store.catalog import CatalogDamaged
from .embedder import BackgroundEmbedder
from .watcher import RepoWatcher
from .writer import Writer

log = logging.getLogger("codesearch.daemon")
# reads (searches, relations): one per core runs at once, the rest wait (each up to READ_WAIT_MS).
# More at once only queue on the GIL: throughput stops growing past one slot per core
# (scripts/bench_concurrency.py, docs/benchmarks.md, "Concurrency (daemon)")
READ_SLOTS, READ_WAITING, READ_WAIT_MS = max(2, os.cpu_count() or 2), 256, 10_000


class Daemon(IndexService):
    def __init__(self, root: Path, settings: Settings, index_dir: str | None = None, force_polling: bool = False,
                 stopping: threading.Event | None = None, embedder: SharedEmbedder | None = None):
        """`embedder`: a model shared with the other repositories a workspace daemon serves
        (else the daemon's own: daemon_embedder)."""
        self.started = time.time()
        self.model = embedder or daemon_embedder(settings)
        self.settings = settings
        self.root = Path(root).resolve()
        self.dir = index_dir_for(self.root, index_dir)
        self._stop = threading.Event()
        self.writer = Writer(self._stop, self.touch, on_written=lambda: self.embedder.want())
        self.embedder = BackgroundEmbedder(self._stop, self.writer.enqueue, self.touch)
        self._open_indexes()
        self.rebuilding = threading.Event()  # set while a damaged catalog is rebuilt
        self.serving = Serving(self.touch, self._unavailable, Admission(READ_SLOTS, READ_WAITING, READ_WAIT_MS),
                               self._no_model)
        self.http_address: str | None = None  # set when an HTTP front-end serves this daemon
        self.ready = threading.Event()
        self.stopping = stopping or threading.Event()  # set by the shutdown method or a signal
        self.last_activity = time.monotonic()  # a request answered, a change applied, a slice embedded
        self.force_polling = force_polling
        self.idle_stop_minutes: float | None = None  # set by the lifecycle for an auto-started daemon
        self.watcher: RepoWatcher | None = None

    def _open_indexes(self) -> None:
        """The writer's, the embedder's and the readers' views of one index (one catalog
        connection per thread; the model and the vector store shared). A catalog that SQLite
        finds damaged is rebuilt at once; one that cannot be opened for a passing reason (locked
        by another writer past the busy timeout, a full disk) is left alone: removing it would
        pull the index from under that writer."""
        try:
            self.writer_index = Index(self.root, self.settings, self.dir, create=True, embedder=self.model)
        except CatalogDamaged as exc:
            log.warning("%s; rebuilding the index from scratch", exc)
            self._remove_catalog()
            self.writer_index = Index(self.root, self.settings, self.dir, create=True, embedder=self.model)
        self.embedder.use(Index(self.root, self.settings, self.dir, share_with=self.writer_index))
        self.reader_index = Index(self.root, self.settings, self.dir, share_with=self.writer_index)
        self.writer.use(self.writer_index)
        self._searcher = self.open_searcher()

    def touch(self) -> None:
        self.last_activity = time.monotonic()

    def idle_seconds(self) -> float:
        """How long nothing was asked of the daemon or done by it (0 while work is queued)."""
        if self.writer.busy() or self.pending_paths():
            return 0.0
        return time.monotonic() - self.last_activity

    def _remove_catalog(self) -> None:
        cache = salvage_cache(self.dir / CATALOG_NAME)
        remove_index_files(self.dir)
        fresh = Index(self.root, self.settings, self.dir, create=True)
        try:
            fresh.catalog.vectors.restore_cache_rows(cache)
        finally:
            fresh.close()

    def _rebuild_if_damaged(self) -> None:
        """At start, before anything reads it: a catalog SQLite finds damaged is built again
        (what can be read of its embedding cache is kept)."""
        problem = self.writer_index.catalog.stats.integrity_problem()
        if not problem:
            return
        log.warning("the index database is damaged (%s); rebuilding it from scratch", problem)
        self.rebuilding.set()
        try:
            for index in (self.writer_index, self.embedder.index, self.reader_index):
                index.close()
            self._remove_catalog()
            self._open_indexes()
        finally:
            self.rebuilding.clear()

    # --- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Start watching, then reconcile with the disk (keyword index and graph) and embed, on
        the writer and embedder threads: the calling thread stays free to stop at any moment.

        Watching starts first so that nothing changed during the reconcile is missed."""
        self.watcher = RepoWatcher(self.root, self.dir, self.writer.enqueue, self.writer.request_rescan,
                                   self.settings.debounce_ms / 1000, self.force_polling)
        if self.watcher.fallback_reason:
            log.warning(self.watcher.fallback_reason)
        self.writer.start(self._rebuild_if_damaged, self._serve)

    def _serve(self) -> None:
        """The first reconcile is over (or failed, and will be tried again): serve, and embed."""
        self.ready.set()
        if not self._stop.is_set():
            self.embedder.start()

    def stop(self) -> None:
        self._stop.set()
        self.embedder.want()
        self.writer.stop()
        if self.watcher:
            self.watcher.stop()
        self.writer.join()
        self.embedder.join()
        for index in (self.writer_index, self.embedder.index, self.reader_index):
            index.close()
        self.model.close()  # its embedding process, if any (a batch in flight is not waited for)

    # --- the API's service ------------------------------------------------------------------
    def _unavailable(self) -> str | None:
        if self.rebuilding.is_set():
            return "the index database was damaged and is being rebuilt; try again shortly"
        return None

    def _no_model(self) -> NoModelYet | None:
        """Until the model is loaded, answers come from what needs no model (over an index that
        holds vectors, after a short wait for it); vectors join once it loads."""
        if self.embedder.vectors_ready.is_set():
            return None
        return self.embedder.no_model(holds_vectors=bool(self.vector_coverage()))

    def finished(self, answer: SearchAnswer) -> SearchAnswer:
        pending = self.pending_paths()
        if answer.note and self.reader_index.vectors.problem:
            self.embedder.want()  # the embedder rebuilds the store
            answer = replace(answer, note=f"{self.reader_index.vectors.problem}: the daemon is rebuilding it; "
                                          "meanwhile answers come from keyword and graph")
        if any(r.path in pending for r in answer.results):
            answer = replace(answer, results=tuple(replace(r, stale=True) if r.path in pending else r
                                                   for r in answer.results))
        return answer

    def index(self, request: IndexRequest) -> IndexAnswer:
        self.serving.check()
        finished, report = self.writer.reindex_now(confined_paths(self.root, request), timeout=request.timeout)
        if finished and report is not None and request.verify:  # the catalog's integrity, then the vector store
            damage = self.reader_index.catalog.stats.integrity_problem()
            if damage:
                raise ServiceUnavailable(f"the index database is damaged ({damage}); restart the daemon to rebuild it")
            self.embedder.verify(report)
        if report is None:
            failed = f"reindexing failed ({self.writer.backoff.reason}); the daemon keeps the changes and tries again"
            return IndexAnswer(ok=False, note=failed if finished else "still reindexing; the answer timed out")
        return index_answer(report, ok=finished, note="vectors follow in the background")

    def stats(self) -> Stats:
        return collect_stats(self.reader_index, count_vectors=False)

    def health(self) -> Health:
        pending = self.pending_count()
        return Health(ok=True, pid=os.getpid(), ready=self.ready.is_set(), root=str(self.root), http=self.http_address,
                      pending_changes=pending, stale=bool(pending), write_error=self.write_error())

    def shutdown(self) -> Ok:
        self.stopping.set()
        return Ok()

    def pending_paths(self) -> set[str]:
        """The paths whose changes are not in the index yet: being written, waiting in the
        watcher, or kept from a batch that failed."""
        pending = self.writer.pending_paths()
        if self.watcher:
            pending |= self.watcher.pending
        return pending

    def pending_count(self) -> int:
        """Changes not in the index yet (a failed rescan counts one)."""
        return len(self.pending_paths()) + self.writer.queued()

    def write_error(self) -> str | None:
        """Why the last write failed, while its changes (or vectors) wait for the next try."""
        backoff = self.writer.backoff if self.writer.backoff.reason else self.embedder.backoff
        if backoff.reason is None:
            return None
        return f"{backoff.reason} (trying again in {backoff.wait_left():.0f} s)"

    def status(self) -> Status:
        stats = self.stats()
        pending = self.pending_count()
        left = stats.chunks_without_vectors
        return Status(
            pid=os.getpid(), root=str(self.root), uptime_seconds=round(time.time() - self.started, 1),
            ready=self.ready.is_set(), model_ready=self.embedder.vectors_ready.is_set(), files=stats.files,
            chunks=stats.chunks,
            vectors=stats.vectors, edges=stats.edges, skipped=stats.skipped,
            pending_changes=pending, last_reindex=self.writer.last_reindex,
            reindex_count=self.writer.reindex_count,
            embedding=self.embedder.progress(left),
            watcher=self.watcher.mode if self.watcher else None,
            watcher_note=self.watcher.fallback_reason if self.watcher else "",
            embedded_share=self.embedded_share(),
            stale=bool(pending),
            indexing=[event.to_dict() for event in list(self.writer.indexing.values())] or None,
            idle_stop_minutes=self.idle_stop_minutes, model_error=self.embedder.model_error,
            write_error=self.write_error())
