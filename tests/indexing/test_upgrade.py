"""An index written by codesearch format 1 (text ids, text stored in the catalog, float32 cached
vectors): opened by this version it is built again in this layout at the next index run, its
embedding cache carried over, so no vector is computed again; until then it is not searched."""

from __future__ import annotations

import shutil
import time

import numpy as np
import pytest
from conftest import SAMPLES

from codesearch.api.local import LocalService
from codesearch.config import load_settings
from codesearch.indexing.index import CATALOG_NAME, Index, IndexMissing
from codesearch.indexing.indexer import Indexer
from codesearch.search.types import SearchRequest
from codesearch.store.catalog import LAYOUT_VERSION, SCHEMA_VERSION
from codesearch.store.sqlite import sqlite3

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


def test_a_format_1_catalog_is_rebuilt_keeping_its_vectors(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(SAMPLES / "python", root, ignore=shutil.ignore_patterns(".codesearch"))
    index = Index(root, load_settings(root), create=True)
    first = Indexer(index).run()
    assert first.vectors_embedded > 0
    model = index.vector_key
    cached = {h: index.catalog.cached_vectors([h])[h] for h, in
              [(r[0],) for r in index.catalog.cached_vector_rows()]}
    index.close()
    shutil.rmtree(root / ".codesearch")
    (root / ".codesearch").mkdir()
    with sqlite3.connect(root / ".codesearch" / CATALOG_NAME) as db:  # what format 1 left behind
        db.executescript(FORMAT_1)
        db.execute("INSERT INTO meta VALUES ('schema_version', '1')")
        db.execute("INSERT INTO files VALUES ('config.py', 1, 1, 'x', 'python', NULL, '', 0)")
        db.execute("INSERT INTO chunks VALUES (1, 'abc', NULL, 'config.py', 'file', 'config.py', 'text', 'h', 'h')")
        db.executemany("INSERT INTO embed_cache VALUES (?, ?, ?, ?)",
                       [(model, h, v.astype(np.float32).tobytes(), time.time()) for h, v in cached.items()])

    index = Index(root, load_settings(root))
    assert index.catalog.outdated
    with pytest.raises(IndexMissing, match="older codesearch"):
        LocalService(index).search(SearchRequest(query="compute_backoff"))
    report = Indexer(index).run()
    assert "format 1" in report.rebuilt
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
