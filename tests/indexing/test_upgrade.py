"""An index written in an older layout (format 1: text ids, text stored in the catalog, float32
cached vectors; format 2: chunk ids unique inside the chunks table, calls clustered by name):
opened by this version it is built again in this layout at the next index run, its embedding
cache carried over, so no vector is computed again; until then it is not searched."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES

from codesearch.api.local import LocalService
from codesearch.config import load_settings
from codesearch.indexing.index import CATALOG_NAME, Index, IndexMissing
from codesearch.indexing.indexer import Indexer, IndexReport
from codesearch.search.requests import SearchRequest
from codesearch.store.schema import LAYOUT_VERSION, SCHEMA_VERSION
from codesearch.store.sqlite import sqlite3
from codesearch.store.vector_tables import unpack

# the tables of format 1 that matter here, as it made them (the rest of it is dropped unread)
FORMAT_1 = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE files(path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, content_hash TEXT, language TEXT,
                   skip_reason TEXT, skip_detail TEXT, indexed_at REAL);
CREATE TABLE chunks(rid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, parent_id TEXT, path TEXT NOT NULL,
                    kind TEXT, name TEXT, text TEXT, embed_hash TEXT, vector_hash TEXT);
CREATE VIRTUAL TABLE chunks_fts USING fts5(name, path, signature, body, tokenize = 'porter unicode61');
CREATE TABLE edges(src TEXT NOT NULL, dst TEXT NOT NULL, kind TEXT NOT NULL, weight REAL NOT NULL DEFAULT 1,
                   line INTEGER);
CREATE TABLE embed_cache(model TEXT NOT NULL, text_hash TEXT NOT NULL, vector BLOB NOT NULL, used_at REAL,
                         PRIMARY KEY (model, text_hash));
"""
# ... and of format 2, whose embedding cache is already in this layout's form
FORMAT_2 = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE files(fid INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER, mtime_ns INTEGER,
                   content_hash TEXT, language TEXT, skip_reason TEXT, skip_detail TEXT, indexed_at REAL);
CREATE TABLE chunks(rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, parent INTEGER, fid INTEGER NOT NULL,
                    kind TEXT NOT NULL, name TEXT NOT NULL, qualified_name TEXT, signature TEXT, docstring TEXT,
                    start_line INTEGER, end_line INTEGER, part INTEGER, name_line INTEGER, name_column INTEGER,
                    embed_hash BLOB, vector_hash BLOB);
