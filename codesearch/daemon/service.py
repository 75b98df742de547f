"""The daemon's work: keep one index fresh while answering queries.

One writer thread applies batches of changed paths (keyword index and graph first, so changes
are searchable in well under a second), then embeds what lacks vectors in small slices, always
yielding to newer changes. Queries run on their own catalog connection (WAL: readers are never
blocked by the writer) and share the model and the Chroma client with the writer.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from pathlib import Path

from ..config import Settings
from ..index import Index
from ..indexer import Indexer, IndexReport
from ..search.request import Filters
from ..search.request import SearchRequest
from ..search.searcher import Searcher
from ..stats import collect_stats
from .watcher import RepoWatcher

log = logging.getLogger("codesearch.daemon")
EMBED_SLICE = 64  # chunks embedded between checks for newer changes


class Daemon:
    def __init__(self, root: Path, settings: Settings, index_dir: str | None = None, force_polling: bool = False):
        self.started = time.time()
        self.settings = settings
        self.writer_index = Index(root, settings, index_dir, create=True)
        self.root = self.writer_index.root
        self.dir = self.writer_index.dir
        self.reader_index = Index(self.root, settings, self.dir, share_with=self.writer_index)
        self.indexer = Indexer(self.writer_index, progress=False, log=log.info)
        self.searcher = Searcher(self.reader_index)
        self._search_lock = threading.Lock()
        self._queue: "queue.Queue[tuple[set[str], threading.Event | None] | None]" = queue.Queue()
        self.ready = threading.Event()
        self._full_rescan = threading.Event()
        self._stop = threading.Event()
        self.in_progress: set[str] = set()
        self.last_reindex: dict | None = None
        self.reindex_count = 0  # batches applied since start (the initial reconcile included)
        self.embedding = {"pending": 0, "done": 0, "rate": 0.0, "started": None}
        self.force_polling = force_polling
        self.watcher: RepoWatcher | None = None
        self._writer = threading.Thread(target=self._write_loop, name="writer", daemon=True)

    # --- lifecycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Start watching, reconcile with the disk (keyword index and graph), then embed.

        Watching starts first so that nothing changed during the reconcile is missed."""
        self.watcher = RepoWatcher(self.root, self.dir, self.enqueue, self.request_rescan,
                                   self.settings.debounce_ms / 1000, self.force_polling)
        if self.watcher.fallback_reason:
            log.warning(self.watcher.fallback_reason)
        self._apply(None)
        self.ready.set()
        threading.Thread(target=self._warm_up, name="warm-up", daemon=True).start()
        self._writer.start()

    def _warm_up(self) -> None:
        """Load the model and the graph now, so the first query is as fast as the rest."""
        try:
            self.reader_index.embedder.encode_query("warm up")
            with self._search_lock:
                self.searcher.graph()
        except Exception:  # noqa: BLE001 - a query will report the same problem clearly
            log.exception("warming up failed")

    def stop(self) -> None:
        self._stop.set()
        self._queue.put(None)
        if self.watcher:
            self.watcher.stop()
        if self._writer.is_alive():
            self._writer.join(timeout=30)
        self.writer_index.close()
        self.reader_index.close()

    # --- changes --------------------------------------------------------------------------
    def enqueue(self, paths: set[str], done: threading.Event | None = None) -> None:
        self._queue.put((set(paths), done))

    def request_rescan(self, done: threading.Event | None = None) -> None:
        self._full_rescan.set()
        self._queue.put((set(), done))

    def reindex_now(self, paths: list[str] | None, timeout: float = 300) -> bool:
        """Queue paths (or a full rescan) for the writer and wait until it has applied them."""
        done = threading.Event()
        if paths:
            self.enqueue(set(paths), done)
        else:
            self.request_rescan(done)
        return done.wait(timeout)

    def _write_loop(self) -> None:
        while not self._stop.is_set():
            try:
                item = self._queue.get(timeout=0.05 if self._needs_vectors() else 1.0)
            except queue.Empty:
                if self._needs_vectors():
                    self._embed_some()
                continue
            if item is None:
                return
            batch, waiter = item
            waiters = [waiter]
            while True:  # coalesce everything already queued into one batch
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self._stop.set()
                    break
                batch |= more[0]
                waiters.append(more[1])
            full = self._full_rescan.is_set()
            self._full_rescan.clear()
            try:
                if batch or full:
                    self._apply(None if full else batch)
            except Exception:  # noqa: BLE001 - the daemon must survive any one failure
                log.exception("reindexing failed; the previous index stays in use")
            finally:
                for w in waiters:
                    if w is not None:
                        w.set()

    def _apply(self, paths: set[str] | None) -> IndexReport:
        self.in_progress = set(paths or ())
        started = time.monotonic()
        try:
            report = self.indexer.run(None if paths is None else sorted(paths), embed=False, wait_for_lock=60)
        finally:
            self.in_progress = set()
        self.reindex_count += 1
        self.last_reindex = {"at": time.time(), "seconds": round(time.monotonic() - started, 4),
                             "paths": len(paths) if paths is not None else None,
                             "added": report.added, "modified": report.modified, "deleted": report.deleted}
        log.info("reindexed %s: %s", "everything" if paths is None else f"{len(paths)} paths", report.summary())
        return report

    def _needs_vectors(self) -> bool:
        row = self.writer_index.catalog.db.execute(
            "SELECT 1 FROM chunks WHERE vector_hash IS NULL OR vector_hash != embed_hash LIMIT 1").fetchone()
        pending = self.writer_index.catalog.db.execute("SELECT 1 FROM vector_deletions LIMIT 1").fetchone()
        return bool(row or pending)

    def _embed_some(self) -> None:
        """Embed one slice, most useful chunks first; newer changes go ahead of the rest."""
        cat = self.writer_index.catalog
        total = cat.db.execute("SELECT COUNT(*) FROM chunks WHERE vector_hash IS NULL "
                               "OR vector_hash != embed_hash").fetchone()[0]
        if self.embedding["started"] is None:
            self.embedding.update(started=time.monotonic(), done=0)
        report = IndexReport()
        t = time.monotonic()
        try:
            self.indexer.sync_vectors(report, limit=EMBED_SLICE, should_stop=lambda: not self._queue.empty())
        except Exception:  # noqa: BLE001
            log.exception("embedding failed; will retry")
            time.sleep(2)
            return
        done = report.vectors_embedded + report.vectors_from_cache
        self.embedding["done"] += done
        elapsed = time.monotonic() - t
        if done and elapsed > 0:
            rate = done / elapsed
            self.embedding["rate"] = rate if not self.embedding["rate"] else 0.7 * self.embedding["rate"] + 0.3 * rate
        self.embedding["pending"] = max(0, total - done)
        if self.embedding["pending"] == 0:
            self.embedding["started"] = None

    # --- requests -------------------------------------------------------------------------
    def search(self, params: dict) -> dict:
        filters = Filters(**(params.get("filters") or {}))
        request = SearchRequest(query=str(params.get("query", "")), mode=params.get("mode", "hybrid"),
                                limit=int(params.get("limit", 10)), filters=filters,
                                files=bool(params.get("files", False)), explain=bool(params.get("explain", False)),
                                context=int(params.get("context", 0)))
        with self._search_lock:
            answer = self.searcher.search(request)
        pending = self.pending_paths()
        for r in answer["results"]:
            if r["path"] in pending:
                r["stale"] = True
        return answer

    def relations(self, direction: str, params: dict) -> dict:
        with self._search_lock:
            return self.searcher.relations(str(params["name"]), direction, int(params.get("depth", 1)))

    def pending_paths(self) -> set[str]:
        pending = set(self.in_progress)
        if self.watcher:
            pending |= self.watcher.pending
        return pending

    def status(self) -> dict:
        with self._search_lock:
            stats = collect_stats(self.reader_index, count_vectors=False)
        emb = self.embedding
        eta = emb["pending"] / emb["rate"] if emb["rate"] and emb["pending"] else 0.0
        return {
            "pid": os.getpid(), "root": str(self.root), "uptime_seconds": round(time.time() - self.started, 1),
            "files": stats["files"], "chunks": stats["chunks"], "vectors": stats["vectors"],
            "edges": stats["edges"], "skipped": stats["skipped"],
            "pending_changes": len(self.pending_paths()) + self._queue.qsize(),
            "last_reindex": self.last_reindex, "reindex_count": self.reindex_count,
            "ready": self.ready.is_set(),
            "embedding": {"chunks_without_vectors": stats["chunks"] - stats["vectors"],
                          "rate_per_second": round(emb["rate"], 1), "eta_seconds": round(eta, 1)},
            "watcher": self.watcher.mode if self.watcher else None,
            "watcher_note": self.watcher.fallback_reason if self.watcher else "",
        }
