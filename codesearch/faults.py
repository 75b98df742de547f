"""Named points where a test can have this process killed (kill -9 on itself), to prove that a
crash at the worst moment leaves an index the next run completes: chosen by a hook, not by
timing luck.

CODESEARCH_FAULT=NAME kills the process the first time it reaches the checkpoint NAME;
NAME:N the N-th time; NAME@MS (or NAME:N@MS) MS milliseconds after reaching it, from another
thread, so that the process dies in the middle of what follows (a write inside Chroma). Unset,
a checkpoint costs one comparison.
"""

from __future__ import annotations

import os
import signal
import threading
import time

ENV = "CODESEARCH_FAULT"
_SPEC = os.environ.get(ENV, "")
_hits: dict[str, int] = {}


def _parse(spec: str) -> tuple[str, int, float | None]:
    delay = None
    if "@" in spec:
        spec, ms = spec.split("@", 1)
        delay = float(ms) / 1000
    name, _, nth = spec.partition(":")
    return name, int(nth or 1), delay


def _die(after: float = 0.0) -> None:
    time.sleep(after)
    os.kill(os.getpid(), signal.SIGKILL)


def checkpoint(name: str) -> None:
    """A point where a crash must be survivable; see the module's doc."""
    if not _SPEC:
        return
    wanted, nth, delay = _parse(_SPEC)
    if name != wanted:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] != nth:
        return
    if delay is None:
        _die()
    threading.Thread(target=_die, args=(delay,), daemon=True).start()
