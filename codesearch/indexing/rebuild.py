"""Build an index again from scratch when its catalog is damaged, keeping what can still be read
of the embedding cache (so the vectors need not be computed again)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from ..config import Settings
from ..paths import index_dir_for
from ..store.catalog import Catalog, CatalogError
from ..store.chroma import OPEN_MARKER_PREFIX, remove_store
from .index import CATALOG_NAME, Index, IndexLock, ensure_index_dir
from .indexer import Indexer, IndexReport
from .vectors import DAMAGED_NOTE

CACHE_SALVAGE_LIMIT = 2_000_000  # rows read back at most (a cache is pruned far below this)


def salvage_cache(catalog_path: Path) -> list[tuple[str, bytes, float]]:
    """What can still be read of a (possibly damaged) catalog's embedding cache."""
    if not catalog_path.exists():
        return []
    try:
        old = Catalog(catalog_path, readonly=True)
    except CatalogError:
        return []
    try:
        rows = []
        for row in old.vectors.cache_rows():
            rows.append(row)
            if len(rows) >= CACHE_SALVAGE_LIMIT:
                break
        return rows
    finally:
        old.close()


def remove_index_files(folder: Path) -> None:
    """The catalog (and its WAL), the vector store and the notes about it; not the folder."""
    for name in (CATALOG_NAME, f"{CATALOG_NAME}-wal", f"{CATALOG_NAME}-shm", DAMAGED_NOTE):
        (folder / name).unlink(missing_ok=True)
    remove_store(folder)
    for marker in folder.glob(f"{OPEN_MARKER_PREFIX}*"):
        with contextlib.suppress(FileNotFoundError):
            marker.unlink()


def rebuild_index(root: Path, settings: Settings, index_dir: str | None, embed: bool = True,
                  log: Callable[[str], None] | None = None, wait_for_lock: float = 60.0) -> IndexReport:
    """Remove the index and build it again; the embedding cache is carried over where readable."""
    say = log or (lambda message: None)
    folder = index_dir_for(root, index_dir)
    ensure_index_dir(folder)
    with IndexLock(folder) as lock:
        lock.acquire(wait_for_lock)
        cache = salvage_cache(folder / CATALOG_NAME)
        remove_index_files(folder)
    say(f"rebuilding the index of {root} from scratch ({len(cache)} cached vectors kept)")
    index = Index(root, settings, index_dir, create=True)
    try:
        index.catalog.vectors.restore_cache_rows(cache)
        report = Indexer(index, log=log).run(embed=embed, wait_for_lock=wait_for_lock)
    finally:
        index.close()
    report.rebuilt = report.rebuilt or "rebuilt from scratch (--rebuild)"
    return report
