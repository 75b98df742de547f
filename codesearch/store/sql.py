"""What the catalog's parts share: SQL over long lists of values, the filters as SQL, hashes as
blobs, and `CatalogCore`, what each part needs of the catalog it belongs to."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from ..filters import Filters, sql_globs
from .sqlite import sqlite3


class CatalogCore(Protocol):
    """The catalog as its parts (files, keywords, vectors, graph, stats) see it: this thread's
    connection and its transactions, and the layout of the tables it found."""

    found_layout: int

    @property
    def db(self) -> sqlite3.Connection: ...

    @property
    def outdated(self) -> bool: ...

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def owe_keyword_totals(self, db: sqlite3.Connection, fid: int) -> None: ...


SQL_IN_SLICE = 500  # values per `IN (...)`: well under SQLite's limit on bound variables


def select_in(db: sqlite3.Connection, sql: str, values: list, before: tuple = (), after: tuple = ()) -> list:
    """Run `sql`, whose `{}` marks an `IN ({})` list, over `values` in slices; all rows.

    `before` and `after` are the parameters that stand before and after the list in `sql`."""
    rows: list = []
    for start in range(0, len(values), SQL_IN_SLICE):
        part = list(values[start:start + SQL_IN_SLICE])
        rows += db.execute(sql.format(",".join("?" * len(part))), [*before, *part, *after]).fetchall()
    return rows


def blob(hex_hash: str | None) -> bytes | None:
    return bytes.fromhex(hex_hash) if hex_hash else None


def like_escaped(text: str) -> str:
    """`text` for a LIKE pattern with ESCAPE '\\': its own % and _ match themselves."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def ascii_lower(text: str) -> str:
    """Lower case as SQLite's NOCASE and lower() see it: ASCII letters only."""
    return text.translate(ASCII_LOWER)


ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


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
        globs = sql_globs(filters.path_glob)
        clauses.append("(" + " OR ".join([f"{file}.path GLOB ?"] * len(globs)) + ")" if len(globs) > 1
                       else f"{file}.path GLOB ?")
        params.extend(globs)
    return (" AND " + " AND ".join(clauses)) if clauses else "", params

