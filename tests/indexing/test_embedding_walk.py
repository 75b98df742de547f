"""The chunks that lack vectors, walked the way the daemon's embedding slices walk them: definitions
first, then file and block chunks. Finding the next definitions must not read the file and block
chunks still waiting before them: in a monorepo those are hundreds of thousands of rows."""

from __future__ import annotations

from pathlib import Path

from index_helpers import run_indexer

from codesearch.store.catalog import Catalog
from codesearch.store.sqlite import sqlite3

FILES = 300


def write_repo(root: Path) -> Path:
    """FILES modules, each a file chunk with one function: definitions and non-definitions
    alternate in rid order, as in any repository."""
    root.mkdir()
    for n in range(FILES):
        (root / f"m{n:03}.py").write_text(f'"""Module {n}."""\n\n\ndef handler_{n}(value):\n'
                                          f'    """Handle value {n}."""\n    return value + {n}\n')
    return root


def vm_steps(db: sqlite3.Connection, run) -> int:
    """SQLite virtual-machine instructions that `run` executes (in steps of ten)."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    db.set_progress_handler(count, 10)
    try:
        run()
    finally:
        db.set_progress_handler(None, 0)
    return steps * 10


def test_the_next_definitions_cost_the_same_however_many_file_chunks_wait_before_them(tmp_path):
    work = write_repo(tmp_path / "repo")
    run_indexer(work, embed=False)
    catalog = Catalog(work / ".codesearch" / "catalog.sqlite3")
    try:
        definitions = catalog.vectors.needing(10_000, 0, definitions=True)
        others = catalog.vectors.needing(10_000, 0, definitions=False)
        assert len(definitions) == FILES and {r.kind for r in definitions} == {"function"}
        assert len(others) >= FILES and "function" not in {r.kind for r in others}

        def next_slice() -> None:
            assert len(catalog.vectors.needing(8, 0, definitions=True)) == 8

        catalog.vectors.mark_stored(definitions[:8])
        early = vm_steps(catalog.db, next_slice)
        catalog.vectors.mark_stored(definitions[8:-8])  # now ~300 file chunks wait before
        late = vm_steps(catalog.db, next_slice)
        assert late < early * 1.5 + 100, (early, late)
        assert [r.rid for r in catalog.vectors.needing(100, 0, definitions=True)] == \
            [r.rid for r in definitions[-8:]]
        # the other kind waits whole, in rid order, walked in slices
        walked, after = [], 0
        while batch := catalog.vectors.needing(7, after, definitions=False):
            walked += batch
            after = batch[-1].rid
        assert [r.rid for r in walked] == [r.rid for r in others]
    finally:
        catalog.close()


def test_recording_vectors_reads_only_their_rows_while_the_id_index_waits(tmp_path):
    """The daemon embeds during its first index, before the index of chunk ids is made: each
    vector it records is found by rowid (a search by id read every chunk, inside the write
    transaction the indexer waits for), and a rowid that is another chunk's now is not marked."""
    work = write_repo(tmp_path / "repo")
    run_indexer(work, embed=False)
    catalog = Catalog(work / ".codesearch" / "catalog.sqlite3")
    try:
        rows = catalog.vectors.needing(10_000, 0, definitions=True)
        with catalog.transaction() as db:
            db.execute("DROP INDEX chunks_id")
        steps = vm_steps(catalog.db, lambda: catalog.vectors.mark_stored(rows[:8]))
        assert steps < 2_000, steps  # a scan by id: 8 x every row (over 600 chunks)
        assert len(catalog.vectors.needing(10_000, 0, definitions=True)) == FILES - 8
        assert catalog.vectors.mark_stored([rows[8]._replace(id="0" * 16), rows[9]]) == ["0" * 16]
    finally:
        catalog.close()
