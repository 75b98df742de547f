"""Daemon lifecycle: run in the foreground, start detached, stop, status.

A daemon holds an exclusive lock on `daemon.lock` in the index folder for as long as it lives.
That lock, not the pid file, says whether a daemon serves an index: a pid file left behind by a
killed daemon may name any process by now, so it is read only while the lock is held, and a
process is signalled only if its command line is a codesearch daemon of this root. Starts are
serialized by a second lock (`start.lock`), so two starts give one daemon. The pid and socket
files are written only by the lock's holder and removed when it stops; what a killed daemon
left is removed by whoever next finds the lock free.

A workspace daemon serves several repositories from one process (one model): it keeps its own
lock, pid, socket and log in the workspace's folder (`Workspace.state_dir`), and for each
repository it serves, that repository's lock, pid and socket too, so that a command about one of
them finds it as that repository's daemon. A repository whose own daemon already runs is served
through that daemon's socket instead.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Settings, load_settings
from ..indexing.index import ensure_index_dir
from ..paths import index_dir_for
from . import roster
from .client import SOCKET_NAME, DaemonClient, DaemonError, call

if TYPE_CHECKING:
    from ..api.protocol import Service
    from ..embedding.backends import SharedEmbedder
    from ..workspace import Workspace
    from .core import Daemon

PID_NAME, LOG_NAME, LOCK_NAME, START_LOCK_NAME = "daemon.pid", "daemon.log", "daemon.lock", "start.lock"
REPORT_BYTES = 1000  # the most of a failed start's reason that its starter reads
LOCK_RETRY_SECONDS = 2.0  # a status check holds the lock for microseconds: a starting daemon retries
LOG_FORMAT = "%(asctime)s %(levelname)s %(message)s"
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


def _remove(*paths: Path) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _read_pid(path: Path) -> int | None:
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
        _remove(files.sock, files.pid)  # nobody holds the lock: a killed daemon left these
        return None
    if files.sock.exists():
        with contextlib.suppress(OSError, ValueError, DaemonError):
            return call(files.sock, "health", timeout=5)
    return {"pid": _read_pid(files.pid), "ready": False, "starting": True}


@dataclass
class _Served:
    """What one daemon process serves, closed in reverse: socket servers, then daemons, then the
    files and locks of each repository it holds."""

    daemons: list[Daemon] = field(default_factory=list)
    servers: list = field(default_factory=list)  # RpcServer and HttpServer: each has close()
    held: list[tuple[DaemonFiles, DaemonLock]] = field(default_factory=list)

    def hold(self, files: DaemonFiles) -> bool:
        """Take a repository's daemon lock (False: another daemon serves it), and its files."""
        ensure_index_dir(files.lock.parent)
        lock = DaemonLock(files.lock)
        if not lock.acquire():
            return False
        self.held.append((files, lock))
        files.pid.write_text(str(os.getpid()))
        _remove(files.sock)  # we hold the lock: any socket here is a dead daemon's
        return True

    def close(self) -> None:
        for server in reversed(self.servers):
            server.close()
        for daemon in self.daemons:
            daemon.stop()
        for files, lock in reversed(self.held):
            _remove(files.sock, files.pid)
            lock.release()


def daemon_settings(root: Path) -> Settings:
    """A repository's settings as a daemon runs them: the model on `daemon_embed_threads`."""
    settings = load_settings(root)
    return replace(settings, embed_threads=settings.daemon_embed_threads)


def _root_daemon(root: Path, index_dir: str | None, force_polling: bool, stopping: threading.Event,
                 served: _Served, embedder: SharedEmbedder | None = None) -> Daemon:
    from .core import Daemon
    daemon = Daemon(root, daemon_settings(root), index_dir, force_polling=force_polling, stopping=stopping,
                    embedder=embedder)
    served.daemons.append(daemon)
    return daemon


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


