"""A first index writes its files without the indexes that only reads need and creates them once
its writing ends, however it ends; a later run writes with them in place."""

from __future__ import annotations

from pathlib import Path

import pytest
from index_helpers import build_large_tree, copy_sample

from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer, IndexInterrupted
from codesearch.store.catalog import BULK_CACHE_KIB, BULK_WAL_PAGES, DEFERRED_INDEXES, Catalog
from codesearch.store.sqlite import sqlite3

DEFERRED = set(DEFERRED_INDEXES)


def index_names(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")}


def catalog_index_names(root: Path) -> set[str]:
    catalog = Catalog(root / ".codesearch" / "catalog.sqlite3", readonly=True)
    try:
        return index_names(catalog.db)
    finally:
        catalog.close()


@pytest.fixture
def batches_see(monkeypatch) -> list[set[str]]:
    """The catalog's indexes as each write batch begins."""
    seen: list[set[str]] = []
    settings.clear()
    write_batch = Indexer._write_batch

    def spy(self, *args, **kwargs):
        seen.append(index_names(self.catalog.db))
        settings.append(writer_settings(self.catalog.db))
        return write_batch(self, *args, **kwargs)
    monkeypatch.setattr(Indexer, "_write_batch", spy)
    return seen


settings: list[tuple[int, int]] = []  # the writer's (cache_size, wal_autocheckpoint) as each batch began


def writer_settings(db: sqlite3.Connection) -> tuple[int, int]:
    return db.execute("PRAGMA cache_size").fetchone()[0], db.execute("PRAGMA wal_autocheckpoint").fetchone()[0]


def run_index(root: Path, **kwargs) -> tuple[int, int]:
    """The writer's (cache_size, wal_autocheckpoint) once the run is over."""
    idx = Index(root, load_settings(root), create=True)
    try:
        Indexer(idx).run(embed=False, **kwargs)
        return writer_settings(idx.catalog.db)
    finally:
        idx.close()


def test_the_writes_have_a_larger_cache_and_fewer_checkpoints_and_then_the_defaults(tmp_path, batches_see):
    work = copy_sample("python", tmp_path / "work")
    after = run_index(work)
    assert settings and all(s == (-BULK_CACHE_KIB, BULK_WAL_PAGES) for s in settings)
    assert after == writer_settings(sqlite3.connect(":memory:"))  # SQLite's defaults


def test_a_first_index_writes_without_the_read_indexes_and_ends_with_them(tmp_path, batches_see):
    work = copy_sample("python", tmp_path / "work")
    run_index(work)
    assert batches_see and all(not (seen & DEFERRED) for seen in batches_see)
    every_index = catalog_index_names(work)
    assert every_index >= DEFERRED

    batches_see.clear()  # an incremental run writes with every index in place
    changed = next(work.rglob("*.py"))
    changed.write_text(changed.read_text() + "\n\ndef one_more():\n    return 1\n")
    run_index(work)
    assert batches_see and all(seen == every_index for seen in batches_see)
    assert catalog_index_names(work) == every_index


def test_a_first_index_stopped_half_way_still_has_every_index(tmp_path, batches_see):
    tree = build_large_tree(tmp_path / "tree", generated=120, languages=("python",))
    with pytest.raises(IndexInterrupted):
        run_index(tree, should_stop=lambda: True)  # after the first write batch
    assert len(batches_see) == 1 and not (batches_see[0] & DEFERRED)
    assert catalog_index_names(tree) >= DEFERRED
    run_index(tree)  # the next run goes on with them in place
    assert all(seen >= DEFERRED for seen in batches_see[1:])
