"""The filters a search takes: a record of the JSON contract, and how its path filter reads as
SQLite GLOBs (the catalog) and ripgrep globs (grep)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import product

from .locations import INDEX_DIR_NAME
from .vocabulary import language_name
from .wire import Record

GLOB_CHARS = frozenset("*?[")
MAX_DEEP_PARTS = 4  # `**/` parts of a path filter read as "any folders, or none"; past these, "some"


@dataclass(frozen=True)
class Filters(Record):
    """Which chunks a search may return; the store turns them into SQL and Chroma filters."""

    DOCS = {"language": "A language by any common name or extension, in any case: python, py, Go, golang, "
                        "ts, c++, ...",
            "kind": "A chunk kind: function, method, class, file, ... (definitions and files).",
            "path_glob": "A folder (src, src/), a path's start, or a glob over the path relative to the "
                         "root (*.py, src/**, **/tests/**).",
            "repo": "In a team store (--store): only this repository, by its name in the store.",
            "branch": "In a team store (--store): only this branch."}
    OMIT_WHEN_NONE = frozenset({"repo", "branch"})

    language: str | None = None
    kind: str | None = None
    path_glob: str | None = None
    repo: str | None = None  # a team store's repository and branch (team/): a local index has one of each
    branch: str | None = None

    def __post_init__(self) -> None:
        """The language by the index's name for it: every front-end takes `Go`, `golang` or `go`."""
        self.check()
        if self.language:
            object.__setattr__(self, "language", language_name(self.language))

    @property
    def active(self) -> bool:
        return bool(self.language or self.kind or self.path_glob)


def _plain_path(path_glob: str) -> str:
    """The filter without `./` or `/` before it (paths are relative to the root)."""
    while path_glob.startswith("./"):
        path_glob = path_glob[2:]
    return path_glob.lstrip("/")


def is_glob(path_glob: str) -> bool:
    return not GLOB_CHARS.isdisjoint(path_glob)


def sql_globs(path_glob: str) -> tuple[str, ...]:
    """SQLite GLOBs whose union the path filter means. No glob characters: a folder, a file or a
    path's start (`src`, `src/`, `src/ma`). A glob: its `**/` stands for any folders or none
    (`**/tests/**` takes `tests/x.py` too); SQLite's `*` crosses `/`, so `**` is `*`."""
    text = _plain_path(path_glob)
    if not is_glob(text):
        return (text.rstrip("/") + "*",)
    parts = text.split("**/")
    deep = len(parts) - 1
    if deep > MAX_DEEP_PARTS:
        return (text.replace("**", "*"),)
    globs = []
    for choice in product(("", "*/"), repeat=deep):
        joined = parts[0] + "".join(c + p for c, p in zip(choice, parts[1:]))
        globs.append(joined.replace("**", "*"))
    return tuple(dict.fromkeys(globs))


def rg_globs(path_glob: str) -> tuple[str, ...]:
    """ripgrep's --glob arguments for the same filter: a plain path anchored at the root, with
    everything under it; a glob as ripgrep reads globs (gitignore's: `*.py` at any depth)."""
    text = _plain_path(path_glob)
    if is_glob(text):
        return (text,)
    start = "".join("\\" + c if c in "{}\\!" else c for c in text.rstrip("/"))
    return (f"/{start}*", f"/{start}*/**")


UNWALKED_FOLDERS = frozenset({".git", INDEX_DIR_NAME, "node_modules"})  # never indexed, not worth walking


def matches_no_file(root: str, path_glob: str) -> bool:
    """Whether no file under `root` passes the path filter, as the catalog reads it: asked only
    after an empty answer, so that it is not read as "nothing in those files matched"."""
    from fnmatch import fnmatchcase
    globs = sql_globs(path_glob)
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f not in UNWALKED_FOLDERS]
        rel = os.path.relpath(folder, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        if any(fnmatchcase(prefix + name, glob) for name in files for glob in globs):
            return False
    return True


def unmatched_path_line(path_glob: str) -> str:
    """What an answer says when its path filter matched no file in the tree."""
    return (f"--path {path_glob!r} matches no file in the repository "
            "(give a folder, a path's start or a glob such as '**/tests/**')")
