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
from codesearch.ingest import chunking
from codesearch.store.call_graph import CallGraph
from codesearch.store.catalog import BULK_CACHE_KIB, BULK_WAL_PAGES, Catalog
from codesearch.store.files import COLLIDING_ID
from codesearch.store.schema import DEFERRED_INDEXES
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


COLLIDING = "c0111de5c0111de5"


@pytest.fixture
def colliding_ids(monkeypatch) -> None:
    """Every chunk named `collide` gets one id, as two chunks whose hashes collide would."""
    real = chunking.chunk_id

    def chunk_id(path: str, kind: str, qualified_name: str, ordinal: int, part: int = 1) -> str:
        return COLLIDING if qualified_name == "collide" else real(path, kind, qualified_name, ordinal, part)
    monkeypatch.setattr(chunking, "chunk_id", chunk_id)


def write_colliding_repo(root: Path) -> Path:
    root.mkdir()
    for name in ("alpha", "beta"):
        (root / f"{name}.py").write_text(f"def {name}_helper():\n    return 1\n\n\ndef collide():\n    return 2\n")
    return root


def files_and_reasons(root: Path) -> dict[str, tuple[str | None, str]]:
    catalog = Catalog(root / ".codesearch" / "catalog.sqlite3", readonly=True)
    try:
        rows = catalog.db.execute("SELECT path, skip_reason, skip_detail FROM files")
        return {r[0]: (r[1], r[2] or "") for r in rows}
    finally:
        catalog.close()


def definitions(root: Path) -> set[tuple[str, str]]:
    catalog = Catalog(root / ".codesearch" / "catalog.sqlite3", readonly=True)
    try:
        return {(r[0], r[1]) for r in catalog.db.execute(
            "SELECT f.path, c.name FROM chunks c JOIN files f ON f.fid = c.fid WHERE c.kind = 'function'")}
    finally:
        catalog.close()


def test_ids_that_collide_in_a_first_index_skip_the_later_file_and_the_index_is_made(tmp_path, colliding_ids):
    """Written while the unique index on ids waits, both chunks go in; making the index then
    fails. The later file is skipped as failed, as a file whose row the index refuses is, and the
    run ends with every index (without this, every later open failed)."""
    work = write_colliding_repo(tmp_path / "work")
    idx = Index(work, load_settings(work), create=True)
    try:
        report = Indexer(idx).run(embed=False)
    finally:
        idx.close()
    assert report.skipped["failed"] == 1  # the run says so, as for a refused row
    assert catalog_index_names(work) >= DEFERRED
    reasons = files_and_reasons(work)
    assert reasons["alpha.py"] == (None, "")
    assert reasons["beta.py"] == ("failed", COLLIDING_ID)
    assert definitions(work) == {("alpha.py", "alpha_helper"), ("alpha.py", "collide")}

    run_index(work)  # tried again with the index in place: refused, the same file skipped
    assert files_and_reasons(work)["beta.py"][0] == "failed"
    assert definitions(work) == {("alpha.py", "alpha_helper"), ("alpha.py", "collide")}


def test_a_catalog_left_without_its_id_index_and_with_colliding_ids_gets_it_at_its_next_open(tmp_path):
    """A first index killed before it made its indexes, with two chunks of one id: the next
    writable open makes them, skipping the later chunk's file, instead of failing to open."""
    work = write_colliding_repo(tmp_path / "work")
    run_index(work)
    path = work / ".codesearch" / "catalog.sqlite3"
    db = sqlite3.connect(path)
    db.execute("DROP INDEX chunks_id")
    db.execute("UPDATE chunks SET id = (SELECT id FROM chunks WHERE name = 'alpha_helper') WHERE name = 'beta_helper'")
    db.commit()
    db.close()
    Catalog(path).close()
    assert catalog_index_names(work) >= DEFERRED
    assert files_and_reasons(work)["beta.py"] == ("failed", COLLIDING_ID)
    assert ("beta.py", "beta_helper") not in definitions(work) and ("alpha.py", "alpha_helper") in definitions(work)
