"""Keeps the keyword index's totals true: its row count and each column's token count.

FTS5's bm25 reads them (a term's idf from the row count, length normalization from each
column's mean length). On a contentless table whose rows can be deleted (`contentless_delete=1`,
the catalog's) SQLite does not take a deleted row off them, so every re-indexed file counted its
chunks again: a catalog re-indexed twice scored as if it held three times its chunks, and keyword
ranking drifted with every save. The sizes of each row are kept right (the `docsize` table), so
the rows about to be deleted are summed from there (`owe`, inside the writing transaction, into
`meta`: undone with it), and taken off the totals once that transaction has committed (`settle`:
FTS5 writes the totals it holds in memory at commit, over anything written before).

The totals live in the `averages` record of FTS5's data table (id 1): SQLite varints, the row
count and then one total per column.
"""

from __future__ import annotations

from .sqlite import CONTENTLESS_DELETE, sqlite3

OWED_KEY = "keyword_totals_owed"  # meta: what the totals count that is no longer there
EXACT_KEY = "keyword_totals"  # meta: "exact" once the totals were recounted (or began empty)
_AVERAGES = "SELECT block FROM chunks_fts_data WHERE id = 1"


def varints(blob: bytes) -> list[int]:
    """The SQLite varints in `blob` (big-endian groups of 7 bits, a ninth byte of 8)."""
    values, at = [], 0
    while at < len(blob):
        value = 0
        for position in range(9):
            byte = blob[at]
            at += 1
            if position == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values


def varint_bytes(values: list[int]) -> bytes:
    """The inverse of `varints`."""
    out = bytearray()
    for value in values:
        if value < 0:
            raise ValueError(f"a total cannot be negative ({value})")
        if value >> 56:
            out += bytes(0x80 | ((value >> (8 + 7 * i)) & 0x7F) for i in range(7, -1, -1)) + bytes([value & 0xFF])
            continue
        groups = [value & 0x7F]
        value >>= 7
        while value:
            groups.append(0x80 | (value & 0x7F))
            value >>= 7
        out += bytes(reversed(groups))
    return bytes(out)


def _sum_sizes(rows: list, columns: int) -> list[int]:
    """[rows, tokens of column 1, ...] over docsize blobs (one varint a column)."""
    summed = [len(rows)] + [0] * columns
    for (blob,) in rows:
        for column, size in enumerate(varints(blob or b"")[:columns]):
            summed[column + 1] += size
    return summed


def _columns(db: sqlite3.Connection) -> int:
    return len(db.execute("SELECT * FROM chunks_fts LIMIT 0").description)


def _meta_totals(db: sqlite3.Connection, key: str) -> list[int] | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return [int(v) for v in row[0].split()] if row else None


def owe(db: sqlite3.Connection, fid: int) -> None:
    """Inside a writing transaction, before a file's keyword rows are deleted: their sizes,
    added to what the totals owe."""
    if not CONTENTLESS_DELETE:
        return  # a table with its own copy of the text takes deleted rows off itself
    rows = db.execute("SELECT d.sz FROM chunks c JOIN chunks_fts_docsize d ON d.id = c.rid WHERE c.fid = ?",
                      (fid,)).fetchall()
    if not rows:
        return
    sizes = _sum_sizes(rows, len(varints(rows[0][0] or b"")))  # every row's blob holds one size a column
    owed = _meta_totals(db, OWED_KEY) or [0] * len(sizes)
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
               (OWED_KEY, " ".join(str(a + b) for a, b in zip(owed, sizes))))


def settle(db: sqlite3.Connection) -> None:
    """In a transaction of its own, after the one that deleted: the totals less what they owe.
    Totals that would go below zero (they were wrong before) are counted again instead."""
    owed = _meta_totals(db, OWED_KEY)
    if owed is None:
        return
    held = totals(db)
    held += [0] * (len(owed) - len(held))
    settled = [a - b for a, b in zip(held, owed)]
    if min(settled) < 0:
        recount(db)
    else:
        db.execute("UPDATE chunks_fts_data SET block = ? WHERE id = 1", (varint_bytes(settled),))
    db.execute("DELETE FROM meta WHERE key = ?", (OWED_KEY,))


def recount(db: sqlite3.Connection) -> None:
    """The totals counted from every row's sizes (a catalog written before this module, whose
    totals may count its re-indexed rows many times)."""
    if CONTENTLESS_DELETE:
        counted = _sum_sizes(db.execute("SELECT sz FROM chunks_fts_docsize").fetchall(), _columns(db))
        if db.execute(_AVERAGES).fetchone() is not None:
            db.execute("UPDATE chunks_fts_data SET block = ? WHERE id = 1", (varint_bytes(counted),))
    db.execute("DELETE FROM meta WHERE key = ?", (OWED_KEY,))
    mark_exact(db)


def totals(db: sqlite3.Connection) -> list[int]:
    """What bm25 reads: [rows, tokens of column 1, ...] (empty before the first row)."""
    row = db.execute(_AVERAGES).fetchone()
    return varints(row[0]) if row else []


def mark_exact(db: sqlite3.Connection) -> None:
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, 'exact')", (EXACT_KEY,))


def owing(db: sqlite3.Connection) -> bool:
    """Whether a commit's deletions wait to be taken off the totals (its writer stopped before)."""
    return db.execute("SELECT 1 FROM meta WHERE key = ?", (OWED_KEY,)).fetchone() is not None


def known_exact(db: sqlite3.Connection) -> bool:
    return db.execute("SELECT 1 FROM meta WHERE key = ?", (EXACT_KEY,)).fetchone() is not None
