"""Saying "busy" instead of falling over: a bounded number of requests run at once, a bounded
number wait (each for a bounded time), and the rest are told when to come back."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Busy(RuntimeError):
    """Too much work already: try again after `retry_after_ms`."""

    def __init__(self, message: str, retry_after_ms: int):
        super().__init__(message)
        self.retry_after_ms = retry_after_ms


class Admission:
    """`slots` requests run at once; up to `waiting` more wait, each at most `wait_ms`.

    A request that got a slot keeps it until it finishes, even if its client went away."""

    def __init__(self, slots: int, waiting: int, wait_ms: int, retry_after_ms: int = 200):
        self.slots = slots
        self.waiting = waiting
        self.wait_ms = wait_ms
        self.retry_after_ms = retry_after_ms
        self._cond = threading.Condition()
        self.active = 0
        self.queued = 0

    @contextmanager
    def slot(self) -> Iterator[bool]:
        """Run inside a slot; yields whether this request runs alone (nothing else running or
        waiting), which is when it may spread over several threads itself."""
        deadline = time.monotonic() + self.wait_ms / 1000
        with self._cond:
            if self.active >= self.slots:
                if self.queued >= self.waiting:
                    raise Busy(f"busy: {self.active} requests running and {self.queued} waiting",
                               self.retry_after_ms)
                self.queued += 1
                try:
                    while self.active >= self.slots:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            raise Busy(f"busy: no slot within {self.wait_ms} ms", self.retry_after_ms)
                        self._cond.wait(left)
                finally:
                    self.queued -= 1
            self.active += 1
            alone = self.active == 1 and self.queued == 0
        try:
            yield alone
        finally:
            with self._cond:
                self.active -= 1
                self._cond.notify()
