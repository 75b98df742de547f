"""The catalog gives each thread its own SQLite connection, and closes them all on close()."""

from __future__ import annotations

import threading

import pytest

from codesearch.store.catalog import Catalog
from codesearch.store.sqlite import sqlite3


def test_each_thread_reads_through_its_own_connection(tmp_path):
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    seen: dict[str, int] = {}
    barrier = threading.Barrier(4)

    def read(name: str) -> None:
        barrier.wait()  # all four hold a connection at the same time
        seen[name] = id(catalog.db)
        assert catalog.files.chunk_count() == 0
        barrier.wait()

    threads = [threading.Thread(target=read, args=(f"t{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(seen.values())) == 4
    assert id(catalog.db) not in seen.values()  # this thread has its own too
    catalog.close()


def test_close_closes_every_threads_connection(tmp_path):
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    held: list[sqlite3.Connection] = []
    done = threading.Event()
    release = threading.Event()

    def hold() -> None:
        held.append(catalog.db)
        done.set()
        release.wait(10)

    thread = threading.Thread(target=hold)
    thread.start()
    done.wait(10)
    mine = catalog.db
    catalog.close()
    release.set()
    thread.join()
    for db in (mine, *held):
        with pytest.raises(sqlite3.ProgrammingError):
            db.execute("SELECT 1")


def test_a_finished_threads_connection_is_closed_with_it(tmp_path):
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    held: list[sqlite3.Connection] = []
    thread = threading.Thread(target=lambda: held.append(catalog.db))
    thread.start()
    thread.join()
    with pytest.raises(sqlite3.ProgrammingError):
        held[0].execute("SELECT 1")
    catalog.close()


@pytest.mark.parametrize("folder", ["a#b", "what?", "100% done", "x%20y", "spaced out"])
def test_a_catalog_in_a_folder_with_uri_characters_opens_there(tmp_path, folder):
    """`#`, `?` and `%` mean something in an SQLite URI: unescaped, the catalog went elsewhere."""
    path = tmp_path / folder / "catalog.sqlite3"
    path.parent.mkdir()
    catalog = Catalog(path)
    catalog.set_meta("mark", "here")
    catalog.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [folder]  # nothing written beside it
    reader = Catalog(path, readonly=True)
    try:
        assert reader.get_meta("mark") == "here"
    finally:
        reader.close()
