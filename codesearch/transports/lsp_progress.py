"""The daemon's work shown in the editor: while it indexes a repository (its writer's progress
events, the same objects as `codesearch index --progress-json`) or embeds it, the language
server polls its status and sends LSP work-done progress (`$/progress` begin, report, end)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("codesearch.lsp")
POLL_SECONDS = 0.5  # while work is under way
IDLE_POLL_SECONDS = 5.0  # while there is none: a burst of changes or a restart may bring more
TITLE = "codesearch"


def progress_of(status: dict[str, Any]) -> tuple[str, int | None] | None:
    """(message, percentage or None) of what the daemon does now, from its status; None when it
    does nothing the user waits for."""
    for event in status.get("indexing") or ():  # parsing comes first, then writing
        total = event.get("total")
        done = event.get("done", 0)
        if total:
            return f"indexing: {done}/{total} {event.get('unit', '')}", min(100, done * 100 // total)
        return f"indexing: {done} {event.get('unit', '')}", None
    if not status.get("ready", True):
        return "indexing the repository", None
    if status.get("dormant"):  # asleep until the next request: nothing under way
        return None
    embedding = status.get("embedding") or {}
    left = embedding.get("chunks_without_vectors", 0)
    share = status.get("embedded_share")
    if (left or status.get("vectors")) and not status.get("model_ready") and not status.get("model_error"):
        return "loading the embedding model", None  # searches wait for it, or answer without vectors
    if left and status.get("model_ready"):
        eta = embedding.get("eta_seconds")
        about = f", about {_duration(eta)} to go" if eta else ""
        return f"embedding: {left} chunks left{about}", int((share or 0.0) * 100)
    return None


def _duration(seconds: float) -> str:
    minutes, secs = divmod(max(1, round(seconds)), 60)
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


class ProgressReporter:
    """Polls `fetch_status` on a thread of its own and drives `begin`, `report` and `end`
    (each taking a message and a percentage) while there is something to show; `when_caught_up`
    callbacks run once the daemon has nothing left that answers lack (a partial answer's
    correction)."""

    def __init__(self, fetch_status: Callable[[], dict | None], begin: Callable[[str, int | None], bool],
                 report: Callable[[str, int | None], None], end: Callable[[str], None]):
        self.fetch_status, self.begin, self.report, self.end = fetch_status, begin, report, end
        self.stopped = threading.Event()
        self._wake = threading.Event()
        self._caught_up: list[Callable[[dict], None]] = []
        self.thread = threading.Thread(target=self._loop, name="lsp-progress", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        self._wake.set()

    def when_caught_up(self, callback: Callable[[dict], None]) -> None:
        """Call `callback(status)` once the daemon shows nothing left to wait for; look now."""
        self._caught_up.append(callback)
        self._wake.set()

    def _loop(self) -> None:
        showing = False
        last: tuple[str, int | None] | None = None
        while not self.stopped.is_set():
            try:
                status = self.fetch_status()
            except Exception:  # noqa: BLE001 - a daemon starting or gone: look again later
                status = None
            now = progress_of(status) if status else None
            if now and not showing:
                showing = self.begin(*now)
            elif now and showing and now != last:
                self.report(*now)
            elif not now and showing and status is not None:
                self.end("index ready")
                showing = False
            if not now and status is not None:
                while self._caught_up:
                    self._caught_up.pop(0)(status)
            last = now
            self._wake.wait(POLL_SECONDS if now or status is None or self._caught_up else IDLE_POLL_SECONDS)
            self._wake.clear()
