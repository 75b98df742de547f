"""What an index holds, counted and listed (`codesearch stats`, the determinism tests, the size
table of docs/benchmarks.md), and whether its file is sound."""

from __future__ import annotations

from collections import Counter

from . import keyword_totals
from .schema import CALLS
from .sql import CatalogCore
from .sqlite import sqlite3


class CatalogStats:
    """Counts, contents and health of the catalog."""

    def __init__(self, catalog: CatalogCore):
        self._catalog = catalog

    def integrity_problem(self) -> str | None:
        """SQLite's quick check of the whole file (reads every page): None when it is sound."""
        try:
            rows = [r[0] for r in self._catalog.db.execute("PRAGMA quick_check").fetchall()]
        except sqlite3.DatabaseError as exc:
            return str(exc)
        return None if rows == ["ok"] else "; ".join(rows[:3])

    def counts(self) -> dict:
        one = lambda sql: self._catalog.db.execute(sql).fetchone()[0]
        skipped = {r[0]: r[1] for r in self._catalog.db.execute(
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
            "languages": {r[0]: r[1] for r in self._catalog.db.execute(
                "SELECT language, COUNT(*) FROM files WHERE skip_reason IS NULL GROUP BY language ORDER BY 2 DESC")},
        }

    def contents(self) -> dict[str, Counter]:
        """What the index holds, by stable ids and paths rather than the row ids it happens to
        have: equal for any two indexes of the same tree, however each was reached (fresh, or
        incrementally; the soak benchmark and the determinism tests compare them)."""
        db = self._catalog.db
        rows = {
            "files": "SELECT path, content_hash, skip_reason FROM files",
            "chunks": "SELECT c.id, p.id, f.path, c.kind, c.start_line, c.end_line, hex(c.embed_hash) FROM chunks c "
                      "JOIN files f ON f.fid = c.fid LEFT JOIN chunks p ON p.rid = c.parent",
            "edges": f"SELECT a.id, b.id, CASE e.kind WHEN {CALLS} THEN 'calls' ELSE 'imports' END, "
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
            db = self._catalog.db
            rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
        except sqlite3.DatabaseError:  # a library built without dbstat
            return {}
        return {r[0]: int(r[1]) for r in rows}

