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
import stat
from collections.abc import Callable
from pathlib import Path

from .locations import INDEX_DIR_NAME as INDEX_DIR_NAME  # where it is defined; imported from here too
from .locations import index_folder
from .wire import RequestError


def index_dir_for(root: Path, explicit: str | os.PathLike | None = None) -> Path:
    """The index folder: --index-dir, else $CODESEARCH_INDEX_DIR, else ROOT/.codesearch."""
    return Path(index_folder(root, explicit))


def sqlite_uri(path: str | os.PathLike, readonly: bool = False) -> str:
    """A database file as an SQLite URI, escaped: a `#`, `?` or `%` in a folder's name would
    otherwise end or change the path (a catalog written to the wrong file)."""
    uri = Path(path).absolute().as_uri()
    return f"{uri}?mode=ro" if readonly else uri


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


class NotRegularFile(OSError):
    """A folder, FIFO, socket or device where a file was asked for: opened without blocking
    (a FIFO nobody writes would hold the reader for ever) and refused. `kind` says which."""

    def __init__(self, kind: str):
        super().__init__(f"{kind}, not a regular file")
        self.kind = kind


def file_kind(mode: int) -> str:
    """What a non-regular file is, for messages."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device or special file"


_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _real_path(fd: int, fallback: Path) -> str:
    """Where the open file `fd` really is: the kernel's own answer on Linux (the descriptor
    cannot change under us, unlike a path resolved by name); elsewhere the name resolved."""
    proc = f"/proc/self/fd/{fd}"
    try:
        return os.readlink(proc).removesuffix(" (deleted)")
    except OSError:
        return os.path.realpath(fallback)


def open_checked(path: Path, accept: Callable[[str], bool]) -> int:
    """A descriptor of the regular file at `path`, opened first and checked after: its real
    path must pass `accept`, so a folder on the way swapped for a link between any check and
    the open cannot make it read another file. Raises NotRegularFile, OutsideRoot or OSError."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(file_kind(mode))
        if not accept(_real_path(fd, path)):
            raise OutsideRoot(f"{path} is not inside the repository")
    except BaseException:
        os.close(fd)
        raise
    return fd


def inside(root: Path) -> Callable[[str], bool]:
    """Accepts a real path under `root` (resolved)."""
    prefix = str(root) + os.sep
    return lambda real: real.startswith(prefix)


def read_inside(root: Path, rel: str, limit: int) -> bytes | None:
    """At most `limit` bytes of the indexed file `rel`, if it is a regular file and still lies
    inside `root` (resolved, as an Index holds it: a file indexed then may have been replaced by
    a link that leaves it since); else None."""
    try:
        fd = open_checked(on_disk(root, rel), inside(root))
    except (OSError, RequestError):
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            return handle.read(limit)
        except OSError:
            return None


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
    try:
        if not follow_last and candidate.name not in ("", ".", ".."):
            resolved = Path(os.path.realpath(candidate.parent)) / candidate.name
        else:  # strict=False: a path that no longer exists (a deleted file) is fine
            resolved = Path(os.path.realpath(candidate))
    except OSError as exc:  # a link replaced while it was read (EINVAL), a loop: nothing to answer
        raise RequestError(f"{path} cannot be resolved ({exc.strerror or exc})") from None
    if resolved != root and root not in resolved.parents:
        raise OutsideRoot(f"{path} is outside the repository {root}")
    rel = resolved.relative_to(root).as_posix()
    return "" if rel == "." else escape_name(rel)


def unsteady(root: Path, rels: list[str], since: float) -> list[bool]:
    """For files another program found by walking folders and read by name since `since`
    (time.time()), whether each could have been read from somewhere else: a folder on its way
    (the root included) changed its entries since then, or is now a link or no folder. A
    folder's ctime is set by the kernel whenever an entry is added, removed or renamed, and no
    user can set it back, so a swap of a folder (or a file) for a link and back shows. The walk
    follows no link, so the files themselves need no look: one lstat a folder, not a file."""
    top = str(root)
    folders: dict[str, bool] = {}

    def folder_changed(rel_dir: str) -> bool:
        changed = folders.get(rel_dir)
        if changed is None:
            try:
                info = os.lstat(top + "/" + unescape_name(rel_dir) if rel_dir else top)
                changed = not stat.S_ISDIR(info.st_mode) or info.st_ctime >= since
            except OSError:
                changed = True
            if not changed and rel_dir:
                changed = folder_changed(rel_dir.rpartition("/")[0])
            folders[rel_dir] = changed
        return changed

    return [folder_changed(rel.rpartition("/")[0]) for rel in rels]
