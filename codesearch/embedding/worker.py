"""Documents embedded in a child process that exits when idle; queries embedded here.

A long-lived daemon keeps what its model's runtime grows while embedding thousands of texts
(OpenVINO compiles kernels per input shape and keeps them; runtimes keep their arenas; the
allocator keeps the pages), hundreds of MB after a mid-sized repository (docs/benchmarks.md,
"Indexing"). A child that embeds the
background batches, and exits once nothing has come for a while, gives all of it back; the
daemon keeps one model for queries, which are short and few shapes. Vectors are the same
either way: the child builds the same backend from the same settings.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
from collections.abc import Sequence
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from ..config import Settings
from . import backends
from .base import Embedder, EmbeddingError, WrappedEmbedder

log = logging.getLogger(__name__)

IDLE_SECONDS = 60.0  # the child exits after this long without a batch (the daemon embeds in slices)
# The child's CPU priority below the daemon's: background batches yield the cores to searches and
# saves (docs/benchmarks.md, "Indexing": searches through the socket while the daemon embeds);
# with nothing else wanting the cores, the scheduler runs it as before
NICENESS = 10
# a daemon's queries: a second thread barely shortens one (docs/benchmarks.md, "A 100,000-file
# monorepo"), and the other cores stay free for searches
QUERY_THREADS = 1


def _serve(connection: Connection, settings: Settings) -> None:
    """The child: texts in, vectors (or an error's message) out, until told to stop or the
    parent is gone (its end of the pipe closes: recv raises EOFError)."""
    try:
        os.nice(NICENESS)
    except OSError:  # not allowed here: it embeds at the daemon's priority
        log.debug("the embedding process could not lower its priority")
    try:
        embedder: Embedder | None = backends.create_embedder(settings)
        problem = ""
    except Exception as exc:  # noqa: BLE001 - each batch is answered with it
        embedder, problem = None, f"{type(exc).__name__}: {exc}"
    while True:
        try:
            texts = connection.recv()
        except (EOFError, OSError):
            return
        if texts is None:
            return
        try:
            reply: Any = embedder.encode_documents(texts) if embedder is not None else problem
        except Exception as exc:  # noqa: BLE001 - the parent raises it as one clear sentence
            reply = f"{type(exc).__name__}: {exc}"
        try:
            connection.send(reply)
        except (BrokenPipeError, OSError):
            return


def daemon_embedder(settings: Settings) -> backends.SharedEmbedder:
    """A daemon's model (`settings` as daemon_settings gives them): queries embedded in the
    daemon on QUERY_THREADS, background batches in a child process at a lower priority on
    `embed_threads`, which exits when idle (`daemon_embed_in_child`); or both in the daemon on
    `embed_threads`."""
    if not settings.daemon_embed_in_child:
        return backends.SharedEmbedder(backends.create_embedder(settings))
    query_model = backends.create_embedder(replace(settings, embed_threads=QUERY_THREADS))
    return backends.SharedEmbedder(ChildProcessEmbedder(query_model, settings))


class ChildProcessEmbedder(WrappedEmbedder):
    """Embeds documents in a child process started on first use and stopped once idle."""

    def __init__(self, inner: Embedder, settings: Settings, idle_seconds: float = IDLE_SECONDS):
        self.inner = inner  # queries, and what names the vectors
        self.settings = settings
        self.idle_seconds = idle_seconds
        self._child: tuple[Any, Connection] | None = None
        self._lock = threading.Lock()  # one batch at a time, and start and stop in turn
        self._timer: threading.Timer | None = None
        self._batches = 0  # batches sent: an idle timer stops the child only if none came since

    @property
    def child_pid(self) -> int | None:
        """The child's process id while it runs (the tests look at it)."""
        child = self._child
        return child[0].pid if child else None

    def encode_query(self, text: str) -> np.ndarray:
        return self.inner.encode_query(text)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            process, connection = self._child or self._start()
            try:
                connection.send(list(texts))
                reply = connection.recv()
            except (EOFError, OSError) as exc:
                self._stop_child()
                raise EmbeddingError(f"the embedding process ended unexpectedly (exit code "
                                     f"{process.exitcode}): {exc or 'no reply'}") from None
            self._batches += 1
            self._timer = threading.Timer(self.idle_seconds, self._stop_if_idle, (self._batches,))
            self._timer.daemon = True
            self._timer.start()
        if isinstance(reply, str):
            raise EmbeddingError(reply)
        return np.asarray(reply, dtype=np.float32)

    def _start(self) -> tuple[Any, Connection]:
        context = multiprocessing.get_context("spawn")  # never fork a threaded daemon
        parent, child = context.Pipe()
        process = context.Process(target=_serve, args=(child, self.settings), name="codesearch-embedder",
                                  daemon=True)
        process.start()
        child.close()  # the child's end lives in the child: the parent's EOF is its signal
        self._child = process, parent
        log.info("embedding process %s started", process.pid)
        return self._child

    def _stop_child(self) -> None:
        if self._child is None:
            return
        process, connection = self._child
        self._child = None
        try:
            connection.send(None)
        except OSError:
            pass
        connection.close()
        process.join(timeout=5)
        if process.is_alive():  # in the middle of a batch: it is not waited for
            process.kill()
            process.join(timeout=5)
        log.info("embedding process %s stopped", process.pid)

    def _stop_if_idle(self, batches: int) -> None:
        """The idle timer: waits for a batch in flight (never cuts one short), and stops the
        child only if no batch came after the one that started the timer."""
        with self._lock:
            if self._batches == batches:
                self._timer = None
                self._stop_child()

    def close(self) -> None:
        """Stop the child now (the daemon stopping: a batch in flight is not waited for, it
        fails). The next batch starts a new one."""
        if not self._lock.acquire(timeout=0.2):
            child = self._child
            if child is not None:
                child[0].kill()  # the caller waiting on it sees the pipe close and cleans up
            self._lock.acquire()
        try:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._stop_child()
        finally:
            self._lock.release()
