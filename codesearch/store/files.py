"""Files and their chunks in the catalog: each file's record, and the chunks, call sites and
imports one file's indexing writes; chunks read back by id, by file, or by where they lie."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import NamedTuple

from ..filters import Filters
from ..model import Chunk
from .sql import SQL_IN_SLICE, CatalogCore, blob, filter_clause, select_in
from .sqlite import sqlite3
from .vector_tables import queue_deletions

COLLIDING_ID = "a chunk's id is another chunk's (a collision of their hashes)"

# A Chunk from a row: path and language from its file, the parent's id from its row. No text:
# that is read from the file by whoever shows it (search/source.py).
_CHUNK_SELECT = ("c.id, p.id, f.path, f.language, c.kind, c.name, COALESCE(c.qualified_name, c.name), "
                 "COALESCE(c.signature, ''), COALESCE(c.docstring, ''), c.start_line, c.end_line, '', '', '', "
                 "c.part, COALESCE(c.name_line, 0), COALESCE(c.name_column, 0)")
_CHUNK_FROM = "chunks c JOIN files f ON f.fid = c.fid LEFT JOIN chunks p ON p.rid = c.parent"

KeywordColumns = tuple[str, str, str, str]  # analysed terms of name, path, signature+docstring, body
ChunkTraits = tuple[int, int]  # near-duplicate fingerprint (0: none), content class number


class ChunkSpan(NamedTuple):
    """What a chunk is and where it lies in its file: what a grep match shows of its chunk."""

    id: str
    kind: str
    name: str
    qualified_name: str
    start_line: int
    end_line: int
    name_line: int



@dataclass
class FileRecord:
    path: str
    size: int
    mtime_ns: int
    content_hash: str
    language: str
    skip_reason: str | None




class Files:
    """The files table and what hangs off each file: its chunks, their call sites, its imports."""

    def __init__(self, catalog: CatalogCore):
        self._catalog = catalog

    def records(self) -> dict[str, FileRecord]:
        rows = self._catalog.db.execute("SELECT path, size, mtime_ns, content_hash, language, skip_reason FROM files")
        return {r[0]: FileRecord(*r) for r in rows}

    def records_within(self, scope: Iterable[str]) -> dict[str, FileRecord]:
        """The records of these paths and of everything under those that are folders ("" is the
        root: every file); a save in a 100,000-file tree reads its own record, not all of them."""
        wanted = set(scope)
        if "" in wanted:
            return self.records()
        sql = "SELECT path, size, mtime_ns, content_hash, language, skip_reason FROM files"
        out = {r[0]: FileRecord(*r) for r in select_in(self._catalog.db, sql + " WHERE path IN ({})", sorted(wanted))}
        for folder in sorted(wanted):  # '/' + 1 is '0': the range holds exactly the paths under it
            out.update((r[0], FileRecord(*r)) for r in self._catalog.db.execute(
                sql + " WHERE path >= ? AND path < ?", (folder + "/", folder + "0")))
        return out

    def hashes(self) -> Iterator[tuple[str, str]]:
        """(path, content hash) of every file, the hash "" for a skipped one (streamed)."""
        db = self._catalog.db
        yield from db.execute("SELECT path, CASE WHEN skip_reason IS NULL THEN COALESCE(content_hash, '') "
                              "ELSE '' END FROM files")

    def _file_id(self, db: sqlite3.Connection, path: str) -> int:
        """The file's row id, making a row for it when there is none yet."""
        row = db.execute("SELECT fid FROM files WHERE path = ?", (path,)).fetchone()
        if row:
            return int(row[0])
        return int(db.execute("INSERT INTO files(path) VALUES (?) RETURNING fid", (path,)).fetchone()[0])

    def upsert(self, db: sqlite3.Connection, record: FileRecord, detail: str = "") -> None:
        """Write a file's record; its row (and so its chunks' `fid`) stays the same."""
        db.execute("INSERT INTO files(path, size, mtime_ns, content_hash, language, skip_reason, skip_detail, "
                   "indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET size = excluded.size, "
                   "mtime_ns = excluded.mtime_ns, content_hash = excluded.content_hash, language = excluded.language, "
                   "skip_reason = excluded.skip_reason, skip_detail = excluded.skip_detail, "
                   "indexed_at = excluded.indexed_at",
                   (record.path, record.size, record.mtime_ns, record.content_hash, record.language,
                    record.skip_reason, detail, time.time()))

    def delete(self, db: sqlite3.Connection, path: str) -> None:
        self.delete_chunks(db, path)
        db.execute("DELETE FROM files WHERE path = ?", (path,))

    def delete_chunks(self, db: sqlite3.Connection, path: str) -> None:
        """A file's chunks, with their call sites, edges and keyword rows (the trigger), and imports."""
        row = db.execute("SELECT fid FROM files WHERE path = ?", (path,)).fetchone()
        if row is None:
            return
        db.execute("DELETE FROM imports WHERE fid = ?", (row[0],))
        self._catalog.owe_keyword_totals(db, row[0])
        db.execute("DELETE FROM chunks WHERE fid = ?", (row[0],))

    def write_chunks(self, db: sqlite3.Connection, path: str, chunks: list[Chunk],
                     embed_hashes: Mapping[str, str | None], keywords: list[KeywordColumns],
                     traits: list[ChunkTraits], keyword_rows_out: list) -> dict[str, int]:
        """Make these (parents before children, as chunking makes them, with their keyword-index
        rows: `keyword_columns` of each chunk, see analysis/rows.py, and `traits`: each chunk's
        near-duplicate fingerprint and content class) one file's chunks, in place of
        those it had. A chunk whose id stays keeps its row, so the calls and imports into it from
        other files stay as they are: saving a file that thousands call rewrites none of those
        edges. What came from its old text goes (call sites, edges out, keyword row, the file's
        imports) and is written anew. Its vector stays until the new one is made: Chroma still
        holds it (`vector_hash`), and the chunk stays findable by meaning meanwhile. Returns their
        rows (rid) by chunk id; their keyword-index rows go to `keyword_rows_out`, for
        `keywords.insert` once the caller's savepoints are done (FTS5 writes a segment of what it
        holds at every savepoint)."""
        fid = self._file_id(db, path)
        old = {r[0]: (r[1], r[2]) for r in db.execute("SELECT id, rid, vector_hash FROM chunks WHERE fid = ?", (fid,))}
        wanted = {c.id for c in chunks}
        if old:  # every keyword row of the file goes, the kept chunks' too
            self._catalog.owe_keyword_totals(db, fid)
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
        queue_deletions(db, dropped)
        db.executemany(
            "INSERT INTO chunks(rid, id, parent, fid, kind, name, qualified_name, signature, docstring, start_line,"
            " end_line, part, name_line, name_column, embed_hash, vector_hash, fingerprint, content_class) VALUES ("
            + ", ".join("?" * 18) + ") "
            "ON CONFLICT(rid) DO UPDATE SET parent = excluded.parent, kind = excluded.kind, name = excluded.name, "
            "qualified_name = excluded.qualified_name, signature = excluded.signature, "
            "docstring = excluded.docstring, start_line = excluded.start_line, end_line = excluded.end_line, "
            "part = excluded.part, name_line = excluded.name_line, name_column = excluded.name_column, "
            "embed_hash = excluded.embed_hash, fingerprint = excluded.fingerprint, "
            "content_class = excluded.content_class, "
            "vector_hash = CASE WHEN excluded.embed_hash IS NULL THEN NULL ELSE chunks.vector_hash END",
            [(rids[c.id], c.id, rids.get(c.parent_id) if c.parent_id else None, fid, c.kind, c.name,
              None if c.qualified_name == c.name else c.qualified_name, c.signature or None, c.docstring or None,
              c.start_line, c.end_line, c.part, c.name_line or None, c.name_column or None,
              blob(embed_hashes.get(c.id)), None, fingerprint or None, content_class)
             for c, (fingerprint, content_class) in zip(chunks, traits)])
        keyword_rows_out.extend((rids[c.id], *k) for c, k in zip(chunks, keywords))
        return rids

    def traits_by_ids(self, ids: list[str]) -> dict[str, ChunkTraits]:
        """Chunk id -> (near-duplicate fingerprint, 0 for none; content class number), for the
        few results that search/collapse.py compares."""
        rows = select_in(self._catalog.db, "SELECT id, COALESCE(fingerprint, 0), COALESCE(content_class, 0) "
                                           "FROM chunks WHERE id IN ({})", ids)
        return {row[0]: (row[1], row[2]) for row in rows}

    def chunks_by_ids(self, ids: list[str]) -> dict[str, Chunk]:
        """Chunks by id, without their text (`header` and `text` empty: see search/source.py).
        Rows come back as plain tuples: a search builds a hundred of these."""
        cursor = self._catalog.db.cursor()
        cursor.row_factory = None
        out: dict[str, Chunk] = {}
        for start in range(0, len(ids), SQL_IN_SLICE):
            part = ids[start:start + SQL_IN_SLICE]
            cursor.execute(f"SELECT {_CHUNK_SELECT} FROM {_CHUNK_FROM} WHERE c.id IN ({','.join('?' * len(part))})",
                           part)
            out.update((row[0], Chunk(*row)) for row in cursor.fetchall())
        return out

    def insert_calls(self, db: sqlite3.Connection, rows: list[tuple[str, str, str, int, str, bool]],
                     rids: dict[str, int]) -> None:
        """(caller chunk id, path, called name, line, receiver hint, a reference) of one file,
        whose chunks write_chunks has written (`rids`: their rows, as it returned them)."""
        if not rows:
            return
        names = name_ids(db, {r[2] for r in rows})
        db.executemany("INSERT OR IGNORE INTO calls(nid, caller, line, hint, ref) VALUES (?, ?, ?, ?, ?)",
                       [(names[name], rids[caller], line, hint or None, int(ref))
                        for caller, _, name, line, hint, ref in rows if caller in rids])

    def insert_imports(self, db: sqlite3.Connection, rows: list[tuple[str, str, int, str]]) -> None:
        """(path, module, line, statement) of one file."""
        if not rows:
            return
        fid = self._file_id(db, rows[0][0])
        db.executemany("INSERT INTO imports(fid, line, module, text) VALUES (?, ?, ?, ?)",
                       [(fid, line, module, text) for _, module, line, text in rows])

    def chunk_count(self) -> int:
        return int(self._catalog.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def any_path_matching(self, path_glob: str) -> bool:
        """Whether an indexed file passes this path filter (one indexed lookup, no tree walk)."""
        where, params = filter_clause(Filters(path_glob=path_glob), file="files")
        return self._catalog.db.execute(f"SELECT 1 FROM files WHERE 1{where} LIMIT 1", params).fetchone() is not None

    def ids_matching(self, ids: list[str], filters: Filters) -> set[str]:
        """Those of `ids` whose chunk passes the filters."""
        where, params = filter_clause(filters)
        rows = select_in(self._catalog.db, f"SELECT c.id FROM chunks c JOIN files f ON f.fid = c.fid "
                                  f"WHERE c.id IN ({{}}){where}", ids, after=tuple(params))
        return {r[0] for r in rows}

    def chunk_bounds(self, paths: list[str]) -> dict[str, list[tuple[int, int, int]]]:
        """Each file's chunks (first parts and pieces alike) as (start_line, end_line, rid), by
        start and then outermost first: from the chunks_span index alone."""
        out: dict[str, list[tuple[int, int, int]]] = {}
        cursor = self._catalog.db.cursor()
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
        rows = select_in(self._catalog.db, "SELECT rid, id, kind, name, COALESCE(qualified_name, name), start_line, "
                                           "end_line, COALESCE(name_line, 0) FROM chunks WHERE rid IN ({})", rids)
        return {row[0]: ChunkSpan(*row[1:]) for row in rows}

    def skip_colliding_ids(self, db: sqlite3.Connection) -> list[str]:
        """The files of chunks whose id an earlier chunk has: their chunks gone, each skipped as
        `failed` (what writing them would have done with the index on ids there)."""
        rows = db.execute("SELECT DISTINCT f.path FROM chunks c JOIN files f ON f.fid = c.fid "
                          "WHERE c.rid NOT IN (SELECT MIN(rid) FROM chunks GROUP BY id)").fetchall()
        for (path,) in rows:
            self.delete_chunks(db, path)
            db.execute("UPDATE files SET content_hash = '', skip_reason = 'failed', skip_detail = ? WHERE path = ?",
                       (COLLIDING_ID, path))
        return [path for (path,) in rows]


def name_ids(db: sqlite3.Connection, names: Iterable[str]) -> dict[str, int]:
    """Interned ids of called names, made for those new to the catalog."""
    ordered = sorted(set(names))
    db.executemany("INSERT OR IGNORE INTO names(name) VALUES (?)", [(n,) for n in ordered])
    return dict(select_in(db, "SELECT name, nid FROM names WHERE name IN ({})", ordered))
