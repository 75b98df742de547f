"""The keyword index (FTS5, BM25 over name, path, signature+docstring and body): its rows
written, and chunks found by their terms; and the chunks' message templates beside it."""

from __future__ import annotations

from collections.abc import Sequence

from ..filters import Filters
from .sql import CatalogCore, filter_clause, select_in
from .sqlite import sqlite3


class Keywords:
    """The chunks' keyword-index rows (`chunks_fts`, keyed by chunk rowid)."""

    def __init__(self, catalog: CatalogCore):
        self._catalog = catalog

    def insert(self, db: sqlite3.Connection, rows: list[tuple[int, str, str, str, str]]) -> None:
        """Keyword-index rows (rid, name, path, signature, body) of chunks written."""
        db.executemany("INSERT INTO chunks_fts(rowid, name, path, signature, body) VALUES (?, ?, ?, ?, ?)", rows)

    def document_frequency(self, term: str, named: bool = False) -> int:
        """Chunks whose keyword index holds `term` (matched, so stemmed exactly as indexed); `named`:
        in their name or signature."""
        return int(self._catalog.db.execute("SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH ?",
                                            (_phrases([], [term]) if named else _phrases([term]),)).fetchone()[0])

    def search(self, terms: list[str], column_weights: tuple[float, ...], filters: Filters,
               limit: int, every: bool = False, named: Sequence[str] = ()) -> list[tuple[str, float]]:
        """(chunk id, BM25 score, higher is better) of chunks holding any of `terms` (`every`: all
        of them) or holding one of `named` in their name or signature, best first."""
        match = _phrases(terms, named, " AND " if every else " OR ")
        weights = ", ".join(str(w) for w in column_weights)
        if not filters.active:
            rows = self._catalog.db.execute(
                f"SELECT c.id, s.score FROM (SELECT rowid, bm25(chunks_fts, {weights}) AS score FROM chunks_fts "
                f"WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?) s JOIN chunks c ON c.rid = s.rowid "
                f"ORDER BY s.score", (match, limit)).fetchall()
        else:
            where, params = filter_clause(filters)
            rows = self._catalog.db.execute(
                f"SELECT c.id, bm25(chunks_fts, {weights}) AS score FROM chunks_fts "
                f"JOIN chunks c ON c.rid = chunks_fts.rowid JOIN files f ON f.fid = c.fid "
                f"WHERE chunks_fts MATCH ?{where} ORDER BY score LIMIT ?", [match, *params, limit]).fetchall()
        return [(r[0], -r[1]) for r in rows]

    def replace_templates(self, db: sqlite3.Connection, templates: Sequence[tuple[int, str]]) -> None:
        """Make `templates` (chunk rid, its message templates or "" for none) those chunks' own, in
        one statement each way (FTS5 writes a segment per savepoint: the batch writes them once)."""
        select_in(db, "DELETE FROM messages WHERE rowid IN ({})", [rid for rid, _ in templates])
        db.executemany("INSERT INTO messages(rowid, templates) VALUES (?, ?)", [row for row in templates if row[1]])

    def templates(self, ids: Sequence[str]) -> dict[str, str]:
        """Chunk id -> its message templates, for the chunks of `ids` that have some."""
        return dict(select_in(self._catalog.db, "SELECT c.id, m.templates FROM chunks c JOIN messages m "
                              "ON m.rowid = c.rid WHERE c.id IN ({})", list(ids)))

    def templates_holding(self, words: Sequence[str], filters: Filters, limit: int) -> dict[str, str]:
        """Chunk id -> its message templates, for the `limit` chunks whose templates hold the most
        of `words` (BM25: the rare ones count most)."""
        if not words:
            return {}
        if not filters.active:
            return dict(self._catalog.db.execute(
                "SELECT c.id, m.templates FROM (SELECT rowid, templates, rank FROM messages WHERE messages MATCH ? "
                "ORDER BY rank LIMIT ?) m JOIN chunks c ON c.rid = m.rowid", (_phrases(words), limit)).fetchall())
        where, params = filter_clause(filters)  # the best inside the filter, not the best filtered
        return dict(self._catalog.db.execute(
            f"SELECT c.id, messages.templates FROM messages JOIN chunks c ON c.rid = messages.rowid "
            f"JOIN files f ON f.fid = c.fid WHERE messages MATCH ?{where} ORDER BY messages.rank LIMIT ?",
            [_phrases(words), *params, limit]).fetchall())

    def phrase_counts(self, phrases: Sequence[str], filters: Filters, limit: int,
                      at_least: int = 1) -> list[tuple[str, int]]:
        """(chunk id, how many of `phrases` its keyword index holds word for word), most first,
        for chunks holding `at_least` of them: one statement, each phrase a branch of a union
        counted per chunk."""
        union = " UNION ALL ".join(["SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?"] * len(phrases))
        where, params = filter_clause(filters)
        files = " JOIN files f ON f.fid = c.fid" if where else ""
        rows = self._catalog.db.execute(
            f"SELECT c.id, COUNT(*) AS n FROM ({union}) m JOIN chunks c ON c.rid = m.rowid{files} "
            f"WHERE 1{where} GROUP BY m.rowid HAVING n >= ? ORDER BY n DESC LIMIT ?",
            [*(f'"{p}"' for p in phrases), *params, at_least, limit]).fetchall()
        return [(r[0], r[1]) for r in rows]


def _phrases(terms: Sequence[str], named: Sequence[str] = (), between: str = " OR ") -> str:
    """An FTS5 query: each term a phrase of its own; `named` ones matched in the name and
    signature columns only."""
    return between.join([f'"{t}"' for t in terms] + [f'{{name signature}}: "{t}"' for t in named])
