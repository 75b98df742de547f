"""Daemon lifecycle: start detached, stop, status (the daemon's own process runs
`transports.daemon_process`).

A daemon holds an exclusive lock on `daemon.lock` in the index folder for as long as it lives.
That lock, not the pid file, says whether a daemon serves an index: a pid file left behind by a
killed daemon may name any process by now, so it is read only while the lock is held, and a
process is signalled only if its command line is a codesearch daemon of this root. Starts are
serialized by a second lock (`start.lock`), so two starts give one daemon. The pid and socket
files are written only by the lock's holder and removed when it stops; what a killed daemon
left is removed by whoever next finds the lock free.

A daemon with an idle stop is an on-demand one (started by a query, an editor, an agent, or
`daemon start --idle-stop`): at most `max_auto_daemons` of them run on a machine, and one that
starts asks the least recently used others to stop (`stop_least_recent`). A quiet daemon goes
dormant (`daemon.dormant`): the same process, pid, lock and socket, without its model and index,
so everything here treats it as running.

A workspace daemon serves several repositories from one process (one model): it keeps its own
lock, pid, socket and log in the workspace's folder (`Workspace.state_dir`), and for each
repository it serves, that repository's lock, pid and socket too, so that a command about one of
them finds it as that repository's daemon. A repository whose own daemon already runs is served
through that daemon's socket instead.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Settings, load_settings
from ..indexing.index import ensure_index_dir
from ..paths import index_dir_for
from . import roster
from .client import SOCKET_NAME, DaemonError, call
from .http_address import TOKEN_ENV, check_exposure, parse_address

if TYPE_CHECKING:
    from ..workspace import Workspace

PID_NAME, LOG_NAME, LOCK_NAME, START_LOCK_NAME = "daemon.pid", "daemon.log", "daemon.lock", "start.lock"
REPORT_BYTES = 1000  # the most of a failed start's reason that its starter reads
LOCK_RETRY_SECONDS = 2.0  # a status check holds the lock for microseconds: a starting daemon retries
# what a started daemon's process runs (its `main`): the daemon with its socket and HTTP servers
DAEMON_MODULE = "codesearch.transports.daemon_process"
log = logging.getLogger("codesearch.daemon")


class DaemonLifecycleError(RuntimeError):
    """Starting or stopping failed; the message says why."""


@dataclass(frozen=True)
class DaemonFiles:
    sock: Path
    pid: Path
    log: Path
    lock: Path
    start_lock: Path

    @classmethod
    def of(cls, root: Path, index_dir: str | None) -> DaemonFiles:
        return cls.in_folder(index_dir_for(root, index_dir))

    @classmethod
    def of_workspace(cls, workspace: Workspace) -> DaemonFiles:
        return cls.in_folder(workspace.state_dir())

    @classmethod
    def in_folder(cls, folder: Path) -> DaemonFiles:
        return cls(folder / SOCKET_NAME, folder / PID_NAME, folder / LOG_NAME, folder / LOCK_NAME,
                   folder / START_LOCK_NAME)


def remove_files(*paths: Path) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip() or 0) or None
    except (OSError, ValueError):
        return None


def lock_is_held(path: Path) -> bool:
    """Whether a live process holds the daemon lock: a shared lock is refused while it does."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


class DaemonLock:
    """The lock a daemon holds for its whole life (released by the kernel if it is killed)."""

    # Set by `serve`, whose process ends with the daemon: its locks are then never released by
    # hand but by the kernel as the process exits, so that a free lock means the daemon is gone.
    # Released before `_exit`, a daemon still tearing down let a start spawn a second one beside it.
    held_until_exit = False

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None

    def acquire(self) -> bool:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + LOCK_RETRY_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.fd = fd
                return True
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    return False
                time.sleep(0.05)

    def adopt(self, fd: int) -> bool:
        """Hold the lock through a descriptor this process inherited already locked (a dormant
        daemon's, handed to the daemon it wakes)."""
        os.set_inheritable(fd, False)
        self.fd = fd
        return True

    def release(self) -> None:
        if self.fd is not None and not DaemonLock.held_until_exit:
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = None


def is_daemon_of(pid: int, root: Path) -> bool:
    """Whether `pid` runs a codesearch daemon for `root`: its command line names codesearch and
    a daemon, and one of its arguments is `root` (resolved in that process's working folder)."""
    proc = Path(f"/proc/{pid}")
    try:
        args = [os.fsdecode(a) for a in (proc / "cmdline").read_bytes().split(b"\0") if a]
        cwd = (proc / "cwd").resolve()
    except OSError:
        return False  # gone, or not ours to inspect: never signal it
    if not any("codesearch" in a for a in args) or not any("daemon" in a for a in args):
        return False
    return any((cwd / a).resolve() == root for a in args if not a.startswith("-"))


def running_daemon(root: Path, index_dir: str | None) -> dict | None:
    """Health of the daemon serving this index, or None; removes the leftovers of a dead one."""
    return running_at(DaemonFiles.of(root.resolve(), index_dir))


