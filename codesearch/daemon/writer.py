"""The daemon's writer thread: applies batches of changed paths to the catalog, keyword index
and graph, so a change is searchable in well under a second. A batch that fails (a full disk,
the catalog locked by another process) is kept, merged with later changes, and tried again after
a backoff; someone waiting for a reindex (the `index` method) makes it try at once."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..faults import checkpoint
from ..indexing.events import ProgressEvent
from ..indexing.index import Index
from ..indexing.indexer import Indexer, IndexInterrupted, IndexReport
from ..ingest.extract import release_idle_pool
from .backoff import Backoff

log = logging.getLogger("codesearch.daemon")
# a first query starts its daemon beside its own keyword indexing: the daemon's first reconcile
# waits for that run to finish (however long a big repository takes) rather than serve half an index
FIRST_RECONCILE_LOCK_WAIT_SECONDS = 3600.0
WORKERS_IDLE_SECONDS = 60.0  # the extraction workers stop after this long with nothing to index


@dataclass
class _Waiter:
    """Someone waiting for a batch of paths to be applied, and what that batch changed."""

    done: threading.Event
    report: IndexReport | None = None


@dataclass
class _Backlog:
    """The changes of write batches that failed: kept, merged with later changes, and written
    with them at the next try."""

    paths: set[str] = field(default_factory=set)
    everything: bool = False  # a full rescan failed: the next try rescans the tree

    def __bool__(self) -> bool:
        return bool(self.paths) or self.everything


class Writer:
    """The writer thread of one daemon, its queue of changes, and what it shows (`status`).

    `stop`: the daemon's stop flag; `touch`: a batch counts as activity; `on_written`: a batch
    was written (its vectors are wanted)."""

    def __init__(self, stop: threading.Event, touch: Callable[[], None], on_written: Callable[[], None]):
        self._stop = stop
        self._touch = touch
        self._on_written = on_written
        self._queue: queue.Queue[tuple[set[str], _Waiter | None] | None] = queue.Queue()
        self._full_rescan = threading.Event()
        self._backlog = _Backlog()  # the writer thread's alone
        self.backoff = Backoff()  # the batches that failed
        self.in_progress: set[str] = set()
        self.last_reindex: dict | None = None
        self.reindex_count = 0  # batches applied since start (the initial reconcile included)
        self.indexing: dict[str, ProgressEvent] = {}  # the run now, by stage
        self._thread: threading.Thread | None = None

    def use(self, index: Index) -> None:
        """The writer's own view of the index (its catalog connection)."""
        self.indexer = Indexer(index, log=log.info, on_progress=self._note_progress)

    def _note_progress(self, event: ProgressEvent) -> None:
        """The run's progress, for `status` (the LSP's `$/progress`); gone when the run ends."""
        if event.phase == "end":
            self.indexing.pop(event.stage, None)
        else:
            self.indexing[event.stage] = event

    def start(self, prepare: Callable[[], None], on_ready: Callable[[], None]) -> None:
        """Run the thread: `prepare` (on the thread, before anything is written), then reconcile
        with the disk, then `on_ready`, then the batches as they come."""
        self._thread = threading.Thread(target=self._loop, args=(prepare, on_ready), name="writer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop after the batch being written (the daemon sets the stop flag first)."""
        self._queue.put(None)

    def join(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            self._thread.join(timeout=30)

    # --- changes --------------------------------------------------------------------------
    def enqueue(self, paths: set[str], waiter: _Waiter | None = None) -> None:
        self._queue.put((set(paths), waiter))

    def request_rescan(self, waiter: _Waiter | None = None) -> None:
        self._full_rescan.set()
        self._queue.put((set(), waiter))

    def reindex_now(self, paths: list[str] | None, timeout: float = 300) -> tuple[bool, IndexReport | None]:
        """Queue paths (or a full rescan) and wait until they are applied: (finished in time,
        the report of the batch they went in)."""
        waiter = _Waiter(threading.Event())
        if paths:
            self.enqueue(set(paths), waiter)
        else:
            self.request_rescan(waiter)
        finished = waiter.done.wait(timeout)
        return finished, waiter.report

    def busy(self) -> bool:
        """Whether a batch is being written or waits in the queue."""
        return bool(self.in_progress) or not self._queue.empty()

    def pending_paths(self) -> set[str]:
        """The paths being written, or kept from a batch that failed."""
        return self.in_progress | self._backlog.paths

    def queued(self) -> int:
        """Changes queued and not yet taken, and one for a failed rescan."""
        return self._queue.qsize() + int(self._backlog.everything)

    # --- the thread -----------------------------------------------------------------------
    def _loop(self, prepare: Callable[[], None], on_ready: Callable[[], None]) -> None:
        try:  # catch up with what changed while no daemon watched; then serve
            prepare()
            self._apply(None, wait_for_lock=FIRST_RECONCILE_LOCK_WAIT_SECONDS)
        except IndexInterrupted:
            return
        except Exception as exc:  # noqa: BLE001 - served as it is meanwhile, and tried again like any failed batch
            self._keep_failed(_Backlog(), True, exc)
        on_ready()
        while not self._stop.is_set():
            waiters = self._next_batch()
            if waiters is None:
                return
            backlog, self._backlog = self._backlog, _Backlog()
            full = self._full_rescan.is_set() or backlog.everything
            self._full_rescan.clear()
            report = None
            try:
                if backlog or full:
                    report = self._apply(None if full else backlog.paths)
                self.backoff.succeeded()
            except IndexInterrupted:
                return
            except Exception as exc:  # noqa: BLE001 - kept and tried again: the daemon survives any failure
                self._keep_failed(backlog, full, exc)
            finally:
                for w in waiters:
                    w.report = report
                    w.done.set()

    def _next_batch(self) -> list[_Waiter] | None:
        """Wait for changes, and take everything queued into the backlog: the waiters of the
        batch to write now (None: stop). After a failure, changes join the backlog until its
        next try is due; someone waiting for a reindex (the `index` method) tries at once."""
        waiters: list[_Waiter] = []
        while True:
            retrying = bool(self._backlog)
            try:
                item = self._queue.get(timeout=self.backoff.wait_left() if retrying else WORKERS_IDLE_SECONDS)
            except queue.Empty:
                if retrying:
                    return waiters  # the try is due
                release_idle_pool()  # nothing to index for a while: the extraction workers go
                continue
            if item is None:
                return None
            if self._take_queued(item, waiters):
                self._stop.set()  # stop after this batch (its run ends between two write batches)
                return waiters
            if not retrying or waiters or not self.backoff.wait_left():
                return waiters

    def _take_queued(self, item: tuple[set[str], _Waiter | None], waiters: list[_Waiter]) -> bool:
        """`item` and everything queued after it into the backlog, their waiters into `waiters`;
        True when the stop came among them."""
        while True:
            paths, waiter = item
            self._backlog.paths |= paths
            if waiter is not None:
                waiters.append(waiter)
            try:
                following = self._queue.get_nowait()
            except queue.Empty:
                return False
            if following is None:
                return True
            item = following

    def _keep_failed(self, backlog: _Backlog, full: bool, exc: Exception) -> None:
        """A batch that failed stays in the backlog, and is tried again after a backoff."""
        self._backlog.paths |= backlog.paths
        self._backlog.everything |= full
        self.backoff.failed_with(exc, "reindexing " + ("everything" if full else f"{len(backlog.paths)} paths"))

    def _apply(self, paths: set[str] | None, wait_for_lock: float = 60) -> IndexReport:
        checkpoint("daemon.applying")
        self.in_progress = set(paths or ())
        started = time.monotonic()
        try:
            report = self.indexer.run(None if paths is None else sorted(paths), embed=False,
                                      wait_for_lock=wait_for_lock, should_stop=self._stop.is_set)
        finally:
            self.in_progress = set()
            self.indexing = {}
            self._touch()
        self.reindex_count += 1
        checkpoint("daemon.applied")  # written, its vectors not yet made
        self.last_reindex = {"at": time.time(), "seconds": round(time.monotonic() - started, 4),
                             "paths": len(paths) if paths is not None else None,
                             "added": report.added, "modified": report.modified, "deleted": report.deleted}
        self._on_written()
        log.info("reindexed %s: %s", "everything" if paths is None else f"{len(paths)} paths", report.summary())
        return report