CREATE TABLE names(nid INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE calls(nid INTEGER NOT NULL, caller INTEGER NOT NULL, line INTEGER NOT NULL,
                   guess INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (nid, caller, line)) WITHOUT ROWID;
CREATE INDEX calls_caller ON calls(caller);
CREATE TABLE embed_cache(text_hash BLOB PRIMARY KEY, vector BLOB NOT NULL, used_at REAL);
PRAGMA user_version = 2;
"""


def write_format_1(db: sqlite3.Connection, model: str, cached: list[tuple[str, bytes, float]]) -> None:
    db.executescript(FORMAT_1)
    db.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    db.execute("INSERT INTO files VALUES ('config.py', 1, 1, 'x', 'python', NULL, '', 0)")
    db.execute("INSERT INTO chunks VALUES (1, 'abc', NULL, 'config.py', 'file', 'config.py', 'text', 'h', 'h')")
    db.executemany("INSERT INTO embed_cache VALUES (?, ?, ?, ?)",
                   [(model, h, unpack(v).astype(np.float32).tobytes(), used) for h, v, used in cached])


def write_format_2(db: sqlite3.Connection, model: str, cached: list[tuple[str, bytes, float]]) -> None:
    db.executescript(FORMAT_2)
    db.execute("INSERT INTO meta VALUES ('schema_version', '4')")
    db.execute("INSERT INTO files VALUES (1, 'config.py', 1, 1, 'x', 'python', NULL, '', 0)")
    db.execute("INSERT INTO chunks(rid, id, fid, kind, name) VALUES (1, 'abc', 1, 'file', 'config.py')")
    db.executemany("INSERT INTO embed_cache VALUES (?, ?, ?)", [(bytes.fromhex(h), v, used) for h, v, used in cached])


def indexed_sample(tmp_path) -> tuple[Path, IndexReport]:
    """A copy of the Python sample indexed with vectors by this code (its index closed again),
    and the run's report."""
    root = tmp_path / "repo"
    shutil.copytree(SAMPLES / "python", root, ignore=shutil.ignore_patterns(".codesearch"))
    index = Index(root, load_settings(root), create=True)
    try:
        return root, Indexer(index).run()
    finally:
        index.close()


@pytest.mark.parametrize(("layout", "write_old"), [(1, write_format_1), (2, write_format_2)])
def test_a_catalog_of_an_older_layout_is_rebuilt_keeping_its_vectors(tmp_path, layout, write_old):
    root, first = indexed_sample(tmp_path)
    assert first.vectors_embedded > 0
    index = Index(root, load_settings(root))
    model = index.vector_key
    cached = list(index.catalog.vectors.cache_rows())
    index.close()
    shutil.rmtree(root / ".codesearch")
    (root / ".codesearch").mkdir()
    with sqlite3.connect(root / ".codesearch" / CATALOG_NAME) as db:  # what the older codesearch left behind
        write_old(db, model, cached)

    index = Index(root, load_settings(root))
    assert index.catalog.outdated
    with pytest.raises(IndexMissing, match="older codesearch"):
        LocalService(index).search(SearchRequest(query="compute_backoff"))
    report = Indexer(index).run()
    assert f"format {layout}, now {LAYOUT_VERSION}" in report.rebuilt
    assert report.vectors_embedded == 0 and report.vectors_from_cache == first.vectors_embedded
    assert not index.catalog.outdated
    assert index.catalog.db.execute("PRAGMA user_version").fetchone()[0] == LAYOUT_VERSION
    assert index.catalog.get_meta("schema_version") == str(SCHEMA_VERSION)
    index.close()

    index = Index(root, load_settings(root))
    try:
        answer = LocalService(index).search(SearchRequest(query="compute_backoff"))
        assert answer.results[0].name == "compute_backoff" and not answer.partial
        assert Indexer(index).run().changed == 0
    finally:
        index.close()


def test_an_upgrade_keeps_the_vectors_the_store_holds_for_chunks_that_come_back(tmp_path):
    """A catalog of layout 2 (whose chunks name their vectors as this layout's do) is built again
    without storing any vector again: the chunks that come back keep theirs, except where the
    file's language is not the one the vector was filed under."""
    root, first = indexed_sample(tmp_path)
    index = Index(root, load_settings(root))
    held = index.vectors.store.ids()
    relabelled = {r[0] for r in index.catalog.db.execute(
        "SELECT c.id FROM chunks c JOIN files f ON f.fid = c.fid WHERE f.path = 'config.py' "
        "AND c.vector_hash IS NOT NULL")}
    index.close()
    assert len(held) == first.vectors_embedded and relabelled
    with sqlite3.connect(root / ".codesearch" / CATALOG_NAME) as db:  # as an older codesearch left it
        db.execute("UPDATE files SET language = 'text' WHERE path = 'config.py'")
        db.execute("PRAGMA user_version = 2")

    index = Index(root, load_settings(root))
    try:
        assert index.catalog.outdated
        report = Indexer(index).run()
        assert "format 2" in report.rebuilt
        assert report.vectors_embedded == 0 and report.vectors_deleted == 0
        assert report.vectors_kept == len(held) - len(relabelled)
        assert report.vectors_from_cache == len(relabelled)  # filed under another language: stored again
        assert index.vectors.store.ids() == held == index.catalog.vectors.live_ids()
        assert not index.catalog.vectors.needed()
        answer = LocalService(index).search(SearchRequest(query="compute backoff delay", mode="vector"))
        assert answer.results[0].name == "compute_backoff" and not answer.partial
    finally:
        index.close()


def test_pruning_the_cache_keeps_every_live_vector(tmp_path):
    """However few vectors a sync asks to keep, those of live chunks stay: a rebuild reads them."""
    root, _ = indexed_sample(tmp_path)
    index = Index(root, load_settings(root))
    try:
        catalog = index.catalog
        live = "SELECT COUNT(DISTINCT embed_hash) FROM chunks WHERE embed_hash IS NOT NULL"
        (wanted,), = catalog.db.execute(live).fetchall()
        catalog.vectors.cache([(f"{n:02x}" * 16, np.ones(384, np.float32)) for n in range(5)])  # none live
        assert catalog.vectors.prune_cache(keep=2) == 5
        assert catalog.db.execute("SELECT COUNT(*) FROM embed_cache").fetchone()[0] == wanted > 2
    finally:
        index.close()


def test_a_reset_that_keeps_no_vectors_queues_the_held_ones_for_deletion(tmp_path):
    """A rebuild cut short holds vectors; a reset for a new model after it leaves none held, and
    every vector Chroma holds, a chunk's or held, is queued for deletion."""
    root, _ = indexed_sample(tmp_path)
    index = Index(root, load_settings(root))
    try:
        catalog = index.catalog
        held = catalog.vectors.live_ids()
        catalog.reset()  # what a rebuild does first; it stops before writing anything
        assert catalog.vectors.live_ids() == held and catalog.vectors.expected_count() == len(held)
        assert not catalog.vectors.pending_deletions()
        catalog.reset(keep_vectors=False)
        assert not catalog.vectors.live_ids() and set(catalog.vectors.pending_deletions()) == held
    finally:
        index.close()


def test_a_daemon_embeds_nothing_while_a_rebuild_holds_vectors(tmp_path):
    """The chunks a rebuild writes lack vectors until the held ones come back at its end: a
    daemon's embedder that went on would store them again from the cache (most of a
    monorepo's million, over the minutes its rebuild takes), so it waits."""
    from codesearch.daemon.core import Daemon
    root, _ = indexed_sample(tmp_path)
    daemon = Daemon(root, replace(load_settings(root), daemon_embed_in_child=False))  # not started
    try:
        catalog = daemon.embedder.index.catalog
        with catalog.transaction() as db:  # a chunk written again, its vector still held; one that needs one
            (held, cid), (needing, _) = db.execute("SELECT rid, id FROM chunks WHERE vector_hash IS NOT NULL "
                                                   "LIMIT 2").fetchall()
            db.execute("INSERT INTO held_vectors SELECT c.id, c.vector_hash, f.language FROM chunks c "
                       "JOIN files f ON f.fid = c.fid WHERE c.rid = ?", (held,))
            db.execute("UPDATE chunks SET vector_hash = NULL WHERE rid IN (?, ?)", (held, needing))
        assert catalog.vectors.count_needing() == 2 and not daemon.embedder.vectors.needed()
        assert catalog.vectors.settle_held() == (1, 0) and cid in catalog.vectors.live_ids()
        assert daemon.embedder.vectors.needed()  # the other one, once the rebuild is over
    finally:
        daemon.stop()
