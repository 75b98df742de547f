"""Watch a repository with watchdog and hand batches of changed paths onward: an isolated change
at once, a burst coalesced."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirModifiedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

from ..ingest.ignore import ALWAYS_SKIPPED_DIRS, IGNORE_FILES, IgnoreRules
from ..ingest.scip import SCIP_SUFFIX
from ..paths import INDEX_DIR_NAME, escape_name

# An editor's save is several events within a few milliseconds (truncate then write; or write a
# temporary file, then rename it over the original): an isolated change leaves once its paths have
# been quiet this long, or at the latest this long after its first event.
SETTLE_MS, SETTLE_MAX_MS = 25, 100
# What an isolated change may be: at most this many paths, and this many batches, in one episode
# (events each within the quiet period of the one before). A save touches one path, or three with
# a temporary and a backup file; save-then-format is two batches. More is a burst (a checkout, a
# code generator, a file written again and again): it waits for the quiet period and leaves whole.
FEW_PATHS, FEW_BATCHES = 8, 4


class Debouncer:
    """Collects changed paths and hands them on in batches.

    Leading edge: a change after a quiet period leaves at once, as soon as its own events have
    settled (`settle`), so a save is searchable in tens of milliseconds rather than after the
    quiet period. Bursts still coalesce: once an episode has touched more than FEW_PATHS paths,
    or sent FEW_BATCHES batches, what follows leaves together once no path has been touched for
    `delay` seconds, or once the oldest has waited `max_delay` under constant churn."""

    def __init__(self, delay: float, on_batch: Callable[[set[str]], None], max_delay: float | None = None,
                 settle: float = SETTLE_MS / 1000, settle_max: float = SETTLE_MAX_MS / 1000):
        self.delay = delay
        self.max_delay = max_delay if max_delay is not None else max(4 * delay, 2.0)
        self.settle, self.settle_max = settle, settle_max
        self.on_batch = on_batch
        self._pending: set[str] = set()
        self._oldest = 0.0  # the first event of the pending paths
        self._latest = float("-inf")  # the last event of any path (a pending one, while any are)
        self._episode_paths: set[str] = set()  # grows to FEW_PATHS + 1 at most
        self._episode_batches = 0
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, name="debouncer", daemon=True)
        self._thread.start()

    def add(self, rel: str) -> None:
        now = time.monotonic()
        with self._cond:
            if now - self._latest > self.delay:  # a new episode
                self._episode_paths.clear()
                self._episode_batches = 0
            self._latest = now
            if len(self._episode_paths) <= FEW_PATHS:
                self._episode_paths.add(rel)
            if not self._pending:
                self._oldest = now
                self._cond.notify()  # later events only move the batch's time on: no need to wake the loop
            self._pending.add(rel)

    @property
    def pending(self) -> set[str]:
        with self._cond:
            return set(self._pending)

    @property
    def in_burst(self) -> bool:
        """Whether the current episode is a burst (its changes wait for the quiet period)."""
        with self._cond:
            return self._burst()

    def _burst(self) -> bool:
        return len(self._episode_paths) > FEW_PATHS or self._episode_batches >= FEW_BATCHES

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._thread.join(timeout=2)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                quiet, longest = (self.delay, self.max_delay) if self._burst() else (self.settle, self.settle_max)
                wait = min(self._latest + quiet, self._oldest + longest) - time.monotonic()
                if wait > 0:
                    self._cond.wait(timeout=wait)
                    continue
                ready, self._pending = self._pending, set()
                self._episode_batches += 1
            self.on_batch(ready)


# What changes a file's content or place. Not opens and reads: subscribed to, they came from
# every file that anything read (ripgrep in a grep, the indexer, an editor, a build), and the
# watcher's thread turned each into an event under the GIL, and a grep through the daemon took
# several times as long as in a process of its own (docs/benchmarks.md).
CHANGE_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent, DirCreatedEvent, FileDeletedEvent, DirDeletedEvent, FileModifiedEvent, DirModifiedEvent,
    FileMovedEvent, DirMovedEvent, FileClosedEvent]


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: RepoWatcher):
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                self.watcher.saw(os.fsdecode(raw), event.is_directory)


class RepoWatcher:
    """A recursive watchdog observer over the root; falls back to polling when it must."""

    def __init__(self, root: Path, index_dir: Path, on_paths: Callable[[set[str]], None],
                 on_rules_changed: Callable[[], None], debounce_seconds: float, force_polling: bool = False):
        self.root = root.resolve()
        self.index_dir = index_dir.resolve()
        self.rules = IgnoreRules(self.root)
        self.on_rules_changed = on_rules_changed
        self.debouncer = Debouncer(debounce_seconds, on_paths)
        self.mode = "polling" if force_polling or os.environ.get("CODESEARCH_WATCHER") == "polling" else "native"
        self.fallback_reason = ""
        self.observer = self._start()

    def _start(self):
        handler = _Handler(self)
        if self.mode == "native":
            try:
                observer = Observer()
                observer.schedule(handler, str(self.root), recursive=True, event_filter=CHANGE_EVENTS)
                observer.start()
                return observer
            except OSError as exc:  # e.g. inotify watch limit reached
                self.mode = "polling"
                self.fallback_reason = f"native watcher failed ({exc}); polling instead"
        observer = PollingObserver(timeout=1)
        observer.schedule(handler, str(self.root), recursive=True, event_filter=CHANGE_EVENTS)
        observer.start()
        return observer

    def saw(self, path: str, is_dir: bool) -> None:
        p = Path(path)
        try:
            rel = escape_name(p.relative_to(self.root).as_posix())
        except ValueError:
            return
        if rel in ("", "."):
            return
        parts = rel.split("/")
        if rel == ".git/info/exclude":
            self.rules = IgnoreRules(self.root)
            self.on_rules_changed()
            return
        if parts[0] in ALWAYS_SKIPPED_DIRS or parts[0] == INDEX_DIR_NAME or self._inside_index(p):
            return
        if any(part in ALWAYS_SKIPPED_DIRS for part in parts):
            return
        if parts[-1] in IGNORE_FILES:
            self.rules.forget()
            self.on_rules_changed()
            return
        if rel.endswith(SCIP_SUFFIX) and not is_dir:  # a SCIP index, often ignored: the indexer reads it again
            self.debouncer.add(rel)
            return
        if self.rules.is_ignored_anywhere(rel, is_dir):
            return
        self.debouncer.add(rel)

    def _inside_index(self, path: Path) -> bool:
        return path == self.index_dir or self.index_dir in path.parents

    @property
    def pending(self) -> set[str]:
        return self.debouncer.pending

    def stop(self) -> None:
        self.observer.stop()
        self.observer.join(timeout=5)
        self.debouncer.stop()
