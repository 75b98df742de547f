"""The catalog: one SQLite database (WAL) that is the source of truth for an index.

Files, chunks, call sites, imports, graph edges, the keyword index (FTS5) and the embedding
cache live here. Chroma only mirrors vectors; what Chroma still has to delete or add is itself
recorded here, in the same transactions, so a crash never loses track of it.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple

from ..model import Chunk
from ..vocabulary import NON_DEFINITION_KINDS, Filters

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, content_hash TEXT, language TEXT,
    skip_reason TEXT, skip_detail TEXT, indexed_at REAL);
CREATE TABLE IF NOT EXISTS chunks(
    rid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, parent_id TEXT, path TEXT NOT NULL,
    language TEXT, kind TEXT, name TEXT, qualified_name TEXT, signature TEXT, docstring TEXT,
    start_line INTEGER, end_line INTEGER, content_hash TEXT, header TEXT, text TEXT, part INTEGER,
    embed_hash TEXT,   -- hash of the text the embedding model sees
    vector_hash TEXT,  -- embed_hash of the vector Chroma holds for this id (NULL: none yet)
    indexed_at REAL,
    name_line INTEGER, name_column INTEGER);  -- where a definition's name stands (NULL: unknown)
-- path lookups, and where each chunk lies: placing a grep match in its chunk reads this index
-- alone (with the rowid every index holds), not the rows with their text
CREATE INDEX IF NOT EXISTS chunks_span ON chunks(path, start_line, end_line DESC);
DROP INDEX IF EXISTS chunks_path;  -- chunks_span serves its lookups
CREATE INDEX IF NOT EXISTS chunks_name ON chunks(name);
CREATE INDEX IF NOT EXISTS chunks_lower_name ON chunks(lower(name));  -- case-insensitive name lookups
CREATE INDEX IF NOT EXISTS chunks_parent ON chunks(parent_id);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    name, path, signature, body, tokenize = 'porter unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, 'row');
CREATE TABLE IF NOT EXISTS calls(caller_id TEXT NOT NULL, path TEXT NOT NULL, name TEXT NOT NULL,
                                 line INTEGER);
CREATE INDEX IF NOT EXISTS calls_name ON calls(name);
CREATE INDEX IF NOT EXISTS calls_path ON calls(path);
CREATE TABLE IF NOT EXISTS imports(path TEXT NOT NULL, module TEXT, line INTEGER, text TEXT);
CREATE INDEX IF NOT EXISTS imports_path ON imports(path);
CREATE TABLE IF NOT EXISTS edges(src TEXT NOT NULL, dst TEXT NOT NULL, kind TEXT NOT NULL,
                                 weight REAL NOT NULL DEFAULT 1, line INTEGER);
CREATE INDEX IF NOT EXISTS edges_src ON edges(src);
-- edges into a chunk, with what a centrality needs: grep ranks 20,000 chunks by the weight of
-- the calls and imports into them from this index alone (placing and ranking the 1,955 lines of
-- a rare word in a 30,000-file tree: 110 -> 40 ms with this index and chunks_span)
CREATE INDEX IF NOT EXISTS edges_into ON edges(dst, kind, weight);
DROP INDEX IF EXISTS edges_dst;  -- edges_into serves its lookups
-- each file's centrality (store/centrality.py), recomputed as edges change; a file missing here counts as average
CREATE TABLE IF NOT EXISTS file_rank(path TEXT PRIMARY KEY, centrality REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vector_deletions(id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS embed_cache(model TEXT NOT NULL, text_hash TEXT NOT NULL,
                                       vector BLOB NOT NULL, used_at REAL,
                                       PRIMARY KEY (model, text_hash));
"""

# Call sites go with their file (delete_chunks_of), not per chunk: calls has no caller_id index,
# and a per-chunk delete scanned the whole table. Replaced in older catalogs when they open.
CHUNKS_DELETED_TRIGGER = """CREATE TRIGGER chunks_deleted AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.rid;
    DELETE FROM edges WHERE src = old.id OR dst = old.id;
    INSERT OR IGNORE INTO vector_deletions(id) SELECT old.id WHERE old.vector_hash IS NOT NULL;
END"""

