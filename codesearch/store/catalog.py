"""The catalog: one SQLite database (WAL) that is the source of truth for an index.

Files, chunks, call sites, imports, graph edges, the keyword index (FTS5) and the embedding
cache live here (their tables: `schema`). This class keeps the connections (one per thread),
the layout and its upgrade, transactions and the meta table; each concern is a part of it with
a module of its own, reached as an attribute: `files` (files and their chunks), `keywords`,
`vectors` (what Chroma holds and should hold, and the embedding cache), `graph` (definitions,
call sites, callers) and `stats`.

The layout keeps the catalog smaller than the code it indexes (docs/benchmarks.md, "Index size"):
- no text is stored twice, and none at all: a chunk's lines are read from its file when shown,
  the keyword index keeps no copy of the terms it indexes (FTS5 `content=''`), and what the
  embedding model needs is made again from the file when it is needed (indexing/vectors);
- rows point at each other by integer: a chunk at its file (`fid`) and parent (`parent`), a
  call site and an edge at chunks (`rid`), a call site at its interned name (`nid`);
- a parent contains its children through `chunks.parent`: no edge row says it again;
- hashes are bytes, cached vectors int8 (`vectors`).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..paths import sqlite_uri
from . import keyword_totals, vector_tables
from .catalog_stats import CatalogStats
from .files import Files
from .graph_reads import GraphReads
from .keywords import Keywords
from .schema import (
    CHUNKS_DELETED_TRIGGER,
    DEFERRED_INDEXES,
    DEFERRED_SCHEMA,
    LAYOUT_VERSION,
    SCHEMA,
    statement_creating,
    statements,
)
from .space import full_disk_line, is_out_of_space
from .sqlite import CONTENTLESS_DELETE, sqlite3
from .vector_tables import VectorBookkeeping

# While a run writes: the writer's page cache (SQLite's default is 2 MB) and the pages the WAL may
# hold before a checkpoint (default 1,000); larger while a run writes, so the writer reads and
# checkpoints less (docs/benchmarks.md, "A 100,000-file monorepo").
BULK_CACHE_KIB = 65536
# a write waits this long for another connection's write lock, then fails ("database is locked"):
# the daemon keeps such a batch and tries it again (daemon/core.py)
BUSY_TIMEOUT_SECONDS = 30.0
BULK_WAL_PAGES = 10000


class CatalogError(RuntimeError):
    """The catalog cannot be used as it is (locked, corrupt, from another version)."""


class CatalogDamaged(CatalogError):
    """The catalog's file is damaged: only a rebuild helps (`codesearch index --rebuild`)."""


class CatalogOutdated(CatalogError):
    """The catalog was written by an older codesearch in another layout: indexing rebuilds it
    (keeping its embedding cache); until then it cannot be searched."""


