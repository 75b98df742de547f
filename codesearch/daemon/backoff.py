"""Waiting before a failed write is tried again: the writer's batches and the embedder's slices
(a full disk, the catalog locked by another process) each keep one."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from ..store.space import OutOfSpace

log = logging.getLogger("codesearch.daemon")
# a write that failed is tried again after this long, doubling at each failure up to the most
RETRY_FIRST_SECONDS, RETRY_MOST_SECONDS = 1.0, 60.0


@dataclass
class Backoff:
    """How long to wait before trying a failed write again: RETRY_FIRST_SECONDS after the first
    failure, doubling up to RETRY_MOST_SECONDS; a success starts it over. `reason`: the last
    failure, in one line (None once it succeeded)."""

    delay: float = 0.0
    reason: str | None = None
    due: float = 0.0  # time.monotonic() of the next try

    def failed(self, reason: str) -> float:
        self.delay = min(RETRY_MOST_SECONDS, 2 * self.delay) if self.delay else RETRY_FIRST_SECONDS
        self.reason = reason
        self.due = time.monotonic() + self.delay
        return self.delay

    def failed_with(self, exc: Exception, what: str) -> float:
        """Record `exc` as why `what` failed and log it (its traceback only at the first failure
        since a success, and never for a full disk, which is no bug); the wait before the next try.
        Called while `exc` is being handled."""
        first = self.reason is None
        delay = self.failed(failure_line(exc))
        if first and not isinstance(exc, OutOfSpace):
            log.exception("%s failed", what)
        log.warning("%s failed (%s); trying again in %.0f s", what, self.reason, delay)
        return delay

    def succeeded(self) -> None:
        self.delay, self.reason, self.due = 0.0, None, 0.0

    def wait_left(self) -> float:
        return max(0.0, self.due - time.monotonic())


def failure_line(exc: BaseException) -> str:
    """One line that says why a write failed (a full disk names its disk: store.space)."""
    text = " ".join(str(exc).split())
    return text if isinstance(exc, OutOfSpace) else f"{type(exc).__name__}: {text}" if text else type(exc).__name__
