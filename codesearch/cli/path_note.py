"""The line that says a `--path` filter matched no file at all, so that an empty answer is not
read as "nothing in those files matched". Asked of the tree only when an answer came back empty."""

from __future__ import annotations

import os
import sys

from ..locations import INDEX_DIR_NAME

IGNORED_FOLDERS = frozenset({".git", INDEX_DIR_NAME, "node_modules"})  # never indexed, not worth walking


def matches_no_file(root: str, path_glob: str) -> bool:
    """Whether no file under `root` passes the path filter, as the catalog reads it."""
    from fnmatch import fnmatchcase

    from ..filters import sql_globs
    globs = sql_globs(path_glob)
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f not in IGNORED_FOLDERS]
        rel = os.path.relpath(folder, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        if any(fnmatchcase(prefix + name, glob) for name in files for glob in globs):
            return False
    return True


def note_unmatched_path(roots: list[str], path_glob: str | None) -> None:
    """After an empty answer: say so on stderr when the path filter matched no file in any root."""
    if path_glob and all(matches_no_file(root, path_glob) for root in roots):
        print(f"codesearch: --path {path_glob!r} matches no file in the repository "
              "(give a folder, a path's start or a glob such as '**/tests/**')", file=sys.stderr)
