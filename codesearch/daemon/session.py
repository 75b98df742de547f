"""A long-lived front-end's hold on the daemon of one repository (MCP, LSP): it starts the
daemon in the background when none runs, waits a bounded time for it, and starts it again if it
dies in the middle of a session. Calls never hang the caller past their own timeouts."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..api.protocol import ServiceUnavailable
from .client import DaemonClient
from .lifecycle import DaemonLifecycleError, DaemonTarget, running_at, start_target, wait_ready

log = logging.getLogger("codesearch.session")
T = TypeVar("T")
START_WAIT_SECONDS = 45.0  # a call waits this long for a daemon that is starting (first indexing)
START_TIMEOUT_SECONDS = 3600.0  # a start in the background gives up after this


class DaemonSession:
    """The daemon of `root` (or of `target`, a workspace), started on demand unless `start` is False."""

    def __init__(self, root: Path, index_dir: str | None = None, start: bool = True,
                 wait_seconds: float = START_WAIT_SECONDS, target: DaemonTarget | None = None):
        self.root = root.resolve()
        self.index_dir = index_dir
        self.target = target or DaemonTarget.repository(self.root, index_dir)
        self.start = start
        self.wait_seconds = wait_seconds
        self.client = DaemonClient(self.target.files.sock)
        self._lock = threading.Lock()
        self._starting: threading.Thread | None = None
        self._ready = threading.Event()
        self._failure: str | None = None
        self.restarts = 0

    def begin(self) -> None:
        """Start the daemon now, in the background, if none runs: the first call finds it warm."""
        with self._lock:
            if self._starting is not None and self._starting.is_alive():
                return
            health = running_at(self.target.files)
            if health and health.get("ready"):
                self._ready.set()
                return
            if not self.start:
                self._failure = None if health else (
                    f"no codesearch daemon serves {self.target.label}; start one with: codesearch daemon start "
                    f"{' '.join(self.target.run_args)}")
                if health:  # one is starting: wait for it as for our own
                    self._starting = threading.Thread(target=self._wait_for_start, daemon=True)
                    self._starting.start()
                return
            self._ready.clear()
            self._failure = None
            self._starting = threading.Thread(target=self._start, name="daemon-start", daemon=True)
            self._starting.start()

    def _start(self) -> None:
        try:
            from ..config import load_settings  # an editor's daemon stops when idle, as a query's does
            idle = load_settings(self.root).daemon_idle_minutes
            start_target(self.target, START_TIMEOUT_SECONDS, idle_minutes=idle)
            self._ready.set()
        except (DaemonLifecycleError, OSError, ValueError) as exc:  # ValueError: a bad .codesearch.toml
            self._failure = f"the codesearch daemon for {self.target.label} could not start: {exc}"
            log.error("%s", self._failure)

    def _wait_for_start(self) -> None:
        if wait_ready(self.target.files, time.monotonic() + START_TIMEOUT_SECONDS):
            self._ready.set()

    def _await_ready(self) -> DaemonClient:
        if not self._ready.is_set():
            self.begin()
            if self._failure:
                raise ServiceUnavailable(self._failure)
            if not self._ready.wait(self.wait_seconds):
                if self._failure:
                    raise ServiceUnavailable(self._failure)
                raise ServiceUnavailable(f"the codesearch daemon for {self.target.label} is still indexing for the "
                                         "first time; try again in a minute")
        return self.client

    def call(self, fn: Callable[[DaemonClient], T]) -> T:
        """`fn(client)`; when the daemon is gone (killed, stopped), start it again and retry once."""
        client = self._await_ready()
        try:
            return fn(client)
        except TimeoutError:
            raise ServiceUnavailable(f"the codesearch daemon for {self.target.label} did not answer in time") from None
        except OSError:  # refused, reset, no socket, closed without an answer
            if running_at(self.target.files):
                raise
            log.warning("the daemon for %s went away; starting it again", self.root)
            self._ready.clear()
            self.restarts += 1
            return fn(self._await_ready())
