"""An index on disk: its folder, catalog, vector store and embedder, opened consistently."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..config import INDEX_AFFECTING, Settings
from ..embedding.backends import process_embedder
from ..embedding.base import Embedder, model_slug
from ..paths import index_dir_for
from ..store.catalog import LAYOUT_VERSION, SCHEMA_VERSION, Catalog
from ..store.space import says_disk_full
from ..store.vectors import ProbeResult, VectorStoreError

if TYPE_CHECKING:
    from ..store.vectors import VectorStore

DAMAGED_NOTE = "vectors.damaged"  # written when a process saw the vector store fail

CATALOG_NAME = "catalog.sqlite3"
PROBE_JOIN_SECONDS = 30.0  # closing waits this long for a background probe of the vector store


class IndexMissing(RuntimeError):
    """There is no index for this repository yet."""


class IndexBusy(RuntimeError):
    """Another process holds the index's write lock."""


def settings_fingerprint(settings: Settings) -> str:
    values = asdict(settings)
    return json.dumps({k: values[k] for k in INDEX_AFFECTING}, sort_keys=True)


def ensure_index_dir(folder: Path) -> None:
    """The index folder: private (0700: it holds the code's text and the daemon's socket), and
    ignored by git."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")


class IndexLock:
    """An exclusive advisory lock on the index folder: one writer at a time, across processes."""

    def __init__(self, index_dir: Path):
        self.path = index_dir / "write.lock"
        self.handle: TextIO | None = None

    def acquire(self, wait_seconds: float = 0.0, on_wait: Callable[[str], None] | None = None) -> None:
        handle = self.handle = open(self.path, "a+")
        deadline = time.monotonic() + wait_seconds
        told = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                handle.seek(0)
                handle.truncate()
                handle.write(str(os.getpid()))
                handle.flush()
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = self.holder()
                    handle.close()
                    self.handle = None
                    raise IndexBusy(f"another codesearch process{f' (pid {holder})' if holder else ''} "
                                    f"is writing this index; try again when it has finished") from None
                if on_wait and not told:
                    on_wait(self.holder())
                    told = True
                time.sleep(0.2)

    def holder(self) -> str:
        try:
            return self.path.read_text().strip()
        except OSError:
            return ""

    def release(self) -> None:
        if self.handle is not None:
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()
            self.handle = None

    def __enter__(self) -> IndexLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


class Index:
    """Paths and lazily opened parts of one repository's index."""

    def __init__(self, root: Path, settings: Settings, index_dir: Path | str | None = None,
                 create: bool = False, share_with: Index | None = None, embedder: Embedder | None = None):
        """`share_with`: another Index of the same folder whose model and Chroma client this
        one uses (the daemon's readers and writer), while keeping its own catalog connection.
        `embedder`: a model shared with other repositories' indexes (a workspace)."""
        self.root = Path(root).resolve()
        self.settings = settings
        self.dir = index_dir_for(self.root, index_dir)
        self.catalog_path = self.dir / CATALOG_NAME
        if not self.catalog_path.exists():
            if not create:
                raise IndexMissing(f"{self.root} has no index yet; run: codesearch index {self.root}")
            ensure_index_dir(self.dir)
        self.catalog = Catalog(self.catalog_path)
        self._embedder: Embedder | None = embedder
        self._shared = share_with
        # the vector store's state, kept by the Index that others share with
        self._vectors: VectorStore | None = None
        self._vector_problem: str | None = None
        self._vector_shortfall = 0  # vectors the catalog expects and the store lacks (seen by a probe)
        self._probed = False
        self._prober: threading.Thread | None = None  # the background probe, joined on close
        self._vector_lock = threading.RLock()

    # --- parts ----------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        """The settings' embedding backend (the model loads on first use)."""
        if self._shared is not None:
            return self._shared.embedder
        if self._embedder is None:  # recent query vectors kept, as a workspace's shared model keeps them
            self._embedder = process_embedder(self.settings)
        return self._embedder

    @property
    def vector_key(self) -> str:
        """Names the vectors of this index, in the embedding cache and in Chroma."""
        return self.embedder.key

    def vector_dimension(self) -> int:
        stored = self.catalog.get_meta("dimension")
        if stored and self.catalog.get_meta("model") == self.vector_key:
            return int(stored)
        return self.embedder.dimension

    @property
    def collection_name(self) -> str:
        return f"chunks-{model_slug(self.vector_key)}-{self.vector_dimension()}"

    # --- the vector store -----------------------------------------------------------------
    # Chroma's native code can crash on a damaged store, so each process probes the store in a
    # child process before it first opens it here. A store seen damaged (by the probe, or by an
    # error from Chroma) is not opened again until `drop_vectors` has rebuilt it.
    @property
    def vectors(self) -> VectorStore:
        """The vector store, opened in this process; VectorStoreError when it is damaged."""
        if self._shared is not None:
            return self._shared.vectors
        with self._vector_lock:
            if self._vectors is None and not self._probed and not self.settings.chroma_url:
                self.probe_vectors()
            if self._vector_problem:
                raise VectorStoreError(self._vector_problem)
            if self._vectors is None:
                from ..store.vectors import VectorStore
                s = self.settings
                try:
                    self._vectors = VectorStore(self.dir, self.collection_name, s.chroma_url, s.hnsw_m,
                                                s.hnsw_construction_ef, s.hnsw_search_ef)
                except OSError as exc:  # its open marker could not be written (a full disk)
                    raise VectorStoreError(f"cannot open the vector store: {exc}") from exc
            return self._vectors

    @property
    def vector_problem(self) -> str | None:
        """Why the vector store cannot be used now (it needs a rebuild), or None."""
        return self._shared.vector_problem if self._shared is not None else self._vector_problem

    def probe_vectors(self) -> ProbeResult:
        """Open the store in a child process: how many vectors it holds, or why it is unusable
        (which is then remembered, here and on disk for the next process)."""
        if self._shared is not None:
            return self._shared.probe_vectors()
        from ..store import vectors as store
        with self._vector_lock:
            dead = store.died_with_store_open(self.dir)
            if self.settings.chroma_url:
                result = ProbeResult(count=self.vectors.count())
            elif not (self.dir / store.STORE_FOLDER).exists():
                result = ProbeResult(count=None)
            else:
                result = store.probe(self.dir, self.collection_name, self.vector_dimension())
            self._probed = True
            if result.ok:
                store.forget_dead_markers(self.dir, dead)
                expected = self.catalog.expected_vector_count()
                self._vector_shortfall = max(0, expected - (result.count or 0))
                if self._vector_shortfall:  # usable for what it holds; the next index restores the rest
                    self._write_damage_note(f"the vector store lacks {self._vector_shortfall} "
                                            f"of the {expected} vectors the catalog expects")
            elif not says_disk_full(result.problem):  # a full disk is no damage: the store stays as it is
                self.mark_vectors_damaged(f"the vector store is damaged ({result.problem})")
            return result

    def probe_vectors_soon(self) -> None:
        """Probe in the background (a search loading the model meanwhile waits less)."""
        if self._shared is None and not self._probed and not self.settings.chroma_url and self._prober is None:
            self._prober = threading.Thread(target=self._probe_quietly, name="vector-probe", daemon=True)
            self._prober.start()

    def _probe_quietly(self) -> None:
        # a failure here is met again, and reported, by whoever opens the store next
        with contextlib.suppress(Exception), self._vector_lock:
            if not self._probed:
                self.probe_vectors()

    @property
    def vector_shortfall(self) -> int:
        """Vectors the catalog expects that the store was found to lack (0: none, or not looked)."""
        return self._shared.vector_shortfall if self._shared is not None else self._vector_shortfall

    def vectors_reconciled(self) -> None:
        """The store was checked against the catalog and put right."""
        if self._shared is not None:
            self._shared.vectors_reconciled()
            return
        with self._vector_lock:
            self._vector_shortfall = 0
            (self.dir / DAMAGED_NOTE).unlink(missing_ok=True)

    def mark_vectors_damaged(self, problem: str) -> None:
        """Remember that the store failed: no one here opens it again, and the next process that
        indexes rebuilds it (the note on disk says so). A store that failed for want of space is
        not damaged: it is kept, and used again once there is space."""
        if self._shared is not None:
            self._shared.mark_vectors_damaged(problem)
            return
        if says_disk_full(problem):
            return
        with self._vector_lock:
            self._vector_problem = problem
            self._write_damage_note(problem)

    def _write_damage_note(self, problem: str) -> None:
        """Tell the next process; this one remembers even where the note cannot be written."""
        with contextlib.suppress(OSError):
            (self.dir / DAMAGED_NOTE).write_text(problem + "\n")

    def vectors_need_a_check(self) -> bool:
        """Whether something says the store may not match the catalog: a process died with it
        open, one saw it fail, or it is missing while the catalog says it holds vectors."""
        from ..store import vectors as store
        if self.settings.chroma_url:
            return False
        return bool(store.died_with_store_open(self.dir) or (self.dir / DAMAGED_NOTE).exists()
                    or (not (self.dir / store.STORE_FOLDER).exists() and self.catalog.expected_vector_count()))

    def drop_vectors(self) -> None:
        """Close and delete the store: the catalog forgets which vectors it held, and the next
        sync rebuilds them from the embedding cache (re-embedding only what the cache lacks)."""
        if self._shared is not None:
            self._shared.drop_vectors()
            return
        from ..store import vectors as store
        with self._vector_lock:
            if self._vectors is not None:
                self._vectors.close()
                self._vectors = None
            if self.settings.chroma_url:
                raise VectorStoreError(f"the Chroma server at {self.settings.chroma_url} needs repairing by hand")
            store.remove_store(self.dir)
            self.catalog.forget_all_vectors()
            store.forget_dead_markers(self.dir, store.died_with_store_open(self.dir))
            (self.dir / DAMAGED_NOTE).unlink(missing_ok=True)
            self._vector_problem = None
            self._vector_shortfall = 0
            self._probed = True  # an empty store has nothing to probe

    def retire_vectors(self) -> None:
        """Forget every vector (they have another key): a local store is deleted; on a Chroma
        server, whose collections are named by key, the old collection is left to its owner."""
        if self.settings.chroma_url:
            self.catalog.forget_all_vectors()
        else:
            self.drop_vectors()

    def close(self) -> None:
        # a probe still running when the process exits would be torn down inside the vector
        # store's native code ("FATAL: exception not rethrown", the process aborted after its answer)
        if self._prober is not None:
            self._prober.join(timeout=PROBE_JOIN_SECONDS)
        if self._shared is None and self._vectors is not None:
            self._vectors.close()
            self._vectors = None
        self.catalog.close()

    # --- compatibility --------------------------------------------------------------------
    def compatibility_problem(self) -> str | None:
        """Why the stored index does not fit this code and these settings, or None."""
        cat = self.catalog
        if cat.outdated:
            return (f"the index was written by an older codesearch (format {cat.found_layout}, now {LAYOUT_VERSION}): "
                    "its tables change")
        if cat.is_empty():
            return None
        version = cat.get_meta("schema_version")
        if version != str(SCHEMA_VERSION):
            return f"the index was written by another version of codesearch (format {version}, now {SCHEMA_VERSION})"
        if cat.get_meta("settings") != settings_fingerprint(self.settings):
            return "settings that shape the index (chunk sizes, limits or model) changed"
        return None

    def write_meta(self) -> None:
        with self.catalog.transaction():
            self.catalog.set_meta("schema_version", str(SCHEMA_VERSION))
            self.catalog.set_meta("settings", settings_fingerprint(self.settings))
            self.catalog.set_meta("model", self.vector_key)
            self.catalog.set_meta("root", str(self.root))
