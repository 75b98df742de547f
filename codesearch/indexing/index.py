"""An index on disk: its folder, catalog, vector store and embedder, opened consistently."""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TextIO

from ..config import INDEX_AFFECTING, Settings
from ..embedding.backends import process_embedder
from ..embedding.base import Embedder, model_slug
from ..paths import index_dir_for
from ..store.catalog import Catalog
from ..store.schema import LAYOUT_VERSION, SCHEMA_VERSION
from .vectors import IndexVectors

CATALOG_NAME = "catalog.sqlite3"


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
        """`share_with`: another Index of the same folder whose model and vector store this
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
        self.vectors: IndexVectors = IndexVectors(self, share_with.vectors if share_with is not None else None)

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

    def close(self) -> None:
        self.vectors.close()
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