def running_at(files: DaemonFiles) -> dict | None:
    """Health of the daemon whose files these are (a repository's or a workspace's), or None."""
    if not lock_is_held(files.lock):
        remove_files(files.sock, files.pid)  # nobody holds the lock: a killed daemon left these
        return None
    if files.sock.exists():
        with contextlib.suppress(OSError, ValueError, DaemonError):
            return call(files.sock, "health", timeout=5)
    return {"pid": read_pid(files.pid), "ready": False, "starting": True}


def stop_least_recent(cap: int, keep: Path) -> list[roster.DaemonEntry]:
    """Ask the least recently used on-demand daemons to stop until at most `cap` run (never one
    started by hand, nor the daemon of the index folder `keep`); returns those asked. Their
    shutdown is not waited for: the daemon that calls this serves meanwhile."""
    on_demand = sorted((e for e in list_daemons() if e.auto), key=lambda e: e.last_request or e.started)
    excess = len(on_demand) - cap
    asked = []
    for entry in on_demand:
        if excess <= 0:
            break
        if Path(entry.index_dir) == keep:
            continue
        with contextlib.suppress(OSError, ValueError, DaemonError):
            call(Path(entry.index_dir) / SOCKET_NAME, "shutdown", timeout=5)
            log.info("%d on-demand daemons run (max_auto_daemons): stopped the least recently used, of %s",
                     len(on_demand), entry.root)
            asked.append(entry)
        excess -= 1
    return asked


def idle_stop_minutes(value: str | None, root: Path) -> float | None:
    """`daemon start --idle-stop VALUE` (checked by the parser: minutes, `auto` or `never`) as
    minutes, or None for no idle stop (also when not given: a daemon started by hand runs until
    stopped). `auto`: as a daemon a client starts on demand, the setting `daemon_idle_minutes`."""
    if value is None or value == "never":
        return None
    return load_settings(root).daemon_idle_minutes if value == "auto" else float(value)


def daemon_settings(root: Path) -> Settings:
    """A repository's settings as a daemon runs them: the model on `daemon_embed_threads`."""
    settings = load_settings(root)
    return replace(settings, embed_threads=settings.daemon_embed_threads)


def list_daemons() -> list[roster.DaemonEntry]:
    """The daemons that run now, by their registry entries; entries of dead daemons (their lock
    is free) and unreadable ones are removed on the way."""
    alive = []
    for path, entry in roster.entries():
        if entry is None or not lock_is_held(entry.lock):
            roster.remove(path)
        else:
            alive.append(entry)
    return alive


