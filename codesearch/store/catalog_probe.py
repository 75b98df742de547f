"""Whether a catalog holds any file, asked without opening it as the catalog does (no schema
check, no upgrade, no write): the CLI asks before it loads anything heavy."""

from __future__ import annotations

from pathlib import Path

from ..paths import sqlite_uri
from .sqlite import sqlite3


def catalog_has_files(path: Path) -> bool:
    """Whether the catalog file at `path` is there and lists at least one file. One that is
    there but cannot be read counts as holding files: whoever opens it next reports the damage
    and its fix."""
    if not path.is_file():
        return False
    try:
        with sqlite3.connect(sqlite_uri(path, readonly=True), uri=True, timeout=5) as db:
            return db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None
    except sqlite3.Error:
        return True
