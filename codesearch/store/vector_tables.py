"""What the catalog knows of vectors: which vector Chroma holds for each chunk (`vector_hash`),
those a rebuild holds (`held_vectors`), those to delete (`vector_deletions`), and the embedding
cache, whose vectors it keeps as int8.

Chroma only mirrors vectors; what it still has to delete or add is recorded here, in the same
transactions as the chunks, so a crash never loses track of it.

A cached vector is int8 components and one float32 scale (388 bytes for 384 dimensions, against
1,536 as float32): the cache exists so that a vector is never computed twice (a moved chunk, a
rebuilt vector store), and a quarter of the size keeps it from being the largest part of the
catalog. The scale is the largest component's magnitude, so each component is off by at most
scale/254: for the unit vectors of a sentence model, a cosine of 0.9999 or better with the
original (the int8 model itself is further from the full-precision one than that).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np

from .schema import NOT_DEFINITIONS
from .sql import CatalogCore, select_in
from .sqlite import sqlite3

SCALE_BYTES = 4
# The ids Chroma holds a vector for, as far as the catalog knows (a held id has no vector_hash).
HELD_BY_CHROMA = "SELECT id FROM chunks WHERE vector_hash IS NOT NULL UNION ALL SELECT id FROM held_vectors"


class VectorRow(NamedTuple):
    """A chunk whose vector Chroma lacks: what the vector is made from and filed under."""

    rid: int
    id: str
    path: str
    language: str
    kind: str
    embed_hash: str



def pack(vector: np.ndarray) -> bytes:
    """A float vector as its int8 components after a float32 scale."""
    values = np.asarray(vector, dtype=np.float32)
    scale = float(np.abs(values).max()) if values.size else 0.0
    if scale == 0.0:
        return np.float32(0.0).tobytes() + np.zeros(values.size, dtype=np.int8).tobytes()
    steps = np.clip(np.rint(values / scale * 127.0), -127, 127).astype(np.int8)
    return np.float32(scale).tobytes() + steps.tobytes()


def unpack(data: bytes) -> np.ndarray:
    """The float32 vector `pack` stored (within scale/254 per component)."""
    scale = np.frombuffer(data[:SCALE_BYTES], dtype=np.float32)[0]
    return np.frombuffer(data[SCALE_BYTES:], dtype=np.int8).astype(np.float32) * (scale / 127.0)


def from_float32(data: bytes) -> bytes:
    """A vector stored as raw float32 bytes (catalogs of format 1) in this form."""
    return pack(np.frombuffer(data, dtype=np.float32))


def hold_all(db: sqlite3.Connection) -> None:
    """The vectors Chroma holds for the chunks about to be dropped, into held_vectors (in id
    order: appended, not scattered over its B-tree)."""
    db.execute("INSERT OR REPLACE INTO held_vectors(id, vector_hash, language) SELECT c.id, c.vector_hash, "
               "f.language FROM chunks c JOIN files f ON f.fid = c.fid WHERE c.vector_hash IS NOT NULL ORDER BY c.id")


def delete_all(db: sqlite3.Connection) -> None:
    """Every vector Chroma holds, the held ones too, queued for deletion."""
    db.execute(f"INSERT OR IGNORE INTO vector_deletions(id) {HELD_BY_CHROMA}")
    db.execute("DELETE FROM held_vectors")


def queue_deletions(db: sqlite3.Connection, ids: list[str]) -> None:
    """These chunks' vectors, to be deleted from Chroma."""
    db.executemany("INSERT OR IGNORE INTO vector_deletions(id) VALUES (?)", [(i,) for i in ids])


def insert_cache_rows(db: sqlite3.Connection, rows: list[tuple[str, bytes, float]]) -> None:
    """Rows of an embedding cache (text hash, vector in this layout's form, last used), kept where
    the cache has the hash already."""
    db.executemany("INSERT OR IGNORE INTO embed_cache(text_hash, vector, used_at) VALUES (?, ?, ?)",
                   [(bytes.fromhex(h), v, used) for h, v, used in rows])


