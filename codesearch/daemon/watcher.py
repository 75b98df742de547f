"""Watch a repository with watchdog and hand debounced, coalesced batches of paths onward."""

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
from ..paths import INDEX_DIR_NAME, escape_name


class Debouncer:
    """Collects paths, each with the time of its last event. Pending paths leave together, as
    one batch, once no path has been touched for `delay` seconds (a burst such as a checkout
    becomes one batch), or once the oldest has waited `max_delay` under constant churn."""

    def __init__(self, delay: float, on_batch: Callable[[set[str]], None], max_delay: float | None = None):
        self.delay = delay
        self.max_delay = max_delay if max_delay is not None else max(4 * delay, 2.0)
        self.on_batch = on_batch
        self._last: dict[str, float] = {}
        self._first: dict[str, float] = {}
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, name="debouncer", daemon=True)
        self._thread.start()

    def add(self, rel: str) -> None:
        now = time.monotonic()
        with self._cond:
            self._last[rel] = now
            self._first.setdefault(rel, now)
            self._cond.notify()

    @property
    def pending(self) -> set[str]:
        with self._cond:
            return set(self._last)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._thread.join(timeout=2)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._last and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                now = time.monotonic()
                quiet_at = max(self._last.values()) + self.delay
                overdue_at = min(self._first.values()) + self.max_delay
                if now < min(quiet_at, overdue_at):
                    self._cond.wait(timeout=max(0.01, min(quiet_at, overdue_at) - now))
                    continue
                ready = set(self._last)
                self._last.clear()
                self._first.clear()
            self.on_batch(ready)


# What changes a file's content or place. Not opens and reads: subscribed to, they came from
# every file that anything read (ripgrep in a grep, the indexer, an editor, a build), and the
# watcher's thread turned each into an event under the GIL: a grep of a 30,000-file tree through
# the daemon took 5.6 s against 1.1 s in a process of its own.
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
