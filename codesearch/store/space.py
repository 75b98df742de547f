"""A full disk, told apart from damage: a write that failed for want of space is a passing
trouble (free some space and the same write succeeds), so nothing is rebuilt or removed for it,
and whoever reports it names the disk in one line (`full_disk_line`).

SQLite says "database or disk is full" (SQLITE_FULL), Chroma passes that text on inside its own
errors, and the OS raises ENOSPC (or EDQUOT, a quota); SQLite says only "disk I/O error" when it
cannot even grow its shared-memory file, which counts as a full disk when the disk has next to no
space left."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .sqlite import sqlite3

LOW_SPACE_BYTES = 1 << 20  # with less than this free, an I/O error of SQLite is taken for a full disk
_FULL_TEXTS = ("database or disk is full", "no space left on device", "disk quota exceeded")
_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)


class OutOfSpace(RuntimeError):
    """A write failed because the disk holding the index is full; the message names that disk."""


def says_disk_full(text: str) -> bool:
    """Whether an error's text (Chroma's, a child process's last line) means a full disk."""
    low = text.lower()
    return any(marker in low for marker in _FULL_TEXTS)


def is_out_of_space(exc: BaseException, folder: Path | None = None) -> bool:
    """Whether `exc`, or an error it was raised from, means the disk is full. `folder`: the index
    folder, whose free space decides what a bare SQLite I/O error means."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OutOfSpace):
            return True
        if isinstance(current, OSError) and current.errno in _FULL_ERRNOS:
            return True
        if getattr(current, "sqlite_errorname", "") == "SQLITE_FULL" or says_disk_full(str(current)):
            return True
        if folder is not None and isinstance(current, sqlite3.OperationalError) and \
                "disk i/o error" in str(current).lower() and (free_bytes(folder) or 0) < LOW_SPACE_BYTES:
            return True
        current = current.__cause__ or current.__context__
    return False


@contextmanager
def space_errors(folder: Path) -> Iterator[None]:
    """Any error inside that means the disk of `folder` is full, as OutOfSpace naming it."""
    try:
        yield
    except OutOfSpace:
        raise
    except Exception as exc:
        if is_out_of_space(exc, folder):
            raise OutOfSpace(full_disk_line(folder)) from exc
        raise


def free_bytes(folder: Path) -> int | None:
    """Bytes an unprivileged writer may still use on the disk of `folder` (None: unknown)."""
    try:
        stats = os.statvfs(_existing(folder))
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize


def mount_point(folder: Path) -> Path:
    """The folder where the file system holding `folder` is mounted."""
    path = _existing(folder).resolve()
    while not os.path.ismount(path) and path != path.parent:
        path = path.parent
    return path


def full_disk_line(folder: Path) -> str:
    """One line naming the full disk: the folder written to, where its file system is mounted
    (and which), and what is left."""
    mount = mount_point(folder)
    kind = _file_system_of(mount)
    free = free_bytes(folder)
    left = f", {free:,} bytes free" if free is not None else ""
    return f"the disk holding {folder} is full ({kind + ' ' if kind else ''}mounted at {mount}{left})"


def _existing(folder: Path) -> Path:
    path = Path(folder)
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _file_system_of(mount: Path) -> str:
    """The type of the file system mounted at `mount` (Linux's /proc/mounts; '' elsewhere)."""
    try:
        lines = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return ""
    kinds = [fields[2] for fields in (line.split() for line in lines) if len(fields) > 2 and fields[1] == str(mount)]
    return kinds[-1] if kinds else ""
