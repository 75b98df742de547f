"""The garbage collector paused while one request builds or reads a large answer.

A common word's grep answer is some 500,000 small objects (hits, groups, records, then their
JSON). Each allocation burst made CPython run full collections over everything the process
holds (the loaded graph, the catalog's caches), which cost as much as the work itself
(docs/benchmarks.md, "grep against ripgrep (daemon)"). These objects hold no reference
cycles, so nothing is lost by collecting after the request instead of during it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0  # requests inside a pause, on every thread: the collector is process-wide
_was_enabled = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """Collection off for the block (and for every other thread's at once); back on when the last
    block ends, unless someone else had turned it off before."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
