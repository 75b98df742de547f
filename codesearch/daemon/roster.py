"""Which daemons run on this machine for this user: one small JSON file per daemon in a private
runtime folder, written by the daemon when it serves and removed when it stops. A killed daemon
leaves its file behind, so readers trust an entry only while its daemon's lock is held (see
`lifecycle.list_daemons`) and remove the others."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

RUNTIME_ENV = "CODESEARCH_RUNTIME_DIR"


def runtime_dir() -> Path:
    """$CODESEARCH_RUNTIME_DIR, else $XDG_RUNTIME_DIR/codesearch (a per-user tmpfs, gone at
    logout like the daemons), else ~/.cache/codesearch/daemons."""
    chosen = os.environ.get(RUNTIME_ENV)
    if chosen:
        return Path(chosen)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and Path(xdg).is_dir():
        return Path(xdg) / "codesearch"
    return Path.home() / ".cache" / "codesearch" / "daemons"


@dataclass(frozen=True)
class DaemonEntry:
    root: str
    index_dir: str
    pid: int
    started: float
    auto: bool  # started by a query or an editor, and so stopped when idle
    idle_minutes: float | None = None
    last_request: float = 0.0  # when it last answered or did something (the cap stops the oldest first)
    dormant: bool = False  # its model and caches given back; the next request wakes it

    @property
    def lock(self) -> Path:
        return Path(self.index_dir) / "daemon.lock"


def entry_path(index_dir: Path) -> Path:
    return runtime_dir() / (hashlib.sha1(str(index_dir).encode()).hexdigest()[:16] + ".json")


def register(root: Path, index_dir: Path, auto: bool, idle_minutes: float | None) -> DaemonEntry:
    """Best effort: a daemon serves even where the runtime folder cannot be written."""
    now = time.time()
    entry = DaemonEntry(str(root), str(index_dir), os.getpid(), now, auto, idle_minutes, last_request=now)
    write(entry)
    return entry


def write(entry: DaemonEntry) -> None:
    """The entry's file replaced at once (readers never see half of it); best effort."""
    path = entry_path(Path(entry.index_dir))
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(asdict(entry)))
        partial.replace(path)


def unregister(index_dir: Path) -> None:
    path = entry_path(index_dir)
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text()).get("pid") == os.getpid():  # not a successor's entry
            path.unlink()


def entries() -> list[tuple[Path, DaemonEntry | None]]:
    """Every file of the registry, with its entry (None: unreadable, to be removed)."""
    folder = runtime_dir()
    out: list[tuple[Path, DaemonEntry | None]] = []
    try:
        files = sorted(folder.glob("*.json"))
    except OSError:
        return out
    for path in files:
        try:
            data = json.loads(path.read_text())
            out.append((path, DaemonEntry(**data)))
        except (OSError, ValueError, TypeError):
            out.append((path, None))
    return out


def remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