CHUNK_COLUMNS = ("id", "parent_id", "path", "language", "kind", "name", "qualified_name", "signature",
                 "docstring", "start_line", "end_line", "content_hash", "header", "text", "part",
                 "COALESCE(name_line, 0)", "COALESCE(name_column, 0)")
ADDED_COLUMNS = {"name_line": "INTEGER", "name_column": "INTEGER"}  # added to catalogs made before them


KeywordColumns = tuple[str, str, str, str]  # analysed terms of name, path, signature+docstring, body
_NOT_DEFINITIONS = ", ".join(f"'{kind}'" for kind in sorted(NON_DEFINITION_KINDS))


class ChunkSpan(NamedTuple):
    """What a chunk is and where it lies in its file: what a grep match shows of its chunk."""

    id: str
    kind: str
    name: str
    qualified_name: str
    start_line: int
    end_line: int
    name_line: int


class CatalogError(RuntimeError):
    """The catalog cannot be used as it is (locked, corrupt, from another version)."""


class CatalogDamaged(CatalogError):
    """The catalog's file is damaged: only a rebuild helps (`codesearch index --rebuild`)."""


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


_CHUNK_SELECT = ", ".join(CHUNK_COLUMNS)
_CHUNK_SELECT_NO_TEXT = ", ".join(c if c not in ("header", "text") else f"'' AS {c}" for c in CHUNK_COLUMNS)
_OLD_SELECTS = tuple(select.replace("COALESCE(name_line, 0)", "0").replace("COALESCE(name_column, 0)", "0")
                     for select in (_CHUNK_SELECT, _CHUNK_SELECT_NO_TEXT))  # a read-only catalog made before them


