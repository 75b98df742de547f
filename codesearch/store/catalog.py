"""The catalog: one SQLite database (WAL) that is the source of truth for an index.

Files, chunks, call sites, imports, graph edges, the keyword index (FTS5) and the embedding
cache live here. Chroma only mirrors vectors; what Chroma still has to delete or add is itself
recorded here, in the same transactions, so a crash never loses track of it.

The layout keeps the catalog smaller than the code it indexes (docs/benchmarks.md, "Index size"):
- no text is stored twice, and none at all: a chunk's lines are read from its file when shown,
  the keyword index keeps no copy of the terms it indexes (FTS5 `content=''`), and what the
  embedding model needs is made again from the file when it is needed (indexing/vector_sync);
- rows point at each other by integer: a chunk at its file (`fid`) and parent (`parent`), a
  call site and an edge at chunks (`rid`), a call site at its interned name (`nid`);
- a parent contains its children through `chunks.parent`: no edge row says it again;
- hashes are bytes, vectors int8 (`vector_codec`).
"""

from __future__ import annotations

import os
import re
import threading
import time
import weakref
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..model import Chunk
from ..paths import sqlite_uri
from ..vocabulary import NON_DEFINITION_KINDS, Filters
from . import keyword_totals, vector_codec
from .space import full_disk_line, is_out_of_space
from .sqlite import CONTENTLESS_DELETE, sqlite3

SCHEMA_VERSION = 4  # what `meta.schema_version` says; an index of another version is rebuilt (3: file
# chunks read as their outline before their imports; Ruby's `class << self` named `self`; 4: terms
# of one character and stopwords not in the keyword index)
LAYOUT_VERSION = 3  # PRAGMA user_version: the tables' shape (format 1 had text ids and text copies;
# 2 kept chunk ids unique inside the chunks table and clustered calls by name)

# FTS5 keeps the index alone: no copy of the analysed text (`content=''`), whose rows can still
# be deleted from SQLite 3.43 on; an older library keeps a copy so that deletes work.
FTS_OPTIONS = "content='', contentless_delete=1" if CONTENTLESS_DELETE else ""
EDGE_KINDS = {"calls": 0, "imports": 1}  # `contains` is chunks.parent
MAX_CANDIDATES = 8  # a call resolution can only guess at goes to at most this many definitions of its name
GUESS_WEIGHT = 0.5  # ... which share this weight (a resolved call weighs 1)
EDGE_KIND_NAMES = {v: k for k, v in EDGE_KINDS.items()}
# While a run writes: the writer's page cache (SQLite's default is 2 MB) and the pages the WAL may
# hold before a checkpoint (default 1,000). 85,440 files: 187 -> 178 s (whole index, two runs
# each); resolving their calls alone 28.9 -> 26.1-27.4 s with the larger cache.
BULK_CACHE_KIB = 65536
# a write waits this long for another connection's write lock, then fails ("database is locked"):
# the daemon keeps such a batch and tries it again (daemon/core.py)
BUSY_TIMEOUT_SECONDS = 30.0
BULK_WAL_PAGES = 10000

_NOT_DEFINITIONS = ", ".join(f"'{kind}'" for kind in sorted(NON_DEFINITION_KINDS))

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(
    fid INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER, mtime_ns INTEGER, content_hash TEXT,
    language TEXT, skip_reason TEXT, skip_detail TEXT, indexed_at REAL);
CREATE TABLE IF NOT EXISTS chunks(
    rid INTEGER PRIMARY KEY, id TEXT NOT NULL, parent INTEGER, fid INTEGER NOT NULL,
    kind TEXT NOT NULL, name TEXT NOT NULL,
    qualified_name TEXT,  -- NULL: the same as name
    signature TEXT, docstring TEXT, start_line INTEGER, end_line INTEGER, part INTEGER,
    name_line INTEGER, name_column INTEGER,  -- where a definition's name stands (NULL: unknown)
    embed_hash BLOB,   -- hash of the text the embedding model sees
    vector_hash BLOB); -- embed_hash of the vector Chroma holds for this id (NULL: none yet)
