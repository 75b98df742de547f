"""Paths inside a repository: one helper keeps every path from a user, a client or the file
system inside the root, and file names of any bytes get one lossless, printable form.

The index names a file by its path relative to the root, '/'-separated, in *escaped* form: a
backslash becomes `\\\\`, and control characters and bytes that are not UTF-8 become `\\xNN`.
Every other character stands for itself, so ordinary names are unchanged; the escaped form is
valid UTF-8 (SQLite and JSON take it), fits on one line (vimgrep, quickfix lists), and maps back
to exactly one name on disk.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .locations import INDEX_DIR_NAME as INDEX_DIR_NAME  # where it is defined; imported from here too
from .locations import enclosing_repository, index_folder
from .wire import RequestError


def index_dir_for(root: Path, explicit: str | os.PathLike | None = None) -> Path:
    """The index folder: --index-dir, else $CODESEARCH_INDEX_DIR, else ROOT/.codesearch."""
    return Path(index_folder(root, explicit))


def sqlite_uri(path: str | os.PathLike, readonly: bool = False) -> str:
    """A database file as an SQLite URI, escaped: a `#`, `?` or `%` in a folder's name would
    otherwise end or change the path (a catalog written to the wrong file)."""
    uri = Path(path).absolute().as_uri()
    return f"{uri}?mode=ro" if readonly else uri


def project_root(start: Path) -> Path:
    """The repository a command run in `start` means (`locations.enclosing_repository`)."""
    return Path(enclosing_repository(start))


class OutsideRoot(RequestError):
    """A path that leaves the repository (by `..`, an absolute path or a symlink): every
    front-end refuses it as a bad request."""


_NEEDS_ESCAPE = re.compile(r"[\\\x00-\x1f\x7f\udc80-\udcff]")
_ESCAPED = re.compile(r"\\(\\|x[0-9a-f]{2})")


def _escape_char(m: re.Match[str]) -> str:
    ch = m.group(0)
    if ch == "\\":
        return "\\\\"
    code = ord(ch)
    return f"\\x{code - 0xDC00 if code >= 0xDC80 else code:02x}"


def escape_name(name: str) -> str:
    """A file name as `os.fsdecode` gives it (undecodable bytes as lone surrogates) -> the
    index's printable form."""
    return _NEEDS_ESCAPE.sub(_escape_char, name) if _NEEDS_ESCAPE.search(name) else name


def _unescape_char(m: re.Match[str]) -> str:
    body = m.group(1)
    if body == "\\":
        return "\\"
    code = int(body[1:], 16)
    return chr(code + 0xDC00) if code >= 0x80 else chr(code)


def unescape_name(text: str) -> str:
    """The index's form -> the name as the file system has it (for `os` calls)."""
    return _ESCAPED.sub(_unescape_char, text) if "\\" in text else text


def on_disk(root: Path, rel: str) -> Path:
    """Where the indexed path `rel` (escaped form) is on disk. No checks: see `confine`."""
    return root / unescape_name(rel)


def read_inside(root: Path, rel: str, limit: int) -> bytes | None:
    """At most `limit` bytes of the indexed file `rel`, if it can be read and still lies inside
    `root` (resolved, as an Index holds it: a file indexed then may have been replaced by a link
    that leaves it since); else None.

    The file is opened first and then asked where it really is (/proc/self/fd on Linux: one call,
    where resolving the path component by component takes one per folder)."""
    path = on_disk(root, rel)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        proc = f"/proc/self/fd/{fd}"
        real = os.readlink(proc) if os.path.exists(proc) else os.path.realpath(path)
        if not real.startswith(str(root) + os.sep):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def confine(root: Path, path: str, follow_last: bool = True) -> str:
    """The indexed form of `path` (relative to `root`, or absolute) after resolving `..` and
    symlinks; raises OutsideRoot when it is not inside `root`. "" stands for the root itself.

    A path that reaches a place inside the root through a symlink is answered with that place's
    own path, the one the walker indexes it under. With `follow_last=False` only the folders on
    the way are resolved: a last component that is a symlink stays one (the walker then decides
    about it, and skips a link that leaves the root)."""
    root = root.resolve()
    candidate = Path(unescape_name(path))
    if not candidate.is_absolute():
        candidate = root / candidate
    if not follow_last and candidate.name not in ("", ".", ".."):
        resolved = Path(os.path.realpath(candidate.parent)) / candidate.name
    else:  # strict=False: a path that no longer exists (a deleted file) is fine
        resolved = Path(os.path.realpath(candidate))
    if resolved != root and root not in resolved.parents:
        raise OutsideRoot(f"{path} is outside the repository {root}")
    rel = resolved.relative_to(root).as_posix()
    return "" if rel == "." else escape_name(rel)