def _like_escaped(text: str) -> str:
    """`text` for a LIKE pattern with ESCAPE '\\': its own % and _ match themselves."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def filter_clause(filters: Filters, alias: str = "c") -> tuple[str, list]:
    """`AND ...` conditions on the chunks table (as `alias`) for the filters, and their parameters."""
    clauses: list[str] = []
    params: list = []
    if filters.language:
        clauses.append(f"{alias}.language = ?")
        params.append(filters.language)
    if filters.kind:
        clauses.append(f"{alias}.kind = ?")
        params.append(filters.kind)
    if filters.path_glob:
        clauses.append(f"{alias}.path GLOB ?")
        params.append(filters.path_glob)
    return (" AND " + " AND ".join(clauses)) if clauses else "", params


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
        self._name_columns = True
        self._connect(initialize=not readonly)
        if readonly:
            try:
                present = {row[1] for row in self.db.execute("PRAGMA table_info(chunks)").fetchall()}
            except sqlite3.DatabaseError:  # a damaged catalog, opened to salvage what can be read
                present = set()
            self._name_columns = set(ADDED_COLUMNS) <= present
        if not readonly:
            os.chmod(self.path, 0o600)  # SQLite gives its -wal and -shm files the same mode

    def _connect(self, initialize: bool = False) -> sqlite3.Connection:
        uri = f"file:{self.path}?mode=ro" if self.readonly else f"file:{self.path}"
        try:
            db = sqlite3.connect(uri, uri=True, timeout=30, check_same_thread=False, isolation_level=None)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA busy_timeout = 30000")
            if initialize:
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
                db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise self._open_error(exc) from None
        holder = _ThreadConnection(db)
        self._local.holder = holder
        with self._all_lock:
            self._open.add(holder)
        if initialize:
            try:
                self._ensure_columns(db)
                self._ensure_trigger()
            except sqlite3.DatabaseError as exc:
                raise self._open_error(exc) from None
        return db

    def _open_error(self, exc: sqlite3.DatabaseError) -> CatalogError:
        if is_damage(exc):
            return CatalogDamaged(f"the index database {self.path} is damaged ({exc})")
        return CatalogError(f"the index database {self.path} cannot be opened ({exc})")

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection."""
        holder = getattr(self._local, "holder", None)
        return holder.db if holder is not None else self._connect()

    def _ensure_columns(self, db: sqlite3.Connection) -> None:
        """Columns added since a catalog was made: added empty (NULL reads as unknown), and
        every file marked for the next index run to fill them in."""
        present = {row[1] for row in db.execute("PRAGMA table_info(chunks)").fetchall()}
        missing = [name for name in ADDED_COLUMNS if name not in present]
        if not missing:
            return
        with self.transaction() as tx:  # looked at again under the write lock: another process may be here too
            present = {row[1] for row in tx.execute("PRAGMA table_info(chunks)").fetchall()}
            missing = [name for name in ADDED_COLUMNS if name not in present]
            if not missing:
                return
            for name in missing:
                tx.execute(f"ALTER TABLE chunks ADD COLUMN {name} {ADDED_COLUMNS[name]}")
            # every file is read again by the next index run to fill them in: its chunks keep
            # their ids and embedding hashes, so no vector is computed again
            self.mark_files_stale(tx)

    def mark_files_stale(self, db: sqlite3.Connection) -> None:
        """Have the next index run read every indexed file again, as if it had changed: chunks
        that come out the same keep their ids and vectors; only what changed is written and embedded."""
        db.execute("UPDATE files SET mtime_ns = -1, content_hash = '' WHERE skip_reason IS NULL")

    def _ensure_trigger(self) -> None:
        row = self.db.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' "
                              "AND name = 'chunks_deleted'").fetchone()
        if row is None or row[0] != CHUNKS_DELETED_TRIGGER:
            with self.transaction() as db:
                db.execute("DROP TRIGGER IF EXISTS chunks_deleted")
                db.execute(CHUNKS_DELETED_TRIGGER)

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
        """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error: all or nothing."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
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

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def is_empty(self) -> bool:
        return self.db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None

    def reset(self) -> None:
        """Drop everything indexed (not the embedding cache): for schema or settings changes.

        Deleting the chunks queues their vectors for deletion (the trigger), and that queue is
        kept, so Chroma is emptied of them on the next sync."""
        with self.transaction() as db:
            for table in ("calls", "imports", "edges", "chunks", "files", "file_rank", "meta"):  # edges before chunks:
                # the chunk trigger then finds no edges to delete
                db.execute(f"DELETE FROM {table}")
            db.execute("DELETE FROM chunks_fts")

    # --- files ----------------------------------------------------------------------------
    def files(self) -> dict[str, FileRecord]:
        rows = self.db.execute("SELECT path, size, mtime_ns, content_hash, language, skip_reason FROM files")
        return {r[0]: FileRecord(*r) for r in rows}

    def upsert_file(self, db: sqlite3.Connection, record: FileRecord, detail: str = "") -> None:
        db.execute("INSERT OR REPLACE INTO files(path, size, mtime_ns, content_hash, language, skip_reason,"
                   " skip_detail, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (record.path, record.size, record.mtime_ns, record.content_hash, record.language,
                    record.skip_reason, detail, time.time()))

    def delete_file(self, db: sqlite3.Connection, path: str) -> None:
        self.delete_chunks_of(db, path)
        db.execute("DELETE FROM files WHERE path = ?", (path,))

    def delete_chunks_of(self, db: sqlite3.Connection, path: str) -> None:
        db.execute("DELETE FROM calls WHERE path = ?", (path,))
        db.execute("DELETE FROM imports WHERE path = ?", (path,))
        db.execute("DELETE FROM chunks WHERE path = ?", (path,))

    # --- chunks ---------------------------------------------------------------------------
    def insert_chunks(self, db: sqlite3.Connection, chunks: list[Chunk], embed_hashes: Mapping[str, str],
                      vector_hashes: Mapping[str, str | None], keywords: list[KeywordColumns]) -> None:
        """Insert chunks with their keyword-index rows (`keyword_columns` of each chunk, see
        prepare_rows) and containment edges, a statement per table."""
        if not chunks:
            return
        first_rid = db.execute("SELECT COALESCE(MAX(rid), 0) + 1 FROM chunks").fetchone()[0]
        now = time.time()
        db.executemany(
            "INSERT INTO chunks(rid, id, parent_id, path, language, kind, name, qualified_name, signature,"
            " docstring, start_line, end_line, content_hash, header, text, part, embed_hash, vector_hash,"
            " indexed_at, name_line, name_column) VALUES (" + ", ".join("?" * 21) + ")",
            [(first_rid + i, c.id, c.parent_id, c.path, c.language, c.kind, c.name, c.qualified_name, c.signature,
              c.docstring, c.start_line, c.end_line, c.content_hash, c.header, c.text, c.part,
              embed_hashes.get(c.id), vector_hashes.get(c.id), now, c.name_line or None, c.name_column or None)
             for i, c in enumerate(chunks)])
        db.executemany("INSERT INTO chunks_fts(rowid, name, path, signature, body) VALUES (?, ?, ?, ?, ?)",
                       [(first_rid + i, *k) for i, k in enumerate(keywords)])
        db.executemany("INSERT INTO edges(src, dst, kind, weight) VALUES (?, ?, 'contains', 1)",
                       [(c.parent_id, c.id) for c in chunks if c.parent_id])

    def vector_hashes_of(self, path: str) -> dict[str, tuple[str | None, str | None]]:
        """id -> (embed_hash, vector_hash) of a file's current chunks."""
        rows = self.db.execute("SELECT id, embed_hash, vector_hash FROM chunks WHERE path = ?", (path,))
        return {r[0]: (r[1], r[2]) for r in rows}

    def chunks_by_ids(self, ids: list[str], with_text: bool = True) -> dict[str, Chunk]:
        """Chunks by id; without text (header and body left empty) for ranking many candidates.
        Rows come back as plain tuples in CHUNK_COLUMNS order: a search builds a hundred of these."""
        columns = (_CHUNK_SELECT, _CHUNK_SELECT_NO_TEXT)[not with_text] if self._name_columns else \
            _OLD_SELECTS[not with_text]
        cursor = self.db.cursor()
        cursor.row_factory = None
        out: dict[str, Chunk] = {}
        for start in range(0, len(ids), SQL_IN_SLICE):
            part = ids[start:start + SQL_IN_SLICE]
            cursor.execute(f"SELECT {columns} FROM chunks WHERE id IN ({','.join('?' * len(part))})", part)
            out.update((row[0], Chunk(*row)) for row in cursor.fetchall())
        return out

    def fill_text(self, chunks: list[Chunk]) -> None:
        """Load header and body of chunks fetched without them (the few that are shown)."""
        rows = select_in(self.db, "SELECT id, header, text FROM chunks WHERE id IN ({})", [c.id for c in chunks])
        by_id = {r[0]: (r[1], r[2]) for r in rows}
        for c in chunks:
            c.header, c.text = by_id.get(c.id, ("", ""))

    def chunks_needing_vectors(self, limit: int | None = None) -> list[sqlite3.Row]:
        sql = ("SELECT id, path, language, kind, name, qualified_name, signature, docstring, text, embed_hash"
               " FROM chunks WHERE vector_hash IS NULL OR vector_hash != embed_hash")
        return self.db.execute(sql + (f" LIMIT {int(limit)}" if limit else "")).fetchall()

    def mark_vectors(self, pairs: list[tuple[str, str]]) -> list[str]:
        """Record that Chroma now holds these (id, embed_hash) vectors; returns the ids that no
        longer exist (deleted meanwhile), whose vectors the caller must remove again."""
        gone = []
        with self.transaction() as db:
            for chunk_id, embed_hash in pairs:
                if db.execute("UPDATE chunks SET vector_hash = ? WHERE id = ?", (embed_hash, chunk_id)).rowcount == 0:
                    gone.append(chunk_id)
        return gone

    def pending_vector_deletions(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT id FROM vector_deletions")]

    def clear_vector_deletions(self, ids: list[str]) -> None:
        with self.transaction() as db:
            db.executemany("DELETE FROM vector_deletions WHERE id = ?", [(i,) for i in ids])

    # --- call sites, imports, edges -------------------------------------------------------
    def insert_calls(self, db: sqlite3.Connection, rows: list[tuple[str, str, str, int]]) -> None:
        db.executemany("INSERT INTO calls(caller_id, path, name, line) VALUES (?, ?, ?, ?)", rows)

    def insert_imports(self, db: sqlite3.Connection, rows: list[tuple[str, str, int, str]]) -> None:
        db.executemany("INSERT INTO imports(path, module, line, text) VALUES (?, ?, ?, ?)", rows)

    # --- embedding cache ------------------------------------------------------------------
    def cached_vectors(self, model: str, hashes: list[str]) -> dict[str, bytes]:
        rows = select_in(self.db, "SELECT text_hash, vector FROM embed_cache WHERE model = ? AND text_hash IN ({})",
                         hashes, before=(model,))
        return {r[0]: r[1] for r in rows}

    def cache_vectors(self, model: str, items: list[tuple[str, bytes]]) -> None:
        now = time.time()
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO embed_cache(model, text_hash, vector, used_at) VALUES (?, ?, ?, ?)",
                           [(model, h, v, now) for h, v in items])

    def prune_cache(self, model: str, keep: int) -> int:
        """Keep the `keep` most recently used cached vectors of a model, plus every live one."""
        with self.transaction() as db:
            db.execute("UPDATE embed_cache SET used_at = ? WHERE model = ? AND text_hash IN "
                       "(SELECT embed_hash FROM chunks)", (time.time(), model))
            cur = db.execute("DELETE FROM embed_cache WHERE model = ? AND rowid NOT IN (SELECT rowid FROM "
                             "embed_cache WHERE model = ? ORDER BY used_at DESC LIMIT ?)", (model, model, keep))
            return cur.rowcount

    def ids_with_vectors(self, ids: list[str]) -> set[str]:
        """Those of `ids` whose chunk exists and has a vector in Chroma."""
        rows = select_in(self.db, "SELECT id FROM chunks WHERE vector_hash IS NOT NULL AND id IN ({})", ids)
        return {r[0] for r in rows}

    def live_vector_ids(self) -> set[str]:
        """Every chunk id that Chroma should hold a vector for."""
        return {r[0] for r in self.db.execute("SELECT id FROM chunks WHERE vector_hash IS NOT NULL")}

    def expected_vector_count(self) -> int:
        """How many vectors Chroma should hold: chunks whose vector it was given."""
        return int(self.db.execute("SELECT COUNT(*) FROM chunks WHERE vector_hash IS NOT NULL").fetchone()[0])

    def forget_all_vectors(self) -> None:
        """The vector store is gone (damaged, deleted): every chunk needs its vector again, and
        there is nothing left to delete from it. The embedding cache keeps what was computed."""
        with self.transaction() as db:
            db.execute("UPDATE chunks SET vector_hash = NULL WHERE vector_hash IS NOT NULL")
            db.execute("DELETE FROM vector_deletions")

    def forget_vectors(self, ids: list[str]) -> None:
        """Mark chunks as lacking vectors (Chroma lost them): the next sync embeds them again."""
        with self.transaction() as db:
            db.executemany("UPDATE chunks SET vector_hash = NULL WHERE id = ?", [(i,) for i in ids])

    def needs_vectors(self) -> bool:
        """Whether Chroma lags the catalog: chunks without current vectors, or vectors to delete."""
        db = self.db
        return bool(db.execute("SELECT 1 FROM chunks WHERE vector_hash IS NULL OR vector_hash != embed_hash "
                               "LIMIT 1").fetchone()
                    or db.execute("SELECT 1 FROM vector_deletions LIMIT 1").fetchone())

    def vector_coverage(self) -> tuple[int, int]:
        """(chunks, chunks whose current vector Chroma holds): a table scan."""
        row = self.db.execute("SELECT COUNT(*), SUM(vector_hash = embed_hash) FROM chunks").fetchone()
        return int(row[0] or 0), int(row[1] or 0)

    def names_defined_in(self, path: str) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT DISTINCT name FROM chunks WHERE path = ?", (path,))}

    # --- search ---------------------------------------------------------------------------
    def chunk_count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def document_frequency(self, term: str) -> int:
        """Chunks whose keyword index holds `term` (matched, so stemmed exactly as indexed)."""
        return int(self.db.execute("SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH ?",
                                   (f'"{term}"',)).fetchone()[0])

    def keyword_search(self, terms: list[str], column_weights: tuple[float, ...], filters: Filters,
                       limit: int) -> list[tuple[str, float]]:
        """(chunk id, BM25 score, higher is better) of chunks holding any of `terms`, best first."""
        match = " OR ".join(f'"{t}"' for t in terms)
        where, params = filter_clause(filters)
        weights = ", ".join(str(w) for w in column_weights)
        rows = self.db.execute(
            f"SELECT c.id, bm25(chunks_fts, {weights}) AS score FROM chunks_fts "
            f"JOIN chunks c ON c.rid = chunks_fts.rowid WHERE chunks_fts MATCH ?{where} "
            f"ORDER BY score LIMIT ?", [match, *params, limit]).fetchall()
        return [(r[0], -r[1]) for r in rows]

    def ids_matching(self, ids: list[str], filters: Filters) -> set[str]:
        """Those of `ids` whose chunk passes the filters."""
        where, params = filter_clause(filters)
        rows = select_in(self.db, f"SELECT c.id FROM chunks c WHERE c.id IN ({{}}){where}", ids, after=tuple(params))
        return {r[0] for r in rows}

    def definitions_named(self, names: Iterable[str], lowered: Iterable[str] = ()) -> list[str]:
        """Ids of definitions (first parts) named exactly one of `names`, or, lower-cased, one of
        `lowered`."""
        exact, lower = sorted(names), sorted(lowered)
        if not exact and not lower:
            return []
        rows = self.db.execute(  # two index lookups (chunks_name, chunks_lower_name), in table order
            f"SELECT id FROM chunks WHERE part = 1 AND kind NOT IN ({_NOT_DEFINITIONS}) "
            f"AND (name IN ({','.join('?' * len(exact))}) OR lower(name) IN ({','.join('?' * len(lower))})) "
            f"ORDER BY rid", [*exact, *lower]).fetchall()
        return [r[0] for r in rows]

    def definitions_with_name(self, name: str) -> list[tuple[str, str]]:
        """(id, qualified name) of the definitions (first parts) named `name`."""
        rows = self.db.execute(f"SELECT id, qualified_name FROM chunks WHERE part = 1 AND name = ? "
                               f"AND kind NOT IN ({_NOT_DEFINITIONS})", (name,)).fetchall()
        return [(r[0], r[1]) for r in rows]

    def definitions_matching(self, text: str, limit: int) -> list[str]:
        """Ids of definitions (first parts) whose name contains `text`, case-insensitively: the
        exact name first, then the same name in another case, then names that start with it,
        then the rest; shorter names first within each."""
        lowered = text.lower()
        escaped = _like_escaped(lowered)
        rows = self.db.execute(  # LIKE ignores ASCII case already (as lower() is ASCII only)
            f"SELECT id FROM chunks WHERE name LIKE ? ESCAPE '\\' AND part = 1 AND kind NOT IN ({_NOT_DEFINITIONS}) "
            f"ORDER BY name = ? DESC, lower(name) = ? DESC, name LIKE ? ESCAPE '\\' DESC, length(name), "
            f"path, start_line LIMIT ?", (f"%{escaped}%", text, lowered, f"{escaped}%", limit)).fetchall()
        return [r[0] for r in rows]

    def call_sites(self, name: str, limit: int) -> list[tuple[str, str, int]]:
        """(caller chunk id, path, line) of the recorded calls of `name`, in path and line order."""
        rows = self.db.execute("SELECT caller_id, path, line FROM calls WHERE name = ? ORDER BY path, line LIMIT ?",
                               (name, limit)).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def called_names(self, caller_ids: list[str]) -> list[str]:
        """The names these chunks call, sorted."""
        rows = select_in(self.db, "SELECT DISTINCT name FROM calls WHERE caller_id IN ({})", caller_ids)
        return sorted({r[0] for r in rows})

    def call_lines(self, caller_ids: list[str], names: list[str]) -> dict[tuple[str, str], list[int]]:
        """(caller id, called name) -> the lines where that caller calls that name."""
        out: dict[tuple[str, str], list[int]] = {}
        if not caller_ids or not names:
            return out
        wanted = set(names)
        rows = select_in(self.db, "SELECT caller_id, name, line FROM calls WHERE caller_id IN ({})", caller_ids)
        for caller, name, line in rows:
            if name in wanted:
                out.setdefault((caller, name), []).append(line)
        for lines in out.values():
            lines.sort()
        return out

    def chunk_bounds(self, paths: list[str]) -> dict[str, list[tuple[int, int, int]]]:
        """Each file's chunks (first parts and pieces alike) as (start_line, end_line, rid), by
        start and then outermost first: from the chunks_span index alone. Reading the rows
        instead (their text inline) took 2 s for the 290,000 chunks of the 15,000 files that a
        common word matches in a 30,000-file tree."""
        out: dict[str, list[tuple[int, int, int]]] = {}
        cursor = self.db.cursor()
        cursor.row_factory = None  # plain tuples: sqlite3.Row costs more than the row itself here
        for start in range(0, len(paths), SQL_IN_SLICE):
            part = paths[start:start + SQL_IN_SLICE]
            rows = cursor.execute(f"SELECT path, start_line, end_line, rid FROM chunks "
                                  f"WHERE path IN ({','.join('?' * len(part))}) "
                                  f"ORDER BY path, start_line, end_line DESC", part).fetchall()
            for path, group in groupby(rows, key=itemgetter(0)):
                out[path] = [row[1:] for row in group]
        return out

    def spans_by_rid(self, rids: list[int]) -> dict[int, ChunkSpan]:
        """What the chunks of these rowids are (the few that matches land in, of all chunk_bounds)."""
        name_line = "COALESCE(name_line, 0)" if self._name_columns else "0"
        rows = select_in(self.db, f"SELECT rid, id, kind, name, qualified_name, start_line, end_line, {name_line} "
                                  "FROM chunks WHERE rid IN ({})", rids)
        return {row[0]: ChunkSpan(*row[1:]) for row in rows}

    def caller_weights(self, ids: list[str]) -> dict[str, float]:
        """Chunk id -> the summed weight of the call and import edges into it (its centrality)."""
        rows = select_in(self.db, "SELECT dst, SUM(weight) FROM edges WHERE dst IN ({}) "
                                  "AND kind IN ('calls', 'imports') GROUP BY dst", ids)
        return {r[0]: float(r[1]) for r in rows}

    def file_centrality(self, paths: list[str]) -> dict[str, float]:
        """path -> the file's centrality (1.0 is the average), for those of `paths` that have one."""
        try:
            return dict(select_in(self.db, "SELECT path, centrality FROM file_rank WHERE path IN ({})", paths))
        except sqlite3.OperationalError:  # a read-only catalog made before the table: no centrality yet
            return {}

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

    def cached_vector_rows(self) -> Iterator[tuple[str, str, bytes, float]]:
        """Every row of the embedding cache that can still be read (for a rebuild: a damaged
        catalog may give up half way; what came out is kept)."""
        try:
            for row in self.db.execute("SELECT model, text_hash, vector, used_at FROM embed_cache"):
                yield row[0], row[1], row[2], row[3]
        except sqlite3.DatabaseError:
            return

    def restore_cache_rows(self, rows: list[tuple[str, str, bytes, float]]) -> None:
        with self.transaction() as db:
            db.executemany("INSERT OR IGNORE INTO embed_cache(model, text_hash, vector, used_at) VALUES (?, ?, ?, ?)",
                           rows)

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
            "edges": one("SELECT COUNT(*) FROM edges"),
            "skipped": skipped,
            "languages": {r[0]: r[1] for r in self.db.execute(
                "SELECT language, COUNT(*) FROM files WHERE skip_reason IS NULL GROUP BY language ORDER BY 2 DESC")},
        }
