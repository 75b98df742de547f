"""An index made before definitions' name positions were stored: opened by this version, it gains
the columns, and the next index run reads every file again to fill them in, computing no vector
again (the chunks keep their ids and embedding hashes)."""

from __future__ import annotations

import shutil
import sqlite3

from conftest import SAMPLES

from codesearch.config import load_settings
from codesearch.indexing.index import CATALOG_NAME, Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.searcher import Searcher
from codesearch.search.types import DefinitionRequest


def test_an_old_catalog_gains_name_positions_without_embedding_again(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(SAMPLES / "python", root, ignore=shutil.ignore_patterns(".codesearch"))
    index = Index(root, load_settings(root), create=True)
    first = Indexer(index).run()
    assert first.vectors_embedded > 0
    index.close()
    with sqlite3.connect(root / ".codesearch" / CATALOG_NAME) as db:  # as the previous version left it
        db.execute("ALTER TABLE chunks DROP COLUMN name_line")
        db.execute("ALTER TABLE chunks DROP COLUMN name_column")

    index = Index(root, load_settings(root))
    report = Indexer(index).run()
    assert report.modified == first.added and report.added == 0
    assert report.vectors_embedded == 0 and report.chunks_written > 0
    found = Searcher(index).definitions(DefinitionRequest(name="parse_config")).definitions[0]
    assert (found.name_line, found.name_column) == (8, 5)
    again = Indexer(index).run()
    assert again.modified == 0 and again.unchanged == first.added
    index.close()


def test_an_old_catalog_gets_the_covering_indexes_that_grep_reads(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(SAMPLES / "python", root, ignore=shutil.ignore_patterns(".codesearch"))
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)
    index.close()
    catalog = root / ".codesearch" / CATALOG_NAME
    with sqlite3.connect(catalog) as db:  # the indexes as the previous version made them
        db.execute("DROP INDEX chunks_span")
        db.execute("DROP INDEX edges_into")
        db.execute("CREATE INDEX chunks_path ON chunks(path)")
        db.execute("CREATE INDEX edges_dst ON edges(dst)")

    Index(root, load_settings(root)).close()
    with sqlite3.connect(catalog) as db:
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        plan = " ".join(row[3] for row in db.execute(
            "EXPLAIN QUERY PLAN SELECT path, start_line, end_line, rid FROM chunks WHERE path IN ('a', 'b') "
            "ORDER BY path, start_line, end_line DESC"))
    assert {"chunks_span", "edges_into"} <= names and not {"chunks_path", "edges_dst"} & names
    assert "COVERING INDEX chunks_span" in plan and "TEMP B-TREE" not in plan


def test_an_index_of_another_chunk_format_reads_every_file_again_changing_only_what_differs(tmp_path):
    """Chunking changed (CHUNK_FORMAT): the next run reads every file again; chunks that come out
    the same keep their ids and embedding hashes (so their vectors), and a missing file
    centrality is computed."""
    root = tmp_path / "repo"
    shutil.copytree(SAMPLES / "python", root, ignore=shutil.ignore_patterns(".codesearch"))
    index = Index(root, load_settings(root), create=True)
    first = Indexer(index).run(embed=False)
    index.close()
    catalog = root / ".codesearch" / CATALOG_NAME
    with sqlite3.connect(catalog) as db:  # as an older version left it
        hashes = dict(db.execute("SELECT id, embed_hash FROM chunks").fetchall())
        db.execute("UPDATE meta SET value = '1' WHERE key = 'chunk_format'")
        db.execute("DELETE FROM meta WHERE key = 'file_rank_pending'")
        db.execute("DELETE FROM file_rank")
        file_chunk, text = db.execute("SELECT id, text FROM chunks WHERE kind = 'file' LIMIT 1").fetchone()
        db.execute("UPDATE chunks SET text = 'an old outline', embed_hash = 'old' WHERE id = ?", (file_chunk,))

    index = Index(root, load_settings(root))
    report = Indexer(index).run(embed=False)
    assert report.modified == first.added and report.added == 0
    with sqlite3.connect(catalog) as db:
        assert dict(db.execute("SELECT id, embed_hash FROM chunks").fetchall()) == hashes
        assert db.execute("SELECT text FROM chunks WHERE id = ?", (file_chunk,)).fetchone()[0] == text
        assert db.execute("SELECT COUNT(*) FROM file_rank").fetchone()[0] > 0
    again = Indexer(index).run(embed=False)
    assert again.modified == 0 and again.unchanged == first.added
    index.close()