def is_damage(exc: BaseException) -> bool:
    """Whether a SQLite error means the database file itself is damaged (not busy, not locked)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", "")
    text = str(exc).lower()
    return name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or "malformed" in text or "not a database" in text



class _ThreadConnection:
    """One thread's connection, closed when that thread's locals go (the thread ended)."""

    __slots__ = ("__weakref__", "db")

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __del__(self) -> None:
        self.db.close()


class Catalog:
    """Typed access to the catalog database.

    Each thread gets its own connection, opened on first use: SQLite connections must not be
    shared between threads at once, and with WAL the readers then run beside each other and
    beside the one writer instead of queueing on a lock."""

    def __init__(self, path: Path, readonly: bool = False):
        self.path = Path(path)
        self.readonly = readonly
        self._local = threading.local()
        self._open: weakref.WeakSet[_ThreadConnection] = weakref.WeakSet()  # to close them all
        self._all_lock = threading.Lock()
        self.found_layout = 0  # the layout of the tables found (0: none yet); reset() rebuilds another
        self.files = Files(self)
        self.keywords = Keywords(self)
        self.vectors = VectorBookkeeping(self)
        self.graph = GraphReads(self)
        self.stats = CatalogStats(self)
        self._connect(initialize=not readonly)
        if not readonly:
            os.chmod(self.path, 0o600)  # SQLite gives its -wal and -shm files the same mode

    def _connect(self, initialize: bool = False) -> sqlite3.Connection:
        uri = sqlite_uri(self.path, self.readonly)
        try:
            db = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_SECONDS, check_same_thread=False,
                                 isolation_level=None)
            db.row_factory = sqlite3.Row
            db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
            if initialize:
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
            self.found_layout = self._layout_of(db)
            if initialize and not self.outdated:
                db.executescript(SCHEMA)
                if self.found_layout != LAYOUT_VERSION:  # a write: an index on a full disk still opens without it
                    db.execute(f"PRAGMA user_version = {LAYOUT_VERSION}")
            elif initialize:  # what Chroma holds is read there before the rebuild too, which keeps it
                db.execute(statement_creating("held_vectors"))
        except sqlite3.DatabaseError as exc:
            raise self._open_error(exc) from None
        holder = _ThreadConnection(db)
        self._local.holder = holder
        with self._all_lock:
            self._open.add(holder)
        if initialize and not self.outdated:
            try:
                self._ensure_trigger()
                self._ensure_deferred_indexes()
                self._true_keyword_totals()
            except sqlite3.DatabaseError as exc:
                raise self._open_error(exc) from None
        return db

    @property
    def outdated(self) -> bool:
        """Written by an older codesearch, in another layout: reset() builds it again."""
        return self.found_layout not in (0, LAYOUT_VERSION)

    @staticmethod
    def _layout_of(db: sqlite3.Connection) -> int:
        """The layout of the tables in `db`: 0 for none yet, 1 for catalogs of format 1 (which
        set no user_version), else the user_version."""
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version:
            return int(version)
        has_chunks = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chunks'").fetchone()
        return 1 if has_chunks else 0

    def _open_error(self, exc: sqlite3.DatabaseError) -> CatalogError:
        if is_damage(exc):
            return CatalogDamaged(f"the index database {self.path} is damaged ({exc})")
        why = full_disk_line(self.path.parent) if is_out_of_space(exc, self.path.parent) else exc
        return CatalogError(f"the index database {self.path} cannot be opened ({why})")

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection."""
        holder = getattr(self._local, "holder", None)
        return holder.db if holder is not None else self._connect()

    def _ensure_trigger(self) -> None:
        row = self.db.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' "
                              "AND name = 'chunks_deleted'").fetchone()
        if row is None or row[0] != CHUNKS_DELETED_TRIGGER:
            with self.transaction() as db:
                db.execute("DROP TRIGGER IF EXISTS chunks_deleted")
                db.execute(CHUNKS_DELETED_TRIGGER)

    def _ensure_deferred_indexes(self) -> None:
        """The DEFERRED_INDEXES a first index killed half way left out."""
        present = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        if not present.issuperset(DEFERRED_INDEXES):
            with self.transaction() as db:
                self.create_deferred_indexes(db)

    def create_deferred_indexes(self, db: sqlite3.Connection) -> list[str]:
        """DEFERRED_SCHEMA's indexes, in the caller's transaction; the files skipped on the way.
        Ids written while chunks_id was deferred may collide (the only index that can refuse
        them): the file of each chunk whose id an earlier chunk has loses its chunks and is
        skipped as `failed`, as when the index is there and refuses the row."""
        skipped: list[str] = []
        for statement in statements(DEFERRED_SCHEMA):
            try:
                with self.savepoint(db, "deferred_index"):
                    db.execute(statement)
            except sqlite3.IntegrityError:
                skipped = self.files.skip_colliding_ids(db)
                db.execute(statement)
        return skipped

    def _true_keyword_totals(self) -> None:
        """A catalog written before keyword_totals gets its totals counted once; one whose last
        writer stopped between a commit and its settling gets them settled."""
        db = self.db
        if not keyword_totals.known_exact(db):
            with self.transaction():
                keyword_totals.recount(db)
        elif keyword_totals.owing(db):
            with self.transaction():
                keyword_totals.settle(db)

    def require_current(self) -> None:
        """CatalogOutdated unless the tables are of this code's layout (search needs them)."""
        if self.outdated:
            raise CatalogOutdated(f"the index database {self.path} was written by an older codesearch; "
                                  "indexing builds it again (its cached vectors are kept)")

    def close(self) -> None:
        """Close every thread's connection (at shutdown, when no thread uses them any more)."""
        with self._all_lock:
            holders = list(self._open)
            self._open = weakref.WeakSet()
        for holder in holders:
            holder.db.close()
        self._local = threading.local()

    # --- transactions and metadata -------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error: all or nothing. Inside a
        transaction of this thread already, a savepoint of it: its writes are committed with
        that transaction or not at all (a daemon's batch is one transaction: `Indexer._one_transaction`)."""
        if self.db.in_transaction:
            with self.savepoint(self.db, "nested"):
                yield self.db
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            self._local.owes = False
            raise
        self.db.execute("COMMIT")
        if getattr(self._local, "owes", False):  # after FTS5 wrote its totals, at that commit
            self._local.owes = False
            self.db.execute("BEGIN IMMEDIATE")
            try:
                keyword_totals.settle(self.db)
            except BaseException:
                self.db.execute("ROLLBACK")  # still owed in meta: the next open settles it
                raise
            self.db.execute("COMMIT")

    @contextmanager
    def savepoint(self, db: sqlite3.Connection, name: str = "item") -> Iterator[None]:
        """A nested all-or-nothing step inside a transaction: on error its writes are undone and
        the error raised; the transaction goes on."""
        db.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            db.execute(f"ROLLBACK TO {name}")
            db.execute(f"RELEASE {name}")
            raise
        db.execute(f"RELEASE {name}")

    @contextmanager
    def bulk_writes(self) -> Iterator[None]:
        """Many rows written in a row on this thread's connection (an index run: its files, then
        its edges): meanwhile a larger page cache and fewer WAL checkpoints (each copies into the
        database pages that the next batches change again), as before afterwards."""
        db = self.db
        cache, wal_pages = (db.execute(f"PRAGMA {name}").fetchone()[0] for name in ("cache_size", "wal_autocheckpoint"))
        db.execute(f"PRAGMA cache_size = -{BULK_CACHE_KIB}")
        db.execute(f"PRAGMA wal_autocheckpoint = {BULK_WAL_PAGES}")
        try:
            yield
        finally:
            db.execute(f"PRAGMA cache_size = {cache}")
            db.execute(f"PRAGMA wal_autocheckpoint = {wal_pages}")

    @contextmanager
    def indexes_deferred(self, empty: bool) -> Iterator[list[str]]:
        """With `empty` (an empty catalog about to be filled), the writes inside go without the
        DEFERRED_INDEXES, created when the writes end, however they end; an error creating them
        is raised only when the writes themselves went well (it would hide their error). The list
        it gives gets the files that creating them skipped (create_deferred_indexes)."""
        skipped: list[str] = []
        if not empty:
            yield skipped
            return
        with self.transaction() as db:
            for name in DEFERRED_INDEXES:
                db.execute(f"DROP INDEX IF EXISTS {name}")
        wrote = False
        try:
            yield skipped
            wrote = True
        finally:
            try:
                with self.transaction() as db:
                    skipped += self.create_deferred_indexes(db)
            except (sqlite3.Error, CatalogError):
                if wrote:
                    raise

    def owe_keyword_totals(self, db: sqlite3.Connection, fid: int) -> None:
        """Before a file's keyword rows go: their sizes, taken off the totals after the commit."""
        keyword_totals.owe(db, fid)
        self._local.owes = True

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def is_empty(self) -> bool:
        return self.outdated or self.db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None

    def reset(self, keep_vectors: bool = True) -> bool:
        """Drop everything indexed (not the embedding cache): for schema or settings changes.
        Returns whether Chroma's vectors are kept: the rows that held them go to `held_vectors`
        (`keep_vectors`, and a layout that can say which), else to the deletion queue. A catalog
        of an older layout is built again in this one, its cache carried over (in one
        transaction)."""
        if self.outdated:
            return self._rebuild_layout(keep_vectors)
        with self.transaction() as db:
            if keep_vectors:
                vector_tables.hold_all(db)
            else:
                vector_tables.delete_all(db)
            db.execute("DROP TRIGGER IF EXISTS chunks_deleted")  # every row goes: none to clean up after one by one
            for table in ("calls", "imports", "edges", "chunks", "files", "meta", "names", "messages"):
                db.execute(f"DELETE FROM {table}")
            db.execute(CHUNKS_DELETED_TRIGGER)
            # its totals too, which deleting a contentless table's rows leaves (keyword_totals.py)
            db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all')" if CONTENTLESS_DELETE
                       else "DELETE FROM chunks_fts")
            keyword_totals.mark_exact(db)
        return keep_vectors

    def _rebuild_layout(self, keep_vectors: bool) -> bool:
        """This layout's tables in place of an older one's. From layout 2 on, the embedding cache
        is in this layout's form already and stays as it is, and chunks name the vectors Chroma
        holds as this layout does (id, vector_hash): those are held, and the queue of deletions
        is kept. Format 1's cache is read and written again, its vectors not (its store is made
        again from the cache)."""
        current_form = self.found_layout >= 2
        keep_vectors = keep_vectors and current_form
        cache = [] if current_form else list(self.vectors.cache_rows())
        kept_tables = {"embed_cache"} if current_form else set()
        if keep_vectors:
            kept_tables |= {"held_vectors", "vector_deletions"}
        with self.transaction() as db:
            if keep_vectors:
                vector_tables.hold_all(db)
            for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
                db.execute(f'DROP TRIGGER "{name}"')
            for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                      "AND sql LIKE 'CREATE VIRTUAL TABLE%'").fetchall():
                db.execute(f'DROP TABLE "{name}"')  # with its shadow tables
            for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                      "AND name NOT LIKE 'sqlite_%'").fetchall():
                if name not in kept_tables:
                    db.execute(f'DROP TABLE "{name}"')
            for statement in statements(SCHEMA + DEFERRED_SCHEMA):  # one by one: executescript would commit
                db.execute(statement)
            db.execute(CHUNKS_DELETED_TRIGGER)
            db.execute(f"PRAGMA user_version = {LAYOUT_VERSION}")
            keyword_totals.mark_exact(db)
            vector_tables.insert_cache_rows(db, cache)
        self.found_layout = LAYOUT_VERSION
        return keep_vectors