def run_foreground(root: Path, index_dir: str | None, force_polling: bool = False, http: str | None = None,
                   idle_minutes: float | None = None) -> int:
    """Serve until asked to stop (the shutdown method, SIGTERM or Ctrl-C, at any moment), or
    until nothing was asked or done for `idle_minutes` (an auto-started daemon).
    `http`: [HOST:]PORT of an HTTP front-end too (its token comes from CODESEARCH_HTTP_TOKEN)."""
    root = root.resolve()
    return _run(DaemonFiles.of(root, index_dir), str(root), http,
                lambda stopping, served: _root_daemon(root, index_dir, force_polling, stopping, served),
                idle_minutes, registered=root)


def run_workspace(workspace: Workspace, force_polling: bool = False, http: str | None = None,
                  idle_minutes: float | None = None) -> int:
    """Serve every repository of the workspace from this process: a daemon per repository (its
    watcher and writer), one embedding model for all, and the workspace's answers on its socket."""
    from ..api.types import Ok
    from ..api.workspace_service import Member, WorkspaceService
    from ..embedding.backends import EmbedderPool
    from ..embedding.worker import daemon_embedder
    from ..transports.socket import RpcServer

    def build(stopping: threading.Event, served: _Served) -> Service:
        pool = EmbedderPool(daemon_embedder)
        members = []
        for spec in workspace.repos:
            if not spec.root.is_dir():
                members.append(Member(spec, problem=f"{spec.root} is missing"))
                log.warning("%s: %s is missing; serving the others", spec.name, spec.root)
                continue
            files = DaemonFiles.of(spec.root, None)
            if not served.hold(files):
                log.info("%s: its own daemon serves %s; asking it through %s", spec.name, spec.root, files.sock)
                members.append(Member(spec, DaemonClient(files.sock)))
                continue
            daemon = _root_daemon(spec.root, None, force_polling, stopping,
                                  served, pool.get(daemon_settings(spec.root)))
            server = RpcServer(files.sock, daemon)  # the repository's own socket, for commands about it alone
            server.serve_in_thread()
            served.servers.append(server)
            members.append(Member(spec, daemon))

        def shutdown() -> Ok:
            stopping.set()
            return Ok()

        return WorkspaceService(workspace, members, on_shutdown=shutdown)

    label = str(workspace.file) if workspace.file else ", ".join(str(r.root) for r in workspace.repos)
    return _run(DaemonFiles.of_workspace(workspace), f"the workspace {label}", http, build, idle_minutes)


def _run(files: DaemonFiles, label: str, http: str | None, build: Callable[[threading.Event, _Served], Service],
         idle_minutes: float | None = None, registered: Path | None = None) -> int:
    """Hold the daemon lock of `files`, build the service, serve it on the socket (and HTTP)
    until stopped, or until every daemon was idle for `idle_minutes`, then close everything in
    reverse. `registered`: the repository listed in the daemon registry (`daemon list`)."""
    from ..transports.http import TOKEN_ENV, HttpServer, check_exposure, parse_address
    from ..transports.socket import RpcServer

    http_address = parse_address(http) if http else None
    if http_address:
        check_exposure(http_address, os.environ.get(TOKEN_ENV))
    ensure_index_dir(files.lock.parent)
    lock = DaemonLock(files.lock)
    acquired = lock.acquire()
    _StartHandoff.locked()
    if not acquired:
        log.info("a daemon already serves %s (pid %s)", label, _read_pid(files.pid))
        return 0
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    served = _Served()
    try:
        files.pid.write_text(str(os.getpid()))
        _remove(files.sock)  # we hold the lock: any socket here is a dead daemon's
        service = build(stopping, served)
        if http_address:  # before the socket: a client that sees the socket may ask for the address
            web = HttpServer(http_address, service, os.environ.get(TOKEN_ENV))
            for daemon in served.daemons:
                daemon.http_address = str(web.address)
            web.serve_in_thread()
            served.servers.append(web)
            log.info("serving HTTP on http://%s", web.address)
        server = RpcServer(files.sock, service)
        server.serve_in_thread()
        served.servers.append(server)
        for daemon in served.daemons:
            daemon.idle_stop_minutes = idle_minutes
            daemon.start()
        if registered is not None:
            roster.register(registered, files.lock.parent, auto=idle_minutes is not None, idle_minutes=idle_minutes)
        log.info("serving %s on %s (pid %d)", label, files.sock, os.getpid())
        _StartHandoff.serving()
        while not stopping.wait(0.5):
            if idle_minutes is not None and served.daemons and \
                    min(d.idle_seconds() for d in served.daemons) > idle_minutes * 60:
                log.info("idle for %.0f minutes: stopping", idle_minutes)
                break
        log.info("shutting down")
    finally:
        served.close()
        _remove(files.sock, files.pid)
        if registered is not None:
            roster.unregister(files.lock.parent)
        lock.release()
    return 0


