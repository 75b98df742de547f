"""A front-end that finds no daemon for its repository: whether it may start one (setting
`auto_daemon`), whether the repository has an index at all, and starting a daemon that stops
itself once idle (`daemon_idle_minutes`). Light imports: the CLI calls it before anything heavy."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..locations import CATALOG_FILE
from ..paths import index_dir_for
from .client import NO_DAEMON_ENV

if TYPE_CHECKING:
    from ..config import Settings


def may_start(settings: Settings, refused: bool = False) -> bool:
    """`refused`: the command said --no-daemon."""
    return settings.auto_daemon and not refused and not os.environ.get(NO_DAEMON_ENV)


def has_index(root: Path, index_dir: str | None) -> bool:
    """Whether a catalog with at least one file is there (a first query builds one otherwise)."""
    from ..store.catalog_probe import catalog_has_files
    return catalog_has_files(index_dir_for(root, index_dir) / CATALOG_FILE)


def start(root: Path, index_dir: str | None, settings: Settings, wait_seconds: float | None) -> dict | None:
    """Start the repository's daemon, which stops itself after `daemon_idle_minutes` idle.
    `wait_seconds` None: return once the process runs; else wait that long for it to serve, and
    return None if it is still starting then (it goes on: it may have much to catch up with)."""
    import time

    from .lifecycle import DaemonFiles, start_detached, wait_ready
    health = start_detached(root, index_dir, idle_minutes=settings.daemon_idle_minutes, wait=False)
    if wait_seconds is None or health.get("ready"):
        return health
    return wait_ready(DaemonFiles.of(root.resolve(), index_dir), time.monotonic() + wait_seconds)