@contextlib.contextmanager
def _start_lock(path: Path, timeout: float) -> Iterator[int]:
    """The start lock, held while inside; its descriptor is handed to the daemon started inside,
    which keeps the lock until it holds its daemon lock (`StartHandoff`)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise DaemonLifecycleError("another `daemon start` is still starting this daemon") from None
                time.sleep(0.1)
        yield fd
    finally:
        os.close(fd)


class StartHandoff:
    """What a daemon started by `start_target` got from its starter: the start lock, which it
    lets go once it holds its daemon lock (a start that returns before the daemon is up then
    still serializes the next start: six first queries at once started three or four daemons),
    and the write end of a pipe where it says why it could not start, in one line (its log
    may be unwritable: a full disk). The pipe closes once it serves."""

    start_lock: int | None = None
    report: int | None = None

    @classmethod
    def locked(cls) -> None:
        """The daemon lock is held (or known to be another's): the start lock goes."""
        _close_quietly(cls.start_lock)
        cls.start_lock = None

    @classmethod
    def serving(cls) -> None:
        cls.locked()
        _close_quietly(cls.report)
        cls.report = None

    @classmethod
    def failed(cls, reason: str) -> None:
        if cls.report is not None:
            with contextlib.suppress(OSError):
                os.write(cls.report, (" ".join(reason.split())[:REPORT_BYTES] + "\n").encode())
        cls.serving()


def _close_quietly(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


def _read_report(fd: int) -> str:
    """What a daemon that exited wrote into its report pipe ('' for nothing); never blocks (a
    process it started may still hold the pipe open)."""
    os.set_blocking(fd, False)
    try:
        return os.read(fd, REPORT_BYTES + 1).decode(errors="replace").strip()
    except OSError:
        return ""


def _log_tail(path: Path, lines: int = 3) -> str:
    try:
        tail = path.read_text(errors="replace").strip().splitlines()[-lines:]
    except OSError:
        return ""
    return ("; last log lines: " + " | ".join(tail)) if tail else ""


def wait_ready(files: DaemonFiles, deadline: float, process: subprocess.Popen | None = None,
               report: int | None = None) -> dict | None:
    """The health of the daemon once it serves (None past `deadline`). `process`, `report`: the
    daemon started and its report pipe (StartHandoff), whose reason an exit names."""
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            reason = _read_report(report) if report is not None else ""
            said = f": {reason}" if reason else _log_tail(files.log)
            raise DaemonLifecycleError(f"the daemon exited with code {process.returncode}{said} (log: {files.log})")
        if files.sock.exists():
            with contextlib.suppress(OSError, ValueError, DaemonError):
                health = call(files.sock, "health", timeout=5)
                if health.get("ready"):
                    return health
        time.sleep(0.1)
    return None


@dataclass(frozen=True)
class DaemonTarget:
    """What a daemon serves, one repository or a workspace: its files, the arguments of its
    `run` command, and the argument of that command line that identifies it (for `is_daemon_of`)."""

    files: DaemonFiles
    run_args: tuple[str, ...]
    anchor: Path
    label: str

    @classmethod
    def repository(cls, root: Path, index_dir: str | None) -> DaemonTarget:
        root = root.resolve()
        extra = ("--index-dir", str(index_dir)) if index_dir else ()
        return cls(DaemonFiles.of(root, index_dir), (str(root), *extra), root, str(root))

    @classmethod
    def workspace(cls, workspace: Workspace) -> DaemonTarget:
        if workspace.file is not None:
            args: tuple[str, ...] = ("--workspace", str(workspace.file))
            anchor, label = workspace.file, f"the workspace {workspace.file}"
        else:
            args = tuple(str(r.root) for r in workspace.repos)
            anchor, label = workspace.repos[0].root, "the workspace of " + ", ".join(args)
        return cls(DaemonFiles.of_workspace(workspace), args, anchor, label)


def start_detached(root: Path, index_dir: str | None, wait_seconds: float = 600, force_polling: bool = False,
                   http: str | None = None, http_token: str | None = None, idle_minutes: float | None = None,
                   wait: bool = True) -> dict:
    """Start a background daemon for one repository (see `start_target`)."""
    return start_target(DaemonTarget.repository(root, index_dir), wait_seconds, force_polling, http, http_token,
                        idle_minutes, wait)


def start_target(target: DaemonTarget, wait_seconds: float = 600, force_polling: bool = False,
                 http: str | None = None, http_token: str | None = None, idle_minutes: float | None = None,
                 wait: bool = True) -> dict:
    """Start a background daemon and return its health once it is ready; a daemon already
    running (or starting) is waited for instead. A start that fails leaves nothing behind.
    The HTTP token travels in the child's environment, never on its command line.
    `idle_minutes`: the daemon stops itself after that long idle (auto-started daemons).
    `wait=False` returns as soon as the process is started (`{"pid", "starting": True}`)."""
    files = target.files
    ensure_index_dir(files.lock.parent)
    deadline = time.monotonic() + wait_seconds
    with _start_lock(files.start_lock, wait_seconds) as start_lock:
        running = running_at(files)
        if running and not wait:
            return {**running, "already_running": True}
        if running:
            health = wait_ready(files, deadline)
            if health is None:
                raise DaemonLifecycleError(f"the running daemon did not become ready in {wait_seconds:.0f}s")
            return {**health, "already_running": True}
        command = [sys.executable, "-m", DAEMON_MODULE, "run", *target.run_args]
        if force_polling:
            command.append("--polling")
        if idle_minutes is not None:
            command += ["--idle-minutes", str(idle_minutes)]
        env = dict(os.environ)
        if http:
            check_exposure(parse_address(http), http_token or env.get(TOKEN_ENV))  # refused here, not in the log
            command += ["--http", http]
            if http_token:
                env[TOKEN_ENV] = http_token
        report, report_end = os.pipe()
        command += ["--start-lock-fd", str(start_lock), "--report-fd", str(report_end)]
        try:
            with open(files.log, "ab") as out:
                process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                           start_new_session=True, close_fds=True, env=env,
                                           pass_fds=(start_lock, report_end))
        finally:
            os.close(report_end)
        if not wait:
            os.close(report)
            return {"pid": process.pid, "ready": False, "starting": True}
        try:
            health = wait_ready(files, deadline, process, report)
        finally:
            os.close(report)
        if health is None:
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(30)
            if process.poll() is None:
                process.kill()
            raise DaemonLifecycleError(f"the daemon did not become ready in {wait_seconds:.0f}s and was stopped"
                                       f"{_log_tail(files.log)}")
        return health


def stop_daemon(root: Path, index_dir: str | None, wait_seconds: float = 30) -> bool:
    """Stop the daemon of one repository (see `stop_target`)."""
    return stop_target(DaemonTarget.repository(root, index_dir), wait_seconds)


def stop_target(target: DaemonTarget, wait_seconds: float = 30) -> bool:
    """Ask the daemon to shut down and wait until its lock is free; False when none was running.
    Only a process that is this target's daemon is ever signalled."""
    files = target.files
    health = running_at(files)
    if not health:
        return False
    pid = health.get("pid")
    try:
        call(files.sock, "shutdown", timeout=5)
    except (OSError, ValueError, DaemonError):
        if pid and is_daemon_of(pid, target.anchor):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_seconds
    while lock_is_held(files.lock) and time.monotonic() < deadline:
        time.sleep(0.1)
    if lock_is_held(files.lock):
        raise DaemonLifecycleError(f"the daemon (pid {pid}) did not stop within {wait_seconds:.0f}s")
    return True