def _exit(code: int) -> None:
    """End the process now: threads may still be loading the model (importing torch), and an
    interpreter shutdown beside them can abort; everything worth keeping is written already."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


@contextlib.contextmanager
def _start_lock(path: Path, timeout: float) -> Iterator[int]:
    """The start lock, held while inside; its descriptor is handed to the daemon started inside,
    which keeps the lock until it holds its daemon lock (`_StartHandoff`)."""
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


class _StartHandoff:
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
    daemon started and its report pipe (_StartHandoff), whose reason an exit names."""
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
        command = [sys.executable, "-m", "codesearch.daemon.lifecycle", "run", *target.run_args]
        if force_polling:
            command.append("--polling")
        if idle_minutes is not None:
            command += ["--idle-minutes", str(idle_minutes)]
        env = dict(os.environ)
        if http:
            from ..transports.http import TOKEN_ENV, check_exposure, parse_address
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


def configure_logging() -> None:
    """Daemon logs go to stderr (a detached daemon's stderr is its log file)."""
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)


def serve(root: Path, index_dir: str | None, force_polling: bool = False, http: str | None = None,
          workspace: Workspace | None = None, idle_minutes: float | None = None) -> None:
    """Run the daemon (of `root`, or of `workspace` when given) in this process and end the
    process with it (see `_exit`)."""
    from ..transports.http import HttpConfigError
    configure_logging()
    DaemonLock.held_until_exit = True  # this process ends with the daemon (`_exit`)
    try:
        if workspace is not None:
            code = run_workspace(workspace, force_polling, http, idle_minutes)
        else:
            code = run_foreground(root, index_dir, force_polling, http, idle_minutes)
    except HttpConfigError as exc:
        log.error("the daemon cannot start: %s", exc)
        _StartHandoff.failed(str(exc))
        code = 2
    except Exception as exc:  # one line in the log (and to its starter) says why a daemon could not run
        log.exception("the daemon stopped on an error")
        folder = workspace.state_dir() if workspace is not None else index_dir_for(root.resolve(), index_dir)
        _StartHandoff.failed(_reason(exc, folder))
        code = 1
    _exit(code)


def _reason(exc: BaseException, folder: Path) -> str:
    """Why the daemon could not run, in one line: a full disk names its disk."""
    from ..store.space import full_disk_line, is_out_of_space
    if is_out_of_space(exc, folder):
        return full_disk_line(folder)
    return f"{type(exc).__name__}: {exc}"


def main(argv: list[str] | None = None) -> int:
    from ..workspace import load_workspace, workspace_of_paths
    parser = argparse.ArgumentParser(prog="codesearch-daemon")
    parser.add_argument("action", choices=("run",))
    parser.add_argument("paths", nargs="*", default=["."])
    parser.add_argument("--workspace")
    parser.add_argument("--index-dir")
    parser.add_argument("--polling", action="store_true")
    parser.add_argument("--http")
    parser.add_argument("--idle-minutes", type=float)
    parser.add_argument("--start-lock-fd", type=int)  # from start_target: see _StartHandoff
    parser.add_argument("--report-fd", type=int)
    args = parser.parse_args(argv)
    _StartHandoff.start_lock, _StartHandoff.report = args.start_lock_fd, args.report_fd
    workspace = (load_workspace(args.workspace) if args.workspace
                 else workspace_of_paths(args.paths) if len(args.paths) > 1 else None)
    serve(Path(args.paths[0] if args.paths else "."), args.index_dir, args.polling, args.http, workspace,
          args.idle_minutes)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