-- a file's chunks, and where each lies: deleting a file's chunks, and placing a grep match in
-- its chunk, read this index alone (with the rowid it holds)
CREATE INDEX IF NOT EXISTS chunks_span ON chunks(fid, start_line, end_line DESC);
CREATE INDEX IF NOT EXISTS chunks_parent ON chunks(parent);  -- a chunk's children (containment)
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    name, path, signature, body, tokenize = 'porter unicode61'{', ' + FTS_OPTIONS if FTS_OPTIONS else ''});
CREATE TABLE IF NOT EXISTS names(nid INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);  -- called names
-- a call of a name from a chunk: clustered by caller (a chunk's calls; a file's come in rid
-- order, so writing them appends), and by name in calls_name (who calls NAME). `guess`:
-- resolution found no better candidates than every definition of the name, so no edge is stored
-- for it; relations answer it by name (store/edges.py)
CREATE TABLE IF NOT EXISTS calls(nid INTEGER NOT NULL, caller INTEGER NOT NULL, line INTEGER NOT NULL,
                                 guess INTEGER NOT NULL DEFAULT 0,
                                 PRIMARY KEY (caller, nid, line)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS imports(fid INTEGER NOT NULL, line INTEGER, module TEXT, text TEXT);
CREATE INDEX IF NOT EXISTS imports_fid ON imports(fid);
-- resolved calls and imports between chunks: out of a chunk by the key, into it by edges_into,
-- which also carries what a centrality needs (kind and weight)
CREATE TABLE IF NOT EXISTS edges(src INTEGER NOT NULL, kind INTEGER NOT NULL, dst INTEGER NOT NULL,
                                 weight REAL NOT NULL, PRIMARY KEY (src, kind, dst)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edges_into ON edges(dst, kind, weight);
CREATE TABLE IF NOT EXISTS vector_deletions(id TEXT PRIMARY KEY);
-- vectors Chroma holds for chunks that a rebuild (reset) dropped and has not written back yet:
-- those that come back with the same id, text and language keep theirs (settle_held_vectors),
-- the rest are deleted from Chroma, instead of emptying it and filling it again
CREATE TABLE IF NOT EXISTS held_vectors(id TEXT PRIMARY KEY, vector_hash BLOB NOT NULL, language TEXT) WITHOUT ROWID;
-- vectors by the hash of the text they were made from (which names the model too)
CREATE TABLE IF NOT EXISTS embed_cache(text_hash BLOB PRIMARY KEY, vector BLOB NOT NULL, used_at REAL);
"""

# Indexes that the writing of a file into an empty catalog never reads: a first index creates them
# at the end of its writing, sorting once, instead of inserting every row into them at a random
# place. 85,440 files: writing 171 -> 147 s, creating them 3 s (chunks_name, chunks_to_embed and
# the earlier calls_caller); chunks_name alone gave 167.5 and 170.6 s against 160.8 and 167.0 for
# all of them. Chunk ids are hashes, and calls were clustered by name: a batch's new ids (about
# 780) and call sites (about 2,000) landed at random places of their B-trees, and each commit
# wrote every page it had changed to the WAL. The monorepo's first index (86,545 files, 1,743
# batches) wrote 15.6 GB for a 1 GB catalog in 223 and 224 s; with chunks_id and calls_name
# deferred and calls clustered by caller, 5.7 GB in 198 and 203 s.
# Not chunks_parent: searches answered during a first index name it (the graph step's INDEXED
# BY), and its rows come nearly in order. Searches that would use the others scan meanwhile. A
# catalog left without them (a first index killed half way) gets them back at its next writable
# open.
DEFERRED_SCHEMA = f"""
CREATE INDEX IF NOT EXISTS chunks_name ON chunks(name COLLATE NOCASE);  -- names in any case
-- the chunks whose vector Chroma lacks, alone, definitions apart from the rest: the daemon's
-- embedding slices find the next ones, and count them, without scanning the rows already embedded
-- (1.3 million in a monorepo) nor, while definitions go first, the file and block chunks still
-- waiting before them (keyed by rid alone, a slice's search in the monorepo took 27 ms with 8%
-- of its definitions embedded, 55 ms at 46%, 99 ms at 93%; keyed so, 0.02 ms throughout)
CREATE INDEX IF NOT EXISTS chunks_to_embed ON chunks(kind IN ({_NOT_DEFINITIONS}), rid)
    WHERE embed_hash IS NOT NULL AND vector_hash IS NOT embed_hash;
-- chunks by id (results, vectors), and ids kept unique: a chunk whose id another chunk has
-- fails to be written, or, written while this index was deferred, has its file skipped
CREATE UNIQUE INDEX IF NOT EXISTS chunks_id ON chunks(id);
CREATE INDEX IF NOT EXISTS calls_name ON calls(nid, guess);  -- who calls NAME (and whose calls were guesses)
"""
DEFERRED_INDEXES = tuple(re.findall(r"INDEX IF NOT EXISTS (\w+) ", DEFERRED_SCHEMA))
COLLIDING_ID = "a chunk's id is another chunk's (a collision of their hashes)"

# The ids Chroma holds a vector for, as far as the catalog knows (a held id has no vector_hash).
_HELD_BY_CHROMA = "SELECT id FROM chunks WHERE vector_hash IS NOT NULL UNION ALL SELECT id FROM held_vectors"


def _hold_vectors(db: sqlite3.Connection) -> None:
    """The vectors Chroma holds for the chunks about to be dropped, into held_vectors (in id
    order: appended, not scattered over its B-tree)."""
    db.execute("INSERT OR REPLACE INTO held_vectors(id, vector_hash, language) SELECT c.id, c.vector_hash, "
               "f.language FROM chunks c JOIN files f ON f.fid = c.fid WHERE c.vector_hash IS NOT NULL ORDER BY c.id")


def _statement_creating(table: str) -> str:
    """SCHEMA's statement that creates `table`."""
    return next(s for s in _statements(SCHEMA) if f"CREATE TABLE IF NOT EXISTS {table}(" in s)


# Everything that hangs off a chunk goes with it.
CHUNKS_DELETED_TRIGGER = """CREATE TRIGGER chunks_deleted AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.rid;
    DELETE FROM edges WHERE src = old.rid;
    DELETE FROM edges WHERE dst = old.rid;
    DELETE FROM calls WHERE caller = old.rid;
    INSERT OR IGNORE INTO vector_deletions(id) SELECT old.id WHERE old.vector_hash IS NOT NULL;
END"""

# A Chunk from a row: path and language from its file, the parent's id from its row. No text:
# that is read from the file by whoever shows it (indexing/source.py).
_CHUNK_SELECT = ("c.id, p.id, f.path, f.language, c.kind, c.name, COALESCE(c.qualified_name, c.name), "
                 "COALESCE(c.signature, ''), COALESCE(c.docstring, ''), c.start_line, c.end_line, '', '', '', "
                 "c.part, COALESCE(c.name_line, 0), COALESCE(c.name_column, 0)")
_CHUNK_FROM = "chunks c JOIN files f ON f.fid = c.fid LEFT JOIN chunks p ON p.rid = c.parent"

KeywordColumns = tuple[str, str, str, str]  # analysed terms of name, path, signature+docstring, body


class ChunkSpan(NamedTuple):
    """What a chunk is and where it lies in its file: what a grep match shows of its chunk."""

    id: str
    kind: str
    name: str
    qualified_name: str
    start_line: int
    end_line: int
    name_line: int


class VectorRow(NamedTuple):
    """A chunk whose vector Chroma lacks: what the vector is made from and filed under."""

    rid: int
    id: str
    path: str
    language: str
    kind: str
    embed_hash: str


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


@dataclass
class FileRecord:
    path: str
    size: int
    mtime_ns: int
    content_hash: str
    language: str
    skip_reason: str | None


SQL_IN_SLICE = 500  # values per `IN (...)`: well under SQLite's limit on bound variables


def select_in(db: sqlite3.Connection, sql: str, values: list, before: tuple = (), after: tuple = ()) -> list:
    """Run `sql`, whose `{}` marks an `IN ({})` list, over `values` in slices; all rows.

    `before` and `after` are the parameters that stand before and after the list in `sql`."""
    rows: list = []
    for start in range(0, len(values), SQL_IN_SLICE):
        part = list(values[start:start + SQL_IN_SLICE])
        rows += db.execute(sql.format(",".join("?" * len(part))), [*before, *part, *after]).fetchall()
    return rows


def _statements(script: str) -> Iterator[str]:
    """The SQL statements of a script, whole (comments may hold semicolons)."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""


def _blob(hex_hash: str | None) -> bytes | None:
    return bytes.fromhex(hex_hash) if hex_hash else None


def _hex(blob: bytes | None) -> str | None:
    return blob.hex() if blob is not None else None


def _like_escaped(text: str) -> str:
    """`text` for a LIKE pattern with ESCAPE '\\': its own % and _ match themselves."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _ascii_lower(text: str) -> str:
    """Lower case as SQLite's NOCASE and lower() see it: ASCII letters only."""
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def filter_clause(filters: Filters, chunk: str = "c", file: str = "f") -> tuple[str, list]:
    """`AND ...` conditions on a chunk (as `chunk`) joined with its file (as `file`) for the
    filters, and their parameters."""
    clauses: list[str] = []
    params: list = []
    if filters.language:
        clauses.append(f"{file}.language = ?")
        params.append(filters.language)
    if filters.kind:
        clauses.append(f"{chunk}.kind = ?")
        params.append(filters.kind)
    if filters.path_glob:
        clauses.append(f"{file}.path GLOB ?")
        params.append(filters.path_glob)
    return (" AND " + " AND ".join(clauses)) if clauses else "", params


class DefinitionRow(NamedTuple):
    name: str
    rid: int
    id: str
    path: str
    qualified_name: str


_DEFINITIONS_SELECT = ("SELECT c.name, c.rid, c.id, f.path, COALESCE(c.qualified_name, c.name) FROM files f "
                       f"JOIN chunks c ON c.fid = f.fid WHERE c.part = 1 AND c.kind NOT IN ({_NOT_DEFINITIONS}) AND ")


def _in_candidate_order(rows: list, names: set[str]) -> list[DefinitionRow]:
    """The rows of these exact names, each once (a row comes once per slice of an IN list it
    matches: "Map" in one slice and "map" in the next), by path, qualified name and id."""
    unique = {r[1]: r for r in rows if r[0] in names}
    return sorted((DefinitionRow(*r) for r in unique.values()), key=lambda r: (r.path, r.qualified_name, r.id))


def definitions_in_order(db: sqlite3.Connection, names: Iterable[str]) -> list[DefinitionRow]:
    """The definitions (first parts) of these exact names, in the order call resolution ranks
    candidates: by path, qualified name and id (so the same tree gives the same edges and the
    same guesses, however it was indexed)."""
    wanted = sorted(set(names))
    rows = select_in(db, _DEFINITIONS_SELECT + "c.name COLLATE NOCASE IN ({})", wanted)
    return _in_candidate_order(rows, set(wanted))


def definitions_in_files(db: sqlite3.Connection, names: set[str], paths: Iterable[str]) -> list[DefinitionRow]:
    """definitions_in_order for these names, only those in these files: read by file, so the
    cost follows the files, not how often the names are defined elsewhere."""
    return _in_candidate_order(select_in(db, _DEFINITIONS_SELECT + "f.path IN ({})", sorted(set(paths))), names)


def definitions_at_most(db: sqlite3.Connection, name: str, most: int) -> int:
    """How many definitions this exact name has, counted up to `most` (a bound, not a total: cheap
    for a name defined in thousands of files)."""
    return int(db.execute(f"SELECT COUNT(*) FROM (SELECT 1 FROM chunks WHERE name COLLATE NOCASE = ?1 AND name = ?1 "
                          f"AND part = 1 AND kind NOT IN ({_NOT_DEFINITIONS}) LIMIT ?2)", (name, most)).fetchone()[0])


def chunks_named_at_most(db: sqlite3.Connection, name: str, most: int) -> int:
    """How many chunks of any kind carry this name in any case, counted up to `most`: read from
    the name index alone, so a bound on the name's definitions at the cost of a lookup."""
    return int(db.execute("SELECT COUNT(*) FROM (SELECT 1 FROM chunks INDEXED BY chunks_name "
                          "WHERE name COLLATE NOCASE = ? LIMIT ?)", (name, most)).fetchone()[0])


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
                db.execute(_statement_creating("held_vectors"))
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
        for statement in _statements(DEFERRED_SCHEMA):
            try:
                with self.savepoint(db, "deferred_index"):
                    db.execute(statement)
            except sqlite3.IntegrityError:
                skipped = self._skip_files_of_colliding_ids(db)
                db.execute(statement)
        return skipped

    def _skip_files_of_colliding_ids(self, db: sqlite3.Connection) -> list[str]:
        rows = db.execute("SELECT DISTINCT f.path FROM chunks c JOIN files f ON f.fid = c.fid "
                          "WHERE c.rid NOT IN (SELECT MIN(rid) FROM chunks GROUP BY id)").fetchall()
        for (path,) in rows:
            self.delete_chunks_of(db, path)
            db.execute("UPDATE files SET content_hash = '', skip_reason = 'failed', skip_detail = ? WHERE path = ?",
                       (COLLIDING_ID, path))
        return [path for (path,) in rows]

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
        that transaction or not at all (a daemon's batch is one transaction: `one_transaction`)."""
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
                _hold_vectors(db)
            else:
                db.execute(f"INSERT OR IGNORE INTO vector_deletions(id) {_HELD_BY_CHROMA}")
                db.execute("DELETE FROM held_vectors")
            db.execute("DROP TRIGGER IF EXISTS chunks_deleted")  # every row goes: none to clean up after one by one
            for table in ("calls", "imports", "edges", "chunks", "files", "meta", "names"):
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
        cache = [] if current_form else list(self.cached_vector_rows())
        kept_tables = {"embed_cache"} if current_form else set()
        if keep_vectors:
            kept_tables |= {"held_vectors", "vector_deletions"}
        with self.transaction() as db:
            if keep_vectors:
                _hold_vectors(db)
            for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
                db.execute(f'DROP TRIGGER "{name}"')
            for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                      "AND sql LIKE 'CREATE VIRTUAL TABLE%'").fetchall():
                db.execute(f'DROP TABLE "{name}"')  # with its shadow tables
            for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                      "AND name NOT LIKE 'sqlite_%'").fetchall():
                if name not in kept_tables:
                    db.execute(f'DROP TABLE "{name}"')
            for statement in _statements(SCHEMA + DEFERRED_SCHEMA):  # one by one: executescript would commit
                db.execute(statement)
            db.execute(CHUNKS_DELETED_TRIGGER)
            db.execute(f"PRAGMA user_version = {LAYOUT_VERSION}")
            keyword_totals.mark_exact(db)
            db.executemany("INSERT OR IGNORE INTO embed_cache(text_hash, vector, used_at) VALUES (?, ?, ?)",
                           [(bytes.fromhex(h), v, used) for h, v, used in cache])
        self.found_layout = LAYOUT_VERSION
        return keep_vectors

    def holds_vectors(self) -> bool:
        """Whether a rebuild holds vectors (it has not written the whole tree again yet)."""
        return self.db.execute("SELECT 1 FROM held_vectors LIMIT 1").fetchone() is not None

    def settle_held_vectors(self) -> tuple[int, int]:
        """After a rebuild has written the tree again: (chunks that keep the vector Chroma held for
        their id, held vectors queued for deletion). A chunk keeps it when its file's language is
        the one the vector is filed under (its id fixes path and kind); one whose text changed
        keeps it until the sync replaces it, as after any edit, and one filed under another
        language gets a new one over it. Those of chunks gone, or no longer embedded, are deleted."""
        if not self.holds_vectors():
            return 0, 0
        with self.transaction() as db:
            kept = db.execute(
                "UPDATE chunks SET vector_hash = (SELECT h.vector_hash FROM held_vectors h WHERE h.id = chunks.id) "
                "WHERE vector_hash IS NULL AND embed_hash IS NOT NULL AND EXISTS (SELECT 1 FROM held_vectors h "
                "JOIN files f ON f.fid = chunks.fid WHERE h.id = chunks.id AND h.language IS f.language)").rowcount
            given_up = db.execute(
                "INSERT OR IGNORE INTO vector_deletions(id) SELECT h.id FROM held_vectors h WHERE NOT EXISTS "
                "(SELECT 1 FROM chunks c WHERE c.id = h.id AND c.embed_hash IS NOT NULL)").rowcount
            db.execute("DELETE FROM held_vectors")
        return kept, given_up

    # --- files ----------------------------------------------------------------------------
    def files(self) -> dict[str, FileRecord]:
        rows = self.db.execute("SELECT path, size, mtime_ns, content_hash, language, skip_reason FROM files")
        return {r[0]: FileRecord(*r) for r in rows}

    def files_within(self, scope: Iterable[str]) -> dict[str, FileRecord]:
        """The records of these paths and of everything under those that are folders ("" is the
        root: every file); a save in a 100,000-file tree reads its own record, not all of them."""
        wanted = set(scope)
        if "" in wanted:
            return self.files()
        sql = "SELECT path, size, mtime_ns, content_hash, language, skip_reason FROM files"
        out = {r[0]: FileRecord(*r) for r in select_in(self.db, sql + " WHERE path IN ({})", sorted(wanted))}
        for folder in sorted(wanted):  # '/' + 1 is '0': the range holds exactly the paths under it
            out.update((r[0], FileRecord(*r)) for r in self.db.execute(
                sql + " WHERE path >= ? AND path < ?", (folder + "/", folder + "0")))
        return out

    def indexed_hashes(self) -> Iterator[tuple[str, str]]:
        """(path, content hash) of every file, the hash "" for a skipped one (streamed)."""
        yield from self.db.execute("SELECT path, CASE WHEN skip_reason IS NULL THEN COALESCE(content_hash, '') "
                                   "ELSE '' END FROM files")

    def file_record(self, path: str) -> FileRecord | None:
        row = self.db.execute("SELECT path, size, mtime_ns, content_hash, language, skip_reason FROM files "
                              "WHERE path = ?", (path,)).fetchone()
        return FileRecord(*row) if row else None

    def _file_id(self, db: sqlite3.Connection, path: str) -> int:
        """The file's row id, making a row for it when there is none yet."""
        row = db.execute("SELECT fid FROM files WHERE path = ?", (path,)).fetchone()
        if row:
            return int(row[0])
        return int(db.execute("INSERT INTO files(path) VALUES (?) RETURNING fid", (path,)).fetchone()[0])

    def upsert_file(self, db: sqlite3.Connection, record: FileRecord, detail: str = "") -> None:
        """Write a file's record; its row (and so its chunks' `fid`) stays the same."""
        db.execute("INSERT INTO files(path, size, mtime_ns, content_hash, language, skip_reason, skip_detail, "
                   "indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET size = excluded.size, "
                   "mtime_ns = excluded.mtime_ns, content_hash = excluded.content_hash, language = excluded.language, "
                   "skip_reason = excluded.skip_reason, skip_detail = excluded.skip_detail, "
                   "indexed_at = excluded.indexed_at",
                   (record.path, record.size, record.mtime_ns, record.content_hash, record.language,
                    record.skip_reason, detail, time.time()))

    def delete_file(self, db: sqlite3.Connection, path: str) -> None:
        self.delete_chunks_of(db, path)
        db.execute("DELETE FROM files WHERE path = ?", (path,))

    def delete_chunks_of(self, db: sqlite3.Connection, path: str) -> None:
        """A file's chunks, with their call sites, edges and keyword rows (the trigger), and imports."""
        row = db.execute("SELECT fid FROM files WHERE path = ?", (path,)).fetchone()
        if row is None:
            return
        db.execute("DELETE FROM imports WHERE fid = ?", (row[0],))
        self._owe_keyword_totals(db, row[0])
        db.execute("DELETE FROM chunks WHERE fid = ?", (row[0],))

    def _owe_keyword_totals(self, db: sqlite3.Connection, fid: int) -> None:
        """Before a file's keyword rows go: their sizes, taken off the totals after the commit."""
        keyword_totals.owe(db, fid)
        self._local.owes = True

    # --- chunks ---------------------------------------------------------------------------
    def write_chunks(self, db: sqlite3.Connection, path: str, chunks: list[Chunk],
                     embed_hashes: Mapping[str, str | None], keywords: list[KeywordColumns],
                     keyword_rows_out: list) -> dict[str, int]:
        """Make these (parents before children, as chunking makes them, with their keyword-index
        rows: `keyword_columns` of each chunk, see analysis/rows.py) one file's chunks, in place of
        those it had. A chunk whose id stays keeps its row, so the calls and imports into it from
        other files stay as they are: saving a file that thousands call rewrites none of those
        edges. What came from its old text goes (call sites, edges out, keyword row, the file's
        imports) and is written anew. Its vector stays until the new one is made: Chroma still
        holds it (`vector_hash`), and the chunk stays findable by meaning meanwhile. Returns their
        rows (rid) by chunk id; their keyword-index rows go to `keyword_rows_out`, for
        insert_keywords once the caller's savepoints are done (FTS5 writes a segment of what it
        holds at every savepoint)."""
        fid = self._file_id(db, path)
        old = {r[0]: (r[1], r[2]) for r in db.execute("SELECT id, rid, vector_hash FROM chunks WHERE fid = ?", (fid,))}
        wanted = {c.id for c in chunks}
        if old:  # every keyword row of the file goes, the kept chunks' too
            self._owe_keyword_totals(db, fid)
        select_in(db, "DELETE FROM chunks WHERE rid IN ({})", [rid for cid, (rid, _) in old.items()
                                                               if cid not in wanted])  # the trigger cleans up
        kept = [old[c.id][0] for c in chunks if c.id in old]
        for table, column in (("chunks_fts", "rowid"), ("edges", "src"), ("calls", "caller")):
            select_in(db, f"DELETE FROM {table} WHERE {column} IN ({{}})", kept)
        db.execute("DELETE FROM imports WHERE fid = ?", (fid,))
        next_rid = db.execute("SELECT COALESCE(MAX(rid), 0) + 1 FROM chunks").fetchone()[0]
        rids: dict[str, int] = {}
        for c in chunks:
            if c.id in old:
                rids[c.id] = old[c.id][0]
            else:
                rids[c.id], next_rid = next_rid, next_rid + 1
        # a kept chunk that no longer gets a vector gives its old one up
        dropped = [c.id for c in chunks if c.id in old and old[c.id][1] is not None and not embed_hashes.get(c.id)]
        db.executemany("INSERT OR IGNORE INTO vector_deletions(id) VALUES (?)", [(i,) for i in dropped])
        db.executemany(
            "INSERT INTO chunks(rid, id, parent, fid, kind, name, qualified_name, signature, docstring, start_line,"
            " end_line, part, name_line, name_column, embed_hash, vector_hash) VALUES (" + ", ".join("?" * 16) + ") "
            "ON CONFLICT(rid) DO UPDATE SET parent = excluded.parent, kind = excluded.kind, name = excluded.name, "
            "qualified_name = excluded.qualified_name, signature = excluded.signature, "
            "docstring = excluded.docstring, start_line = excluded.start_line, end_line = excluded.end_line, "
            "part = excluded.part, name_line = excluded.name_line, name_column = excluded.name_column, "
            "embed_hash = excluded.embed_hash, "
            "vector_hash = CASE WHEN excluded.embed_hash IS NULL THEN NULL ELSE chunks.vector_hash END",
            [(rids[c.id], c.id, rids.get(c.parent_id) if c.parent_id else None, fid, c.kind, c.name,
              None if c.qualified_name == c.name else c.qualified_name, c.signature or None, c.docstring or None,
              c.start_line, c.end_line, c.part, c.name_line or None, c.name_column or None,
              _blob(embed_hashes.get(c.id)), None)
             for c in chunks])
        keyword_rows_out.extend((rids[c.id], *k) for c, k in zip(chunks, keywords))
        return rids

    def insert_keywords(self, db: sqlite3.Connection, rows: list[tuple[int, str, str, str, str]]) -> None:
        """Keyword-index rows (rid, name, path, signature, body) of chunks written."""
        db.executemany("INSERT INTO chunks_fts(rowid, name, path, signature, body) VALUES (?, ?, ?, ?, ?)", rows)

    def chunks_by_ids(self, ids: list[str]) -> dict[str, Chunk]:
        """Chunks by id, without their text (`header` and `text` empty: see indexing/source.py).
        Rows come back as plain tuples: a search builds a hundred of these."""
        cursor = self.db.cursor()
        cursor.row_factory = None
        out: dict[str, Chunk] = {}
        for start in range(0, len(ids), SQL_IN_SLICE):
            part = ids[start:start + SQL_IN_SLICE]
            cursor.execute(f"SELECT {_CHUNK_SELECT} FROM {_CHUNK_FROM} WHERE c.id IN ({','.join('?' * len(part))})",
                           part)
            out.update((row[0], Chunk(*row)) for row in cursor.fetchall())
        return out

    def chunks_needing_vectors(self, limit: int, after_rid: int, definitions: bool) -> list[VectorRow]:
        """At most `limit` chunks whose current vector Chroma lacks, in rid order after
        `after_rid` (a caller walks them slice by slice: nothing of the whole repository is held
        at once); only definitions or only the others (chunks_to_embed holds them apart)."""
        sql = ("SELECT c.rid, c.id, f.path, f.language, c.kind, c.embed_hash FROM chunks c "
               f"JOIN files f ON f.fid = c.fid WHERE (c.kind IN ({_NOT_DEFINITIONS})) = ? AND c.rid > ? "
               "AND c.embed_hash IS NOT NULL AND c.vector_hash IS NOT c.embed_hash ORDER BY c.rid LIMIT ?")
        rows = self.db.execute(sql, (not definitions, after_rid, limit))
        return [VectorRow(r[0], r[1], r[2], r[3], r[4], r[5].hex()) for r in rows]

    def count_needing_vectors(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM chunks WHERE embed_hash IS NOT NULL "
                                   "AND vector_hash IS NOT embed_hash").fetchone()[0])

    def mark_vectors(self, rows: Sequence[VectorRow]) -> list[str]:
        """Record that Chroma now holds these rows' vectors; returns the ids that no longer exist
        (deleted meanwhile), whose vectors the caller must remove again. Found by rowid, and the
        id checked (a rowid freed meanwhile may be another chunk's): the index on ids may not be
        there yet (the daemon embeds during its first index)."""
        gone = []
        with self.transaction() as db:
            for row in rows:
                if db.execute("UPDATE chunks SET vector_hash = ? WHERE rid = ? AND id = ?",
                              (bytes.fromhex(row.embed_hash), row.rid, row.id)).rowcount == 0:
                    gone.append(row.id)
            if self.holds_vectors():  # the vector a rebuild held is replaced (an id is held or its chunk's)
                db.executemany("DELETE FROM held_vectors WHERE id = ?", [(row.id,) for row in rows])
        return gone

    def pending_vector_deletions(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT id FROM vector_deletions")]

    def clear_vector_deletions(self, ids: list[str]) -> None:
        with self.transaction() as db:
            db.executemany("DELETE FROM vector_deletions WHERE id = ?", [(i,) for i in ids])

    # --- call sites, imports ----------------------------------------------------------------
    def insert_calls(self, db: sqlite3.Connection, rows: list[tuple[str, str, str, int]],
                     rids: dict[str, int]) -> None:
        """(caller chunk id, path, called name, line) of one file, whose chunks write_chunks
        has written (`rids`: their rows, as it returned them)."""
        if not rows:
            return
        names = self._name_ids(db, {r[2] for r in rows})
        db.executemany("INSERT OR IGNORE INTO calls(nid, caller, line) VALUES (?, ?, ?)",
                       [(names[name], rids[caller], line) for caller, _, name, line in rows if caller in rids])

    def _name_ids(self, db: sqlite3.Connection, names: set[str]) -> dict[str, int]:
        """Interned ids of called names, made for those new to the catalog."""
        ordered = sorted(names)
        db.executemany("INSERT OR IGNORE INTO names(name) VALUES (?)", [(n,) for n in ordered])
        return dict(select_in(db, "SELECT name, nid FROM names WHERE name IN ({})", ordered))

    def insert_imports(self, db: sqlite3.Connection, rows: list[tuple[str, str, int, str]]) -> None:
        """(path, module, line, statement) of one file."""
        if not rows:
            return
        fid = self._file_id(db, rows[0][0])
        db.executemany("INSERT INTO imports(fid, line, module, text) VALUES (?, ?, ?, ?)",
                       [(fid, line, module, text) for _, module, line, text in rows])

    # --- embedding cache ------------------------------------------------------------------
    def cached_vectors(self, hashes: list[str]) -> dict[str, np.ndarray]:
        """Text hash -> the vector cached for it (float32, as `vector_codec` gives it back)."""
        rows = select_in(self.db, "SELECT text_hash, vector FROM embed_cache WHERE text_hash IN ({})",
                         [bytes.fromhex(h) for h in hashes])
        return {r[0].hex(): vector_codec.unpack(r[1]) for r in rows}

    def cache_vectors(self, items: list[tuple[str, np.ndarray]]) -> None:
        now = time.time()
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO embed_cache(text_hash, vector, used_at) VALUES (?, ?, ?)",
                           [(bytes.fromhex(h), vector_codec.pack(v), now) for h, v in items])

    def prune_cache(self, keep: int) -> int:
        """Keep the `keep` most recently used cached vectors, plus every live one (a sync that
        embedded a few chunks of a monorepo's million asks to keep 50,000: the live ones past
        that went too, and a vector store rebuilt from the cache had to embed them again)."""
        with self.transaction() as db:
            db.execute("UPDATE embed_cache SET used_at = ? WHERE text_hash IN (SELECT embed_hash FROM chunks)",
                       (time.time(),))
            cur = db.execute("DELETE FROM embed_cache WHERE rowid NOT IN (SELECT rowid FROM embed_cache "
                             "ORDER BY used_at DESC LIMIT ?) AND text_hash NOT IN "
                             "(SELECT embed_hash FROM chunks WHERE embed_hash IS NOT NULL)", (keep,))
            return cur.rowcount

    def cached_vector_rows(self) -> Iterator[tuple[str, bytes, float]]:
        """Every row of the embedding cache that can still be read, as (text hash, vector in this
        layout's form, last used): for a rebuild, from a damaged catalog or one of format 1 too
        (a damaged catalog may give up half way; what came out is kept)."""
        try:
            if self.found_layout == 1:  # hex hashes beside the model's name, float32 vectors
                for row in self.db.execute("SELECT text_hash, vector, used_at FROM embed_cache"):
                    yield row[0], vector_codec.from_float32(row[1]), row[2]
                return
            for row in self.db.execute("SELECT text_hash, vector, used_at FROM embed_cache"):
                yield row[0].hex(), row[1], row[2]
        except sqlite3.DatabaseError:
            return

    def restore_cache_rows(self, rows: list[tuple[str, bytes, float]]) -> None:
        with self.transaction() as db:
            db.executemany("INSERT OR IGNORE INTO embed_cache(text_hash, vector, used_at) VALUES (?, ?, ?)",
                           [(bytes.fromhex(h), v, used) for h, v, used in rows])

    # --- vector bookkeeping -----------------------------------------------------------------
    def ids_with_vectors(self, ids: list[str]) -> set[str]:
        """Those of `ids` that Chroma holds a vector for: their chunk's, or one a rebuild holds."""
        rows = select_in(self.db, f"SELECT id FROM ({_HELD_BY_CHROMA}) WHERE id IN ({{}})", ids)
        return {r[0] for r in rows}

    def live_vector_ids(self) -> set[str]:
        """Every chunk id that Chroma should hold a vector for."""
        return {r[0] for r in self.db.execute(_HELD_BY_CHROMA)}

    def expected_vector_count(self) -> int:
        """How many vectors Chroma should hold: chunks whose vector it was given, and those a
        rebuild holds (a catalog that no writer has opened since held_vectors came has none)."""
        if self.outdated:
            return 0
        count = "SELECT COUNT(*) FROM chunks WHERE vector_hash IS NOT NULL"
        if self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'held_vectors'").fetchone():
            count += " UNION ALL SELECT COUNT(*) FROM held_vectors"
        return sum(r[0] for r in self.db.execute(count))

    def forget_all_vectors(self) -> None:
        """The vector store is gone (damaged, deleted): every chunk needs its vector again, and
        there is nothing left to delete from it. The embedding cache keeps what was computed."""
        with self.transaction() as db:
            db.execute("UPDATE chunks SET vector_hash = NULL WHERE vector_hash IS NOT NULL")
            db.execute("DELETE FROM vector_deletions")
            db.execute("DELETE FROM held_vectors")

    def forget_vectors(self, ids: list[str]) -> None:
        """Mark chunks as lacking vectors (Chroma lost them): the next sync embeds them again."""
        with self.transaction() as db:
            db.executemany("UPDATE chunks SET vector_hash = NULL WHERE id = ?", [(i,) for i in ids])
            db.executemany("DELETE FROM held_vectors WHERE id = ?", [(i,) for i in ids])

    def needs_vectors(self) -> bool:
        """Whether Chroma lags the catalog: chunks without current vectors, or vectors to delete.
        Not while a rebuild holds vectors: the chunks it writes get theirs back at its end, and a
        daemon's slices would meanwhile store them again from the cache."""
        db = self.db
        if self.holds_vectors():
            return False
        return bool(db.execute("SELECT 1 FROM chunks WHERE embed_hash IS NOT NULL AND vector_hash IS NOT embed_hash "
                               "LIMIT 1").fetchone()
                    or db.execute("SELECT 1 FROM vector_deletions LIMIT 1").fetchone())

    def vector_coverage(self) -> tuple[int, int]:
        """(chunks that get a vector, those whose current vector Chroma holds): a table scan."""
        row = self.db.execute("SELECT COUNT(embed_hash), SUM(vector_hash = embed_hash) FROM chunks").fetchone()
        return int(row[0] or 0), int(row[1] or 0)

    def definitions_of(self, path: str) -> set[tuple[str, str]]:
        """(name, chunk id) of the definitions a file holds: what call resolution can choose."""
        rows = self.db.execute(f"SELECT c.name, c.id FROM chunks c JOIN files f ON f.fid = c.fid WHERE "
                               f"f.path = ? AND c.part = 1 AND c.kind NOT IN ({_NOT_DEFINITIONS})", (path,))
        return {(r[0], r[1]) for r in rows}  # tuples: a sqlite3.Row equals no tuple

    def names_defined_in(self, path: str) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT DISTINCT c.name FROM chunks c JOIN files f ON f.fid = c.fid "
                                              "WHERE f.path = ?", (path,))}

    # --- search ---------------------------------------------------------------------------
    def chunk_count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def document_frequency(self, term: str, named: bool = False) -> int:
        """Chunks whose keyword index holds `term` (matched, so stemmed exactly as indexed); `named`:
        in their name or signature."""
        return int(self.db.execute("SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH ?",
                                   (_phrases([], [term]) if named else _phrases([term]),)).fetchone()[0])

    def keyword_search(self, terms: list[str], column_weights: tuple[float, ...], filters: Filters,
                       limit: int, every: bool = False, named: Sequence[str] = ()) -> list[tuple[str, float]]:
        """(chunk id, BM25 score, higher is better) of chunks holding any of `terms` (`every`: all
        of them) or holding one of `named` in their name or signature, best first."""
        match = _phrases(terms, named, " AND " if every else " OR ")
        weights = ", ".join(str(w) for w in column_weights)
        if not filters.active:
            rows = self.db.execute(
                f"SELECT c.id, s.score FROM (SELECT rowid, bm25(chunks_fts, {weights}) AS score FROM chunks_fts "
                f"WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?) s JOIN chunks c ON c.rid = s.rowid "
                f"ORDER BY s.score", (match, limit)).fetchall()
        else:
            where, params = filter_clause(filters)
            rows = self.db.execute(
                f"SELECT c.id, bm25(chunks_fts, {weights}) AS score FROM chunks_fts "
                f"JOIN chunks c ON c.rid = chunks_fts.rowid JOIN files f ON f.fid = c.fid "
                f"WHERE chunks_fts MATCH ?{where} ORDER BY score LIMIT ?", [match, *params, limit]).fetchall()
        return [(r[0], -r[1]) for r in rows]

    def ids_matching(self, ids: list[str], filters: Filters) -> set[str]:
        """Those of `ids` whose chunk passes the filters."""
        where, params = filter_clause(filters)
        rows = select_in(self.db, f"SELECT c.id FROM chunks c JOIN files f ON f.fid = c.fid "
                                  f"WHERE c.id IN ({{}}){where}", ids, after=tuple(params))
        return {r[0] for r in rows}

    def definitions_named(self, names: Iterable[str], lowered: Iterable[str] = ()) -> list[str]:
        """Ids of definitions (first parts) named exactly one of `names`, or, lower-cased, one of
        `lowered`: one lookup in the case-blind name index, then the exact test here."""
        exact, lower = set(names), {_ascii_lower(n) for n in lowered}
        if not exact and not lower:
            return []
        wanted = sorted(exact | lower)
        rows = select_in(self.db, f"SELECT rid, id, name FROM chunks WHERE name COLLATE NOCASE IN ({{}}) AND part = 1 "
                                  f"AND kind NOT IN ({_NOT_DEFINITIONS})", wanted)
        return [r[1] for r in sorted(rows, key=lambda r: r[0]) if r[2] in exact or _ascii_lower(r[2]) in lower]

    def definitions_with_name(self, name: str) -> list[tuple[str, str]]:
        """(id, qualified name) of the definitions (first parts) named `name`."""
        rows = self.db.execute(f"SELECT id, COALESCE(qualified_name, name), name FROM chunks "
                               f"WHERE name COLLATE NOCASE = ? AND part = 1 AND kind NOT IN ({_NOT_DEFINITIONS}) "
                               f"ORDER BY rid", (name,)).fetchall()
        return [(r[0], r[1]) for r in rows if r[2] == name]

    def definitions_matching(self, text: str, limit: int) -> list[str]:
        """Ids of definitions (first parts) whose name contains `text`, case-insensitively: the
        exact name first, then the same name in another case, then names that start with it,
        then the rest; shorter names first within each."""
        lowered = text.lower()
        escaped = _like_escaped(lowered)
        rows = self.db.execute(  # LIKE ignores ASCII case already (as lower() is ASCII only)
            f"SELECT c.id FROM chunks c JOIN files f ON f.fid = c.fid WHERE c.name LIKE ? ESCAPE '\\' "
            f"AND c.part = 1 AND c.kind NOT IN ({_NOT_DEFINITIONS}) "
            f"ORDER BY c.name = ? DESC, lower(c.name) = ? DESC, c.name LIKE ? ESCAPE '\\' DESC, length(c.name), "
            f"f.path, c.start_line LIMIT ?", (f"%{escaped}%", text, lowered, f"{escaped}%", limit)).fetchall()
        return [r[0] for r in rows]

    def call_sites(self, name: str, limit: int) -> list[tuple[str, str, int]]:
        """(caller chunk id, path, line) of the recorded calls of `name`, in path and line order."""
        rows = self.db.execute(
            "SELECT c.id, f.path, k.line FROM names n JOIN calls k ON k.nid = n.nid JOIN chunks c ON c.rid = k.caller "
            "JOIN files f ON f.fid = c.fid WHERE n.name = ? ORDER BY f.path, k.line LIMIT ?", (name, limit)).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def called_names(self, caller_ids: list[str]) -> list[str]:
        """The names these chunks call, sorted."""
        rows = select_in(self.db, "SELECT DISTINCT n.name FROM chunks c JOIN calls k ON k.caller = c.rid "
                                  "JOIN names n ON n.nid = k.nid WHERE c.id IN ({})", caller_ids)
        return sorted({r[0] for r in rows})

    def call_lines(self, caller_ids: list[str], names: list[str]) -> dict[tuple[str, str], list[int]]:
        """(caller id, called name) -> the lines where that caller calls that name."""
        out: dict[tuple[str, str], list[int]] = {}
        if not caller_ids or not names:
            return out
        wanted = set(names)
        rows = select_in(self.db, "SELECT c.id, n.name, k.line FROM chunks c JOIN calls k ON k.caller = c.rid "
                                  "JOIN names n ON n.nid = k.nid WHERE c.id IN ({})", caller_ids)
        for caller, name, line in rows:
            if name in wanted:
                out.setdefault((caller, name), []).append(line)
        for lines in out.values():
            lines.sort()
        return out

    def chunk_bounds(self, paths: list[str]) -> dict[str, list[tuple[int, int, int]]]:
        """Each file's chunks (first parts and pieces alike) as (start_line, end_line, rid), by
        start and then outermost first: from the chunks_span index alone."""
        out: dict[str, list[tuple[int, int, int]]] = {}
        cursor = self.db.cursor()
        cursor.row_factory = None  # plain tuples: sqlite3.Row costs more than the row itself here
        for start in range(0, len(paths), SQL_IN_SLICE):
            part = paths[start:start + SQL_IN_SLICE]
            rows = cursor.execute(f"SELECT f.path, c.start_line, c.end_line, c.rid FROM files f "
                                  f"JOIN chunks c ON c.fid = f.fid WHERE f.path IN ({','.join('?' * len(part))}) "
                                  f"ORDER BY f.path, c.start_line, c.end_line DESC", part).fetchall()
            for path, group in groupby(rows, key=itemgetter(0)):
                out[path] = [row[1:] for row in group]
        return out

    def spans_by_rid(self, rids: list[int]) -> dict[int, ChunkSpan]:
        """What the chunks of these rowids are (the few that matches land in, of all chunk_bounds)."""
        rows = select_in(self.db, "SELECT rid, id, kind, name, COALESCE(qualified_name, name), start_line, end_line, "
                                  "COALESCE(name_line, 0) FROM chunks WHERE rid IN ({})", rids)
        return {row[0]: ChunkSpan(*row[1:]) for row in rows}

    def caller_weights(self, ids: list[str]) -> dict[str, float]:
        """Chunk id -> the summed weight of the calls and imports into it (its centrality): its
        resolved edges, and the calls of its name that resolution could only guess at, each
        shared among the name's first MAX_CANDIDATES definitions as the graph shares it."""
        out: dict[str, float] = {r[0]: float(r[1]) for r in select_in(
            self.db, "SELECT c.id, SUM(e.weight) FROM chunks c JOIN edges e ON e.dst = c.rid "
                     "WHERE c.id IN ({}) GROUP BY c.id", ids)}
        named = select_in(self.db, f"SELECT c.id, c.name FROM chunks c WHERE c.id IN ({{}}) AND c.part = 1 "
                                   f"AND c.kind NOT IN ({_NOT_DEFINITIONS})", ids)
        if not named:
            return out
        guessed = dict(select_in(self.db, "SELECT n.name, COUNT(*) FROM names n JOIN calls k ON k.nid = n.nid "
                                          "WHERE n.name IN ({}) AND k.guess = 1 GROUP BY n.name",
                                 sorted({name for _, name in named})))
        if not guessed:
            return out
        order = self.definitions_in_order(list(guessed))
        for chunk_id, name in named:
            candidates = order.get(name, [])
            if name in guessed and chunk_id in candidates[:MAX_CANDIDATES]:
                share = GUESS_WEIGHT / min(len(candidates), MAX_CANDIDATES)
                out[chunk_id] = out.get(chunk_id, 0.0) + guessed[name] * share
        return out

    def definitions_in_order(self, names: list[str]) -> dict[str, list[str]]:
        """Name -> the ids of the definitions of that exact name, in candidate order."""
        out: dict[str, list[str]] = {}
        for row in definitions_in_order(self.db, names):
            out.setdefault(row.name, []).append(row.id)
        return out

    def names_like(self, name: str, limit: int) -> list[str]:
        """Definition names that contain `name` (case-insensitively), shortest first: what to
        suggest for a name that means nothing."""
        pattern = "%" + _like_escaped(name.lower()) + "%"
        rows = self.db.execute(
            f"SELECT DISTINCT name FROM chunks WHERE part = 1 AND kind NOT IN ({_NOT_DEFINITIONS}) "
            f"AND name LIKE ? ESCAPE '\\' ORDER BY length(name), name LIMIT ?", (pattern, limit)).fetchall()
        return [r[0] for r in rows]

    # --- health -----------------------------------------------------------------------------
    def integrity_problem(self) -> str | None:
        """SQLite's quick check of the whole file (reads every page): None when it is sound."""
        try:
            rows = [r[0] for r in self.db.execute("PRAGMA quick_check").fetchall()]
        except sqlite3.DatabaseError as exc:
            return str(exc)
        return None if rows == ["ok"] else "; ".join(rows[:3])

    # --- statistics -----------------------------------------------------------------------
    def counts(self) -> dict:
        one = lambda sql: self.db.execute(sql).fetchone()[0]
        skipped = {r[0]: r[1] for r in self.db.execute(
            "SELECT skip_reason, COUNT(*) FROM files WHERE skip_reason IS NOT NULL GROUP BY skip_reason")}
        return {
            "files": one("SELECT COUNT(*) FROM files WHERE skip_reason IS NULL"),
            "source_bytes": one("SELECT COALESCE(SUM(size), 0) FROM files WHERE skip_reason IS NULL"),
            "chunks": one("SELECT COUNT(*) FROM chunks"),
            "vectors": one("SELECT COUNT(*) FROM chunks WHERE vector_hash = embed_hash"),
            "without_vectors": one("SELECT COUNT(*) FROM chunks WHERE embed_hash IS NOT NULL"
                                   " AND vector_hash IS NOT embed_hash"),
            # calls and imports, and containment (a chunk in its parent)
            "edges": one("SELECT COUNT(*) FROM edges") + one("SELECT COUNT(*) FROM chunks WHERE parent IS NOT NULL"),
            "skipped": skipped,
            "languages": {r[0]: r[1] for r in self.db.execute(
                "SELECT language, COUNT(*) FROM files WHERE skip_reason IS NULL GROUP BY language ORDER BY 2 DESC")},
        }

    def contents(self) -> dict[str, Counter]:
        """What the index holds, by stable ids and paths rather than the row ids it happens to
        have: equal for any two indexes of the same tree, however each was reached (fresh, or
        incrementally; the soak benchmark and the determinism tests compare them)."""
        db = self.db
        rows = {
            "files": "SELECT path, content_hash, skip_reason FROM files",
            "chunks": "SELECT c.id, p.id, f.path, c.kind, c.start_line, c.end_line, hex(c.embed_hash) FROM chunks c "
                      "JOIN files f ON f.fid = c.fid LEFT JOIN chunks p ON p.rid = c.parent",
            "edges": f"SELECT a.id, b.id, CASE e.kind WHEN {EDGE_KINDS['calls']} THEN 'calls' ELSE 'imports' END, "
                     "e.weight FROM edges e JOIN chunks a ON a.rid = e.src JOIN chunks b ON b.rid = e.dst",
            "calls": "SELECT c.id, n.name, k.line FROM calls k JOIN names n ON n.nid = k.nid "
                     "JOIN chunks c ON c.rid = k.caller",
            "imports": "SELECT f.path, i.module, i.line FROM imports i JOIN files f ON f.fid = i.fid",
        }
        found = {name: Counter(tuple(r) for r in db.execute(sql)) for name, sql in rows.items()}
        found["keyword totals"] = Counter([tuple(keyword_totals.totals(db))])  # what bm25 reads
        return found

    def table_bytes(self) -> dict[str, int]:
        """Bytes on disk per table and index (SQLite's dbstat), largest first: the size table of docs/benchmarks.md."""
        try:
            rows = self.db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
        except sqlite3.DatabaseError:  # a library built without dbstat
            return {}
        return {r[0]: int(r[1]) for r in rows}


def _phrases(terms: Sequence[str], named: Sequence[str] = (), between: str = " OR ") -> str:
    """An FTS5 query: each term a phrase of its own; `named` ones matched in the name and
    signature columns only."""
    return between.join([f'"{t}"' for t in terms] + [f'{{name signature}}: "{t}"' for t in named])
