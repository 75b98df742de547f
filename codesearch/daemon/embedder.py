"""The daemon's embedder thread: gives vectors to what lacks them, most useful chunks first, in
small slices. It alone writes to the vector store (a verification takes turns with it), and never
holds up the writer. Until vector search is ready (the model loaded, the store checked and
open), a search over an index that holds vectors waits for it a little (MODEL_WAIT_SECONDS),
then is answered without vectors and says why."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from ..api.serving import NoModelYet
from ..api.types import EmbeddingProgress
from ..embedding.base import EmbeddingError
from ..indexing.events import MovingRate, ProgressEvent
from ..indexing.index import Index
from ..indexing.indexer import IndexReport
from ..indexing.vectors import VectorSync
from .backoff import Backoff

log = logging.getLogger("codesearch.daemon")
EMBED_SLICE = 64  # chunks embedded between looks at the clock and the stop flag
EMBEDDING_ACTIVE_SECONDS = 10.0  # the embedder counts as busy this long after its last slice
# a search over an index that holds vectors waits this long for vector search to get ready (the
# model, the store): answered without vectors it ranks worse than the same search a moment later
MODEL_WAIT_SECONDS = 2.0


class BackgroundEmbedder:
    """The embedder thread of one daemon and what it shows: whether the model is loaded (or why
    it could not be), its failed slices' backoff, and its rate.

    `stop`: the daemon's stop flag; `on_stale`: paths that changed under a slice, for the writer
    to index again first; `touch`: a slice counts as activity."""

    def __init__(self, stop: threading.Event, on_stale: Callable[[set[str]], None], touch: Callable[[], None]):
        self._stop = stop
        self._on_stale = on_stale
        self._touch = touch
        self._busy = threading.Lock()  # the slices and a verification take turns
        self._wanted = threading.Event()
        self.store_checked = threading.Event()  # the store probed, put right if need be, and open
        self.vectors_ready = threading.Event()  # that, and the model loaded (status: model_ready)
        self.wait_seconds = MODEL_WAIT_SECONDS  # how long a search waits for it (longer for a woken daemon)
        self.model_error: str | None = None
        self.backoff = Backoff()  # the slices that failed
        self._rate = MovingRate()  # vectors a second, from the slices' progress (parts of a slice)
        self._slice_done = 0  # vectors of the slice under way counted into the rate so far
        self._at = 0.0  # time.monotonic() of the last progress
        self._thread = threading.Thread(target=self._loop, name="embedder", daemon=True)

    def use(self, index: Index) -> None:
        """The embedder's own view of the index (its catalog connection; the model and the vector
        store shared with the daemon's other views)."""
        self.index = index
        self.vectors = VectorSync(index, log=log.info, on_progress=self._progressed)

    def start(self) -> None:
        self._thread.start()

    def join(self) -> None:
        if self._thread.is_alive():
            self._thread.join(timeout=5)  # a model still loading is not waited for

    def want(self) -> None:
        """Look again now for what lacks vectors (a batch was written, the store needs a rebuild,
        or the daemon stops)."""
        self._wanted.set()

    def no_model(self, holds_vectors: bool) -> NoModelYet | None:
        """The rule for a read now: None once vector search is ready. Over an index that holds
        vectors, a read that would embed its query waits for it, up to `wait_seconds` (the
        first search then pays neither the model's loading nor the store's opening past that)."""
        if self.vectors_ready.is_set():
            return None
        if self.model_error is not None:
            return NoModelYet(f"the embedding model could not be loaded ({self.model_error}): "
                              "keyword and graph results only")
        if not holds_vectors:
            return NoModelYet("the embedding model is still loading: keyword and graph results only")
        return NoModelYet(f"vector search did not get ready within {self.wait_seconds:g} s (the embedding model "
                          "loading, the vector store opening): keyword and graph results only",
                          wait=lambda: self.vectors_ready.wait(self.wait_seconds))

    def _loop(self) -> None:
        """Check the vector store (beside the model's loading: its probe runs in a child
        process), load the model, then embed whatever lacks vectors, slice by slice. A store found
        damaged now or later is rebuilt from the catalog here."""
        checking = threading.Thread(target=self._check_store, name="vector-check", daemon=True)
        checking.start()
        loaded = self._load_model()
        checking.join()
        if not loaded:
            return
        self.vectors_ready.set()
        embedded_since_prune = False
        while not self._stop.is_set():
            if not self.vectors.needed():
                if embedded_since_prune:  # caught up: a good moment to trim the embedding cache
                    self.vectors.prune_cache()
                    embedded_since_prune = False
                self._wanted.wait(timeout=5)
                self._wanted.clear()
                continue
            self._slice()
            embedded_since_prune = True

    def _check_store(self) -> None:
        """Check the store, then open it here: the first search would otherwise wait for that."""
        try:
            with self._busy:
                self.vectors.check(IndexReport())
                if self.index.catalog.vectors.expected_count():
                    self.index.vectors.store  # noqa: B018 - opened for the searches to come
        except Exception:  # searches go on from keyword and graph; the slices try again
            log.exception("checking the vector store failed")
        finally:
            self.store_checked.set()

    def _load_model(self) -> bool:
        """Whether the model loaded (else `model_error` says why; keyword and graph serve on)."""
        try:
            self.index.embedder.encode_query("warm up")
        except Exception as exc:  # queries will report the problem; keep serving keywords
            if isinstance(exc, EmbeddingError):  # it says what is missing (an extra's install line): no traceback
                log.error("the embedding model cannot be loaded (%s); serving keyword and graph search only", exc)
            else:
                log.exception("the embedding model cannot be loaded; serving keyword and graph search only")
            self.model_error = str(exc)
            return False
        return True

    def _progressed(self, event: ProgressEvent) -> None:
        """A slice's progress (at its start, after each part of it embedded, at its end)."""
        now = time.monotonic()
        if event.phase == "begin":
            if now - self._at > EMBEDDING_ACTIVE_SECONDS:  # after a pause: the rate is measured afresh
                self._rate = MovingRate()
            self._slice_done = 0
        elif event.done > self._slice_done:
            self._rate.count(event.done - self._slice_done)
            self._slice_done = event.done
        self._at = now

    def _slice(self) -> None:
        report = IndexReport()
        try:
            with self._busy:
                self.vectors.sync_slice(report, EMBED_SLICE, self._stop.is_set)
        except Exception as exc:  # noqa: BLE001 - tried again after a backoff (logged there); the daemon keeps serving
            self._stop.wait(self.backoff.failed_with(exc, "embedding"))
            return
        self.backoff.succeeded()
        if report.stale_paths:  # files changed under the embedder: the writer indexes them again first
            self._on_stale(report.stale_paths)
        done = report.vectors_embedded + report.vectors_from_cache
        if not done:  # nothing could be embedded yet (what is left waits for the writer): no busy loop
            self._stop.wait(1)
        self._touch()

    def verify(self, report: IndexReport) -> None:
        """`index --verify` under the daemon, the vector store's part: taking turns with the
        slices (which alone write it otherwise)."""
        with self._busy:
            self.vectors.check_and_verify(report)
        report.verified = True
        self._wanted.set()

    def progress(self, left: int) -> EmbeddingProgress:
        """How embedding goes, `left` chunks still lacking vectors."""
        active = bool(left) and time.monotonic() - self._at < EMBEDDING_ACTIVE_SECONDS
        rate = (self._rate.per_second or 0.0) if active else 0.0  # a rate from a finished run says nothing now
        eta = self._rate.seconds_for(left) if active else None  # honest: none without a current rate
        return EmbeddingProgress(chunks_without_vectors=left, rate_per_second=round(rate, 1),
                                 eta_seconds=eta, active=active)
