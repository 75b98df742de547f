"""The keyword index's totals (rows, tokens per column: what bm25 reads) stay those of the rows it
holds: through re-indexing, a writer that stopped between its two commits, a rolled-back write,
and in catalogs written before they were kept (store/keyword_totals.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from index_helpers import copy_sample, run_indexer

from codesearch.store import keyword_totals
from codesearch.store.catalog import Catalog
from codesearch.store.sqlite import CONTENTLESS_DELETE, sqlite3

pytestmark = pytest.mark.skipif(not CONTENTLESS_DELETE, reason="a table with its own copy of the text keeps them")


def counted(db: sqlite3.Connection) -> list[int]:
    """The totals summed from every row's sizes."""
    columns = len(db.execute("SELECT * FROM chunks_fts LIMIT 0").description)
    sizes = [keyword_totals.varints(r[0]) for r in db.execute("SELECT sz FROM chunks_fts_docsize")]
    return [len(sizes)] + [sum(s[c] for s in sizes) for c in range(columns)]


def scores(db: sqlite3.Connection, word: str) -> list[tuple[int, float]]:
    return [tuple(r) for r in db.execute("SELECT rowid, round(bm25(chunks_fts), 9) FROM chunks_fts "
                                         "WHERE chunks_fts MATCH ? ORDER BY rowid", (word,))]


@pytest.fixture
def indexed(tmp_path) -> Path:
    work = copy_sample("python", tmp_path / "work")
    run_indexer(work, embed=False)
    return work


def catalog_of(work: Path) -> Catalog:
    return Catalog(work / ".codesearch" / "catalog.sqlite3")


def test_varints_read_back_what_was_written():
    values = [0, 1, 127, 128, 16_383, 16_384, 2**35, 2**56 - 1, 2**56, 2**63 - 1]
    assert keyword_totals.varints(keyword_totals.varint_bytes(values)) == values


def test_re_indexing_every_file_keeps_the_totals_of_the_rows_held(indexed):
    catalog = catalog_of(indexed)
    before = keyword_totals.totals(catalog.db)
    assert before == counted(catalog.db) and before[0] == catalog.files.chunk_count()
    for path in catalog.files.records():  # each file's rows deleted and written again
        with catalog.transaction() as db:
            catalog.files.delete(db, path)
    assert keyword_totals.totals(catalog.db)[:1] == [0]
    catalog.close()
    run_indexer(indexed, embed=False)
    catalog = catalog_of(indexed)
    assert keyword_totals.totals(catalog.db) == before  # SQLite alone: twice the rows
    catalog.close()


def test_a_catalog_written_before_counts_its_totals_again_once(indexed):
    path = indexed / ".codesearch" / "catalog.sqlite3"
    catalog = Catalog(path)
    right, word = counted(catalog.db), "clamp"
    expected = scores(catalog.db, word)
    assert expected
    with catalog.transaction() as db:  # as an older codesearch left it: every row counted thrice
        db.execute("UPDATE chunks_fts_data SET block = ? WHERE id = 1",
                   (keyword_totals.varint_bytes([3 * t for t in right]),))
        db.execute("DELETE FROM meta WHERE key = ?", (keyword_totals.EXACT_KEY,))
    assert scores(catalog.db, word) != expected
    catalog.close()
    catalog = Catalog(path)
    assert keyword_totals.totals(catalog.db) == right
    assert scores(catalog.db, word) == expected
    catalog.close()


def test_what_a_stopped_writer_owed_is_settled_at_the_next_open(indexed):
    path = indexed / ".codesearch" / "catalog.sqlite3"
    catalog = Catalog(path)
    db = catalog.db
    db.execute("BEGIN IMMEDIATE")  # a writer that commits and stops before settling
    catalog.files.delete(db, "config.py")
    db.execute("COMMIT")
    assert keyword_totals.totals(db) != counted(db)
    assert keyword_totals.owing(db)
    catalog._local.owes = False  # that process is gone
    catalog.close()
    catalog = Catalog(path)
    assert keyword_totals.totals(catalog.db) == counted(catalog.db)
    assert not keyword_totals.owing(catalog.db)
    catalog.close()


def test_a_write_rolled_back_owes_nothing(indexed):
    catalog = catalog_of(indexed)
    before = keyword_totals.totals(catalog.db)
    with pytest.raises(RuntimeError), catalog.transaction() as db:
        catalog.files.delete(db, "config.py")
        raise RuntimeError("the write fails half way")
    with catalog.transaction():  # the next write settles nothing
        pass
    assert keyword_totals.totals(catalog.db) == before == counted(catalog.db)
    catalog.close()


def test_reset_leaves_empty_totals(indexed):
    catalog = catalog_of(indexed)
    catalog.reset()
    assert keyword_totals.totals(catalog.db)[:1] in ([], [0])
    assert keyword_totals.known_exact(catalog.db)
    catalog.close()
