"""Daemon lifecycle: run in the foreground, start detached, stop, status.

A daemon holds an exclusive lock on `daemon.lock` in the index folder for as long as it lives.
That lock, not the pid file, says whether a daemon serves an index: a pid file left behind by a
killed daemon may name any process by now, so it is read only while the lock is held, and a
process is signalled only if its command line is a codesearch daemon of this root. Starts are
serialized by a second lock (`start.lock`), so two starts give one daemon. The pid and socket
files are written only by the lock's holder and removed when it stops; what a killed daemon
left is removed by whoever next finds the lock free.
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
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from ..config import load_settings
from ..indexing.index import ensure_index_dir
from ..paths import index_dir_for
from . import registry
from .client import SOCKET_NAME, DaemonError, call

PID_NAME, LOG_NAME, LOCK_NAME, START_LOCK_NAME = "daemon.pid", "daemon.log", "daemon.lock", "start.lock"
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
        folder = index_dir_for(root, index_dir)
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
        if self.fd is not None:
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
    files = DaemonFiles.of(root.resolve(), index_dir)
    if not lock_is_held(files.lock):
        _remove(files.sock, files.pid)  # nobody holds the lock: a killed daemon left these
        return None
    if files.sock.exists():
        with contextlib.suppress(OSError, ValueError, DaemonError):
            return call(files.sock, "health", timeout=5)
    return {"pid": _read_pid(files.pid), "ready": False, "starting": True}


def list_daemons() -> list[registry.DaemonEntry]:
    """The daemons that run now, by their registry entries; entries of dead daemons (their lock
    is free) and unreadable ones are removed on the way."""
    alive = []
    for path, entry in registry.entries():
        if entry is None or not lock_is_held(entry.lock):
            registry.remove(path)
        else:
            alive.append(entry)
    return alive


def run_foreground(root: Path, index_dir: str | None, force_polling: bool = False, http: str | None = None,
                   idle_minutes: float | None = None) -> int:
    """Serve until asked to stop (the shutdown method, SIGTERM or Ctrl-C, at any moment), or
    until nothing was asked or done for `idle_minutes` (an auto-started daemon).
    `http`: [HOST:]PORT of an HTTP front-end too (its token comes from CODESEARCH_HTTP_TOKEN)."""
    from ..transports.http import TOKEN_ENV, HttpServer, check_exposure, parse_address
    from ..transports.socket import RpcServer
    from .service import Daemon

    root = root.resolve()
    http_address = parse_address(http) if http else None
    if http_address:
        check_exposure(http_address, os.environ.get(TOKEN_ENV))
    files = DaemonFiles.of(root, index_dir)
    ensure_index_dir(files.lock.parent)
    lock = DaemonLock(files.lock)
    if not lock.acquire():
        log.info("a daemon already serves %s (pid %s)", root, _read_pid(files.pid))
        return 0
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    server = daemon = web = None
    try:
        files.pid.write_text(str(os.getpid()))
        _remove(files.sock)  # we hold the lock: any socket here is a dead daemon's
        settings = load_settings(root)
        settings = replace(settings, embed_threads=settings.daemon_embed_threads)
        daemon = Daemon(root, settings, index_dir, force_polling=force_polling, stopping=stopping)
        daemon.idle_stop_minutes = idle_minutes
        if http_address:  # before the socket: a client that sees the socket may ask for the address
            web = HttpServer(http_address, daemon, os.environ.get(TOKEN_ENV))
            daemon.http_address = str(web.address)
            web.serve_in_thread()
            log.info("serving HTTP on http://%s", web.address)
        server = RpcServer(files.sock, daemon)
        server.serve_in_thread()
        daemon.start()
        registry.register(root, files.lock.parent, auto=idle_minutes is not None, idle_minutes=idle_minutes)
        log.info("serving %s on %s (pid %d)", root, files.sock, os.getpid())
        while not stopping.wait(0.5):
            if idle_minutes is not None and daemon.idle_seconds() > idle_minutes * 60:
                log.info("idle for %.0f minutes: stopping", idle_minutes)
                break
        log.info("shutting down")
    finally:
        if web is not None:
            web.close()
        if server is not None:
            server.close()
        if daemon is not None:
            daemon.stop()
        _remove(files.sock, files.pid)
        registry.unregister(files.lock.parent)
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
def _start_lock(path: Path, timeout: float) -> Iterator[None]:
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
        yield
    finally:
        os.close(fd)


def _log_tail(path: Path, lines: int = 3) -> str:
    try:
        tail = path.read_text(errors="replace").strip().splitlines()[-lines:]
    except OSError:
        return ""
    return ("; last log lines: " + " | ".join(tail)) if tail else ""


def wait_ready(files: DaemonFiles, deadline: float, process: subprocess.Popen | None = None) -> dict | None:
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise DaemonLifecycleError(f"the daemon exited with code {process.returncode}"
                                       f"{_log_tail(files.log)} (log: {files.log})")
        if files.sock.exists():
            with contextlib.suppress(OSError, ValueError, DaemonError):
                health = call(files.sock, "health", timeout=5)
                if health.get("ready"):
                    return health
        time.sleep(0.1)
    return None


def start_detached(root: Path, index_dir: str | None, wait_seconds: float = 600, force_polling: bool = False,
                   http: str | None = None, http_token: str | None = None, idle_minutes: float | None = None,
                   wait: bool = True) -> dict:
    """Start a background daemon and return its health once it is ready; a daemon already
    running (or starting) is waited for instead. A start that fails leaves nothing behind.
    The HTTP token travels in the child's environment, never on its command line.
    `idle_minutes`: the daemon stops itself after that long idle (auto-started daemons).
    `wait=False` returns as soon as the process is started (`{"pid", "starting": True}`)."""
    root = root.resolve()
    files = DaemonFiles.of(root, index_dir)
    ensure_index_dir(files.lock.parent)
    deadline = time.monotonic() + wait_seconds
    with _start_lock(files.start_lock, wait_seconds):
        running = running_daemon(root, index_dir)
        if running and not wait:
            return {**running, "already_running": True}
        if running:
            health = wait_ready(files, deadline)
            if health is None:
                raise DaemonLifecycleError(f"the running daemon did not become ready in {wait_seconds:.0f}s")
            return {**health, "already_running": True}
        command = [sys.executable, "-m", "codesearch.daemon.lifecycle", "run", str(root)]
        if index_dir:
            command += ["--index-dir", str(index_dir)]
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
        with open(files.log, "ab") as out:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                       start_new_session=True, close_fds=True, env=env)
        if not wait:
            return {"pid": process.pid, "ready": False, "starting": True}
        health = wait_ready(files, deadline, process)
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
    """Ask the daemon to shut down and wait until its lock is free; False when none was running.
    Only a process that is this root's daemon is ever signalled."""
    root = root.resolve()
    health = running_daemon(root, index_dir)
    if not health:
        return False
    files = DaemonFiles.of(root, index_dir)
    pid = health.get("pid")
    try:
        call(files.sock, "shutdown", timeout=5)
    except (OSError, ValueError, DaemonError):
        if pid and is_daemon_of(pid, root):
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
          idle_minutes: float | None = None) -> None:
    """Run the daemon in this process and end the process with it (see `_exit`)."""
    from ..transports.http import HttpConfigError
    configure_logging()
    try:
        code = run_foreground(root, index_dir, force_polling, http, idle_minutes)
    except HttpConfigError as exc:
        log.error("the daemon cannot start: %s", exc)
        code = 2
    except Exception:  # one line in the log says why a daemon could not run
        log.exception("the daemon stopped on an error")
        code = 1
    _exit(code)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="codesearch-daemon")
    parser.add_argument("action", choices=("run",))
    parser.add_argument("path", nargs="?", default=".")
    parser.add_argument("--index-dir")
    parser.add_argument("--polling", action="store_true")
    parser.add_argument("--http")
    parser.add_argument("--idle-minutes", type=float)
    args = parser.parse_args(argv)
    serve(Path(args.path), args.index_dir, args.polling, args.http, args.idle_minutes)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