class VectorBookkeeping:
    """The catalog's record of the vectors Chroma holds and should hold, and the embedding cache."""

    def __init__(self, catalog: CatalogCore):
        self._catalog = catalog

    def holding(self) -> bool:
        """Whether a rebuild holds vectors (it has not written the whole tree again yet)."""
        return self._catalog.db.execute("SELECT 1 FROM held_vectors LIMIT 1").fetchone() is not None

    def settle_held(self) -> tuple[int, int]:
        """After a rebuild has written the tree again: (chunks that keep the vector Chroma held for
        their id, held vectors queued for deletion). A chunk keeps it when its file's language is
        the one the vector is filed under (its id fixes path and kind); one whose text changed
        keeps it until the sync replaces it, as after any edit, and one filed under another
        language gets a new one over it. Those of chunks gone, or no longer embedded, are deleted."""
        if not self.holding():
            return 0, 0
        with self._catalog.transaction() as db:
            kept = db.execute(
                "UPDATE chunks SET vector_hash = (SELECT h.vector_hash FROM held_vectors h WHERE h.id = chunks.id) "
                "WHERE vector_hash IS NULL AND embed_hash IS NOT NULL AND EXISTS (SELECT 1 FROM held_vectors h "
                "JOIN files f ON f.fid = chunks.fid WHERE h.id = chunks.id AND h.language IS f.language)").rowcount
            given_up = db.execute(
                "INSERT OR IGNORE INTO vector_deletions(id) SELECT h.id FROM held_vectors h WHERE NOT EXISTS "
                "(SELECT 1 FROM chunks c WHERE c.id = h.id AND c.embed_hash IS NOT NULL)").rowcount
            db.execute("DELETE FROM held_vectors")
        return kept, given_up

    def needing(self, limit: int, after_rid: int, definitions: bool) -> list[VectorRow]:
        """At most `limit` chunks whose current vector Chroma lacks, in rid order after
        `after_rid` (a caller walks them slice by slice: nothing of the whole repository is held
        at once); only definitions or only the others (chunks_to_embed holds them apart)."""
        sql = ("SELECT c.rid, c.id, f.path, f.language, c.kind, c.embed_hash FROM chunks c "
               f"JOIN files f ON f.fid = c.fid WHERE (c.kind IN ({NOT_DEFINITIONS})) = ? AND c.rid > ? "
               "AND c.embed_hash IS NOT NULL AND c.vector_hash IS NOT c.embed_hash ORDER BY c.rid LIMIT ?")
        rows = self._catalog.db.execute(sql, (not definitions, after_rid, limit))
        return [VectorRow(r[0], r[1], r[2], r[3], r[4], r[5].hex()) for r in rows]

    def count_needing(self) -> int:
        return int(self._catalog.db.execute("SELECT COUNT(*) FROM chunks WHERE embed_hash IS NOT NULL "
                                   "AND vector_hash IS NOT embed_hash").fetchone()[0])

    def mark_stored(self, rows: Sequence[VectorRow]) -> list[str]:
        """Record that Chroma now holds these rows' vectors; returns the ids that no longer exist
        (deleted meanwhile), whose vectors the caller must remove again. Found by rowid, and the
        id checked (a rowid freed meanwhile may be another chunk's): the index on ids may not be
        there yet (the daemon embeds during its first index)."""
        gone = []
        with self._catalog.transaction() as db:
            for row in rows:
                if db.execute("UPDATE chunks SET vector_hash = ? WHERE rid = ? AND id = ?",
                              (bytes.fromhex(row.embed_hash), row.rid, row.id)).rowcount == 0:
                    gone.append(row.id)
            if self.holding():  # the vector a rebuild held is replaced (an id is held or its chunk's)
                db.executemany("DELETE FROM held_vectors WHERE id = ?", [(row.id,) for row in rows])
        return gone

    def pending_deletions(self) -> list[str]:
        return [r[0] for r in self._catalog.db.execute("SELECT id FROM vector_deletions")]

    def clear_deletions(self, ids: list[str]) -> None:
        with self._catalog.transaction() as db:
            db.executemany("DELETE FROM vector_deletions WHERE id = ?", [(i,) for i in ids])

    def cached(self, hashes: list[str]) -> dict[str, np.ndarray]:
        """Text hash -> the vector cached for it (float32, as `unpack` gives it back)."""
        rows = select_in(self._catalog.db, "SELECT text_hash, vector FROM embed_cache WHERE text_hash IN ({})",
                         [bytes.fromhex(h) for h in hashes])
        return {r[0].hex(): unpack(r[1]) for r in rows}

    def cache(self, items: list[tuple[str, np.ndarray]]) -> None:
        now = time.time()
        with self._catalog.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO embed_cache(text_hash, vector, used_at) VALUES (?, ?, ?)",
                           [(bytes.fromhex(h), pack(v), now) for h, v in items])

    def prune_cache(self, keep: int) -> int:
        """Keep the `keep` most recently used cached vectors, plus every live one (a sync that
        embedded a few chunks of a monorepo's million asks to keep 50,000: the live ones past
        that went too, and a vector store rebuilt from the cache had to embed them again)."""
        with self._catalog.transaction() as db:
            db.execute("UPDATE embed_cache SET used_at = ? WHERE text_hash IN (SELECT embed_hash FROM chunks)",
                       (time.time(),))
            cur = db.execute("DELETE FROM embed_cache WHERE rowid NOT IN (SELECT rowid FROM embed_cache "
                             "ORDER BY used_at DESC LIMIT ?) AND text_hash NOT IN "
                             "(SELECT embed_hash FROM chunks WHERE embed_hash IS NOT NULL)", (keep,))
            return cur.rowcount

    def cache_rows(self) -> Iterator[tuple[str, bytes, float]]:
        """Every row of the embedding cache that can still be read, as (text hash, vector in this
        layout's form, last used): for a rebuild, from a damaged catalog or one of format 1 too
        (a damaged catalog may give up half way; what came out is kept)."""
        try:
            if self._catalog.found_layout == 1:  # hex hashes beside the model's name, float32 vectors
                for row in self._catalog.db.execute("SELECT text_hash, vector, used_at FROM embed_cache"):
                    yield row[0], from_float32(row[1]), row[2]
                return
            for row in self._catalog.db.execute("SELECT text_hash, vector, used_at FROM embed_cache"):
                yield row[0].hex(), row[1], row[2]
        except sqlite3.DatabaseError:
            return

    def restore_cache_rows(self, rows: list[tuple[str, bytes, float]]) -> None:
        with self._catalog.transaction() as db:
            insert_cache_rows(db, rows)

    def ids_held(self, ids: list[str]) -> set[str]:
        """Those of `ids` that Chroma holds a vector for: their chunk's, or one a rebuild holds."""
        rows = select_in(self._catalog.db, f"SELECT id FROM ({HELD_BY_CHROMA}) WHERE id IN ({{}})", ids)
        return {r[0] for r in rows}

    def live_ids(self) -> set[str]:
        """Every chunk id that Chroma should hold a vector for."""
        return {r[0] for r in self._catalog.db.execute(HELD_BY_CHROMA)}

    def expected_count(self) -> int:
        """How many vectors Chroma should hold: chunks whose vector it was given, and those a
        rebuild holds (a catalog that no writer has opened since held_vectors came has none)."""
        if self._catalog.outdated:
            return 0
        count = "SELECT COUNT(*) FROM chunks WHERE vector_hash IS NOT NULL"
        if self._catalog.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'held_vectors'").fetchone():
            count += " UNION ALL SELECT COUNT(*) FROM held_vectors"
        return sum(r[0] for r in self._catalog.db.execute(count))

    def forget_all(self) -> None:
        """The vector store is gone (damaged, deleted): every chunk needs its vector again, and
        there is nothing left to delete from it. The embedding cache keeps what was computed."""
        with self._catalog.transaction() as db:
            db.execute("UPDATE chunks SET vector_hash = NULL WHERE vector_hash IS NOT NULL")
            db.execute("DELETE FROM vector_deletions")
            db.execute("DELETE FROM held_vectors")

    def forget(self, ids: list[str]) -> None:
        """Mark chunks as lacking vectors (Chroma lost them): the next sync embeds them again."""
        with self._catalog.transaction() as db:
            db.executemany("UPDATE chunks SET vector_hash = NULL WHERE id = ?", [(i,) for i in ids])
            db.executemany("DELETE FROM held_vectors WHERE id = ?", [(i,) for i in ids])

    def needed(self) -> bool:
        """Whether Chroma lags the catalog: chunks without current vectors, or vectors to delete.
        Not while a rebuild holds vectors: the chunks it writes get theirs back at its end, and a
        daemon's slices would meanwhile store them again from the cache."""
        db = self._catalog.db
        if self.holding():
            return False
        return bool(db.execute("SELECT 1 FROM chunks WHERE embed_hash IS NOT NULL AND vector_hash IS NOT embed_hash "
                               "LIMIT 1").fetchone()
                    or db.execute("SELECT 1 FROM vector_deletions LIMIT 1").fetchone())

    def coverage(self) -> tuple[int, int]:
        """(chunks that get a vector, those whose current vector Chroma holds): a table scan."""
        row = self._catalog.db.execute("SELECT COUNT(embed_hash), SUM(vector_hash = embed_hash) FROM chunks").fetchone()
        return int(row[0] or 0), int(row[1] or 0)

