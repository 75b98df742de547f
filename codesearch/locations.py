"""Where a repository's index and its daemon's socket are, found with `os.path` alone.

The CLI's fast path (a query that a running daemon answers) looks these up before anything else
and imports nothing heavier: pathlib alone is a visible share of such a process's CPU. `paths`
gives the same answers as `Path`s to everything else.
"""

from __future__ import annotations

import os

INDEX_DIR_NAME = ".codesearch"
INDEX_DIR_ENV = "CODESEARCH_INDEX_DIR"
CATALOG_FILE = "catalog.sqlite3"
SOCKET_NAME = "daemon.sock"


def index_folder(root: str | os.PathLike, explicit: str | os.PathLike | None = None) -> str:
    """The index folder: `explicit` (--index-dir), else $CODESEARCH_INDEX_DIR, else ROOT/.codesearch."""
    chosen = explicit or os.environ.get(INDEX_DIR_ENV)
    return os.path.realpath(chosen) if chosen else os.path.join(os.path.realpath(root), INDEX_DIR_NAME)


def enclosing_repository(start: str | os.PathLike) -> str:
    """The repository a command run in `start` means: the nearest folder up that has an index,
    else the nearest that is a git work tree, else `start` itself (so that a query from a
    subfolder neither misses the index nor builds a second one)."""
    start = os.path.realpath(start)
    folders = [start]
    while (parent := os.path.dirname(folders[-1])) != folders[-1]:
        folders.append(parent)
    for marker in (os.path.join(INDEX_DIR_NAME, CATALOG_FILE), ".git"):
        for folder in folders:
            if os.path.exists(os.path.join(folder, marker)):
                return folder
    return start


def command_root(given: str | None, index_dir: str | None) -> str:
    """The repository a command works on: the folder it names; else, when no index folder is
    named either, the enclosing repository of the current folder."""
    if given is None and not index_dir and not os.environ.get(INDEX_DIR_ENV):
        return enclosing_repository(os.getcwd())
    return os.path.realpath(given or ".")
