"""The SQLite library behind the catalog: a recent one where the platform has it.

The catalog's keyword index keeps no copy of the text it indexes (FTS5 `content=''`), which
needs SQLite 3.43 or newer to delete rows (`contentless_delete=1`). Python's own `sqlite3`
links the system's SQLite, often older (3.40 on Debian 12); the `pysqlite3-binary` wheel
brings a current one. Every module that opens the catalog or catches its errors imports
`sqlite3` from here, so the classes match.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3
else:
    try:
        from pysqlite3 import dbapi2 as sqlite3
    except ImportError:  # no wheel for this platform: the system's library
        import sqlite3

CONTENTLESS_DELETE = sqlite3.sqlite_version_info >= (3, 43, 0)  # FTS5 rows of a contentless table can be deleted

__all__ = ["CONTENTLESS_DELETE", "sqlite3"]
