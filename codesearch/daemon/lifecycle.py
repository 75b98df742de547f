"""Daemon lifecycle: run in the foreground, start detached, stop, status, stale-file cleanup."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..config import index_dir_for, load_settings
from .client import SOCKET_NAME, call

PID_NAME, LOG_NAME = "daemon.pid", "daemon.log"
log = logging.getLogger("codesearch.daemon")


class DaemonLifecycleError(RuntimeError):
    """Starting or stopping failed; the message says why."""


def _paths(root: Path, index_dir: str | None) -> tuple[Path, Path, Path]:
    folder = index_dir_for(root, index_dir)
    return folder / SOCKET_NAME, folder / PID_NAME, folder / LOG_NAME


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running_daemon(root: Path, index_dir: str | None) -> dict | None:
    """Health of the daemon serving this index, or None; removes the leftovers of a crashed one."""
    sock, pid_file, _ = _paths(root, index_dir)
    pid = None
    if pid_file.exists():
        try:
            pid = int(pid_file.read_text().strip() or 0)
        except (OSError, ValueError):
            pid = None
    if sock.exists():
        try:
            return call(sock, "health", timeout=5)
        except (OSError, ValueError):
            pass
    if pid and _alive(pid) and not sock.exists():
        return {"pid": pid, "ready": False, "starting": True}
    for stale in (sock, pid_file):  # nobody answers: a crash left these behind
        try:
            stale.unlink()
        except FileNotFoundError:
            pass
    return None


def run_foreground(root: Path, index_dir: str | None, force_polling: bool = False) -> int:
    """Serve until asked to stop (shutdown request, SIGTERM or Ctrl-C)."""
    from ..transports.socket import RpcServer
    from .service import Daemon

    root = root.resolve()
    existing = running_daemon(root, index_dir)
    if existing:
        print(f"codesearch: a daemon already serves {root} (pid {existing.get('pid')})", file=sys.stderr)
        return 0
    settings = load_settings(root)
    sock, pid_file, _ = _paths(root, index_dir)
    sock.parent.mkdir(parents=True, exist_ok=True)
    pid_file.write_text(str(os.getpid()))
    daemon = Daemon(root, settings, index_dir, force_polling=force_polling)
    server = RpcServer(sock, daemon)
    server.serve_in_thread()
    signal.signal(signal.SIGTERM, lambda *_: daemon.stopping.set())
    signal.signal(signal.SIGINT, lambda *_: daemon.stopping.set())
    try:
        daemon.start()
        log.info("ready: serving %s on %s", root, sock)
        while not daemon.stopping.wait(0.5):
            pass
    finally:
        log.info("shutting down")
        server.close()
        daemon.stop()
        try:
            if pid_file.read_text().strip() == str(os.getpid()):
                pid_file.unlink()
        except OSError:
            pass
    return 0


def start_detached(root: Path, index_dir: str | None, wait_seconds: float = 600, force_polling: bool = False) -> dict:
    """Start a background daemon and return its health once it is ready."""
    root = root.resolve()
    existing = running_daemon(root, index_dir)
    if existing:
        return {**existing, "already_running": True}
    sock, _, log_file = _paths(root, index_dir)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    (log_file.parent / ".gitignore").write_text("*\n")
    command = [sys.executable, "-m", "codesearch.daemon.lifecycle", "run", str(root)]
    if index_dir:
        command += ["--index-dir", str(index_dir)]
    if force_polling:
        command.append("--polling")
    with open(log_file, "ab") as out:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                   start_new_session=True, close_fds=True)
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise DaemonLifecycleError(f"the daemon exited with code {process.returncode}; see {log_file}")
        if sock.exists():
            try:
                health = call(sock, "health", timeout=5)
                if health.get("ready"):
                    return health
            except (OSError, ValueError):
                pass
        time.sleep(0.1)
    raise DaemonLifecycleError(f"the daemon did not become ready in {wait_seconds:.0f}s; see {log_file}")


def stop_daemon(root: Path, index_dir: str | None, wait_seconds: float = 30) -> bool:
    """Ask the daemon to shut down and wait for it; False when none was running."""
    health = running_daemon(root.resolve(), index_dir)
    if not health:
        return False
    sock, _, _ = _paths(root.resolve(), index_dir)
    pid = health.get("pid")
    try:
        call(sock, "shutdown", timeout=5)
    except (OSError, ValueError):
        if pid:
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_seconds
    while pid and _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if pid and _alive(pid):
        raise DaemonLifecycleError(f"the daemon (pid {pid}) did not stop within {wait_seconds:.0f}s")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="codesearch-daemon")
    parser.add_argument("action", choices=("run",))
    parser.add_argument("path", nargs="?", default=".")
    parser.add_argument("--index-dir")
    parser.add_argument("--polling", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    return run_foreground(Path(args.path), args.index_dir, args.polling)


if __name__ == "__main__":
    sys.exit(main())
