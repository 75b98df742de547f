"""A first index writes its files without the indexes that only reads need and creates them once
its writing ends, however it ends; a later run writes with them in place."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from index_helpers import build_large_tree, copy_sample

from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer, IndexInterrupted
from codesearch.store.catalog import BULK_CACHE_KIB, BULK_WAL_PAGES, DEFERRED_INDEXES, Catalog
from codesearch.store.graph import CallGraph
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


@dataclass
class Batches:
    """What each write batch of a run saw as it began."""
    indexes: list[set[str]] = field(default_factory=list)  # the catalog's indexes
    settings: list[tuple[int, int]] = field(default_factory=list)  # the writer's cache_size, wal_autocheckpoint
    neighbours: list[int] = field(default_factory=list)  # graph rows a reader got for the chunks so far


@pytest.fixture
def batches(monkeypatch) -> Batches:
    seen = Batches()
    write_batch = Indexer._write_batch

    def spy(self, *args, **kwargs):
        seen.indexes.append(index_names(self.catalog.db))
        seen.settings.append(writer_settings(self.catalog.db))
        seen.neighbours.append(graph_rows_read_beside(self.catalog.path))
        return write_batch(self, *args, **kwargs)
    monkeypatch.setattr(Indexer, "_write_batch", spy)
    return seen


def graph_rows_read_beside(path: Path) -> int:
    """What a search's graph step reads of the chunks written so far, through a reader of its own
    (a daemon answers searches while its first index is written)."""
    reader = Catalog(path, readonly=True)
    try:
        rids = np.array([r[0] for r in reader.db.execute("SELECT rid FROM chunks")], dtype=np.int64)
        return len(CallGraph(reader).adjacency(rids).owner)
    finally:
        reader.close()


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


def test_the_writes_have_a_larger_cache_and_fewer_checkpoints_and_then_the_defaults(tmp_path, batches):
    work = copy_sample("python", tmp_path / "work")
    after = run_index(work)
    assert batches.settings and all(s == (-BULK_CACHE_KIB, BULK_WAL_PAGES) for s in batches.settings)
    assert after == writer_settings(sqlite3.connect(":memory:"))  # SQLite's defaults


def test_a_first_index_writes_without_the_read_indexes_and_ends_with_them(tmp_path, batches):
    work = copy_sample("python", tmp_path / "work")
    run_index(work)
    assert batches.indexes and all(not (seen & DEFERRED) for seen in batches.indexes)
    every_index = catalog_index_names(work)
    assert every_index >= DEFERRED

    batches.indexes.clear()  # an incremental run writes with every index in place
    changed = next(work.rglob("*.py"))
    changed.write_text(changed.read_text() + "\n\ndef one_more():\n    return 1\n")
    run_index(work)
    assert batches.indexes and all(seen == every_index for seen in batches.indexes)
    assert catalog_index_names(work) == every_index


def test_searches_beside_a_first_index_read_the_graph_while_indexes_are_deferred(tmp_path, batches):
    """The graph step names its indexes (INDEXED BY): one of them deferred, and every search a
    daemon answered during its first index failed."""
    tree = build_large_tree(tmp_path / "tree", generated=120, languages=("python",), definitions=True)
    run_index(tree)
    assert len(batches.neighbours) > 1 and batches.neighbours[-1] > 0


def test_a_first_index_stopped_half_way_still_has_every_index(tmp_path, batches):
    tree = build_large_tree(tmp_path / "tree", generated=120, languages=("python",))
    with pytest.raises(IndexInterrupted):
        run_index(tree, should_stop=lambda: True)  # after the first write batch
    assert len(batches.indexes) == 1 and not (batches.indexes[0] & DEFERRED)
    assert catalog_index_names(tree) >= DEFERRED
    run_index(tree)  # the next run goes on with them in place
    assert all(seen >= DEFERRED for seen in batches.indexes[1:])
