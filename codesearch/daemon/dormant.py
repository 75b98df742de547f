"""A dormant daemon: the small process an idle daemon becomes (by `exec`, keeping its pid, its
listening socket and its daemon lock) so that its model, index and caches go back to the system.

It imports nothing of codesearch beyond this module: Python alone, about 10 MB where a daemon
with chromadb and its model loaded holds 200 MB. It answers `health`, `status` and `shutdown`
itself, from what the daemon left in its state file, and on any other request execs the full
daemon again, handing it the listening socket, the lock and the connection with the request
still unread in it; the woken daemon reconciles with the disk as any daemon does at start, so a
change made while it slept is seen. It stops, as the daemon would have, once idle past the
daemon's idle stop, or when asked to (`daemon stop`, SIGTERM).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

STATE_NAME = "daemon.dormant.json"  # in the index folder: what the dormant process serves and how it wakes
MODULE = "codesearch.daemon.dormant"
FIRST_LINE_SECONDS = 5.0  # a connection that sends no complete request line in this long is closed
PEEK_BYTES = 1 << 16  # a longer first line wakes the daemon unread: only the full daemon reads big requests
ANSWERED_HERE = frozenset({"health", "status", "shutdown"})


def _log(message: str) -> None:
    """One line in the daemon's log (this process's stderr), in the daemon's own format."""
    now = time.time()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now)) + f",{int(now % 1 * 1000):03d}"
    sys.stderr.write(f"{stamp} INFO {message}\n")
    sys.stderr.flush()


class Dormant:
    """The state the daemon handed over (see `write_state` in transports.daemon_process)."""

    def __init__(self, state_path: Path):
        self.state_path = state_path
        state = json.loads(state_path.read_text())
        self.root: str = state["root"]
        self.listener = socket.socket(fileno=state["listen_fd"])
        self.lock_fd: int = state["lock_fd"]
        self.files = [Path(p) for p in state["remove_at_stop"]]
        self.roster_path = Path(state["roster_path"]) if state.get("roster_path") else None
        self.stop_at: float | None = state.get("stop_at")
        self.status: dict[str, Any] = state["status"]
        self.started: float = state["started"]
        self.wake_command: list[str] = state["wake"]
        _close_all_but(0, 1, 2, self.listener.fileno(), self.lock_fd)


    def serve(self) -> None:
        """Wait for requests until stopped; exec the daemon on the first that needs it."""
        signal.signal(signal.SIGTERM, lambda *_: self.stop("asked to stop by a signal"))
        signal.signal(signal.SIGINT, lambda *_: self.stop("asked to stop by a signal"))
        signal.signal(signal.SIGCHLD, lambda *_: _reap())
        _reap()
        _log(f"dormant (pid {os.getpid()}): model and caches given back; the next request wakes the daemon")
        while True:
            wait = None if self.stop_at is None else max(0.0, self.stop_at - time.time())
            readable, _, _ = select.select([self.listener], [], [], wait)
            if not readable:
                self.stop("idle past the idle stop: stopping")
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            self.answer(conn)

    def answer(self, conn: socket.socket) -> None:
        """Answer what can be answered here, one request line at a time; wake on anything else."""
        conn.settimeout(FIRST_LINE_SECONDS)
        try:
            while True:
                line = _peek_line(conn)
                if line is None:
                    return
                message = _parsed(line) or {}
                method = message.get("method")
                if not isinstance(method, str) or method not in ANSWERED_HERE or "into_fd" in message:
                    self.wake(conn)
                conn.recv(len(line))  # the line is answered here: take it off the connection
                result = self.result(method)
                if "id" in message:
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
                    conn.sendall(json.dumps(reply).encode() + b"\n")
                if method == "shutdown":
                    conn.close()
                    self.stop("asked to shut down")
        except OSError:
            return
        finally:
            conn.close()

    def result(self, method: str) -> dict[str, Any]:
        if method == "health":
            return {"ok": True, "pid": os.getpid(), "ready": True, "root": self.root, "dormant": True}
        if method == "status":
            return {**self.status, "uptime_seconds": round(time.time() - self.started, 1), "model_ready": False,
                    "dormant": True}
        return {"ok": True}

    def wake(self, conn: socket.socket) -> NoReturn:
        """Become the full daemon again, handing it the socket, the lock and this connection."""
        _log("a request came: waking the daemon")
        for fd in (self.listener.fileno(), self.lock_fd, conn.fileno()):
            os.set_inheritable(fd, True)
        handover = ["--listen-fd", str(self.listener.fileno()), "--lock-fd", str(self.lock_fd),
                    "--conn-fd", str(conn.fileno())]
        os.execv(sys.executable, [sys.executable, *self.wake_command, *handover])

    def stop(self, reason: str) -> NoReturn:
        """End as a daemon ends: its files and registry entry removed, the lock released by the
        kernel as the process exits."""
        _log(reason)
        for path in (*self.files, self.state_path):
            with contextlib.suppress(OSError):
                path.unlink()
        if self.roster_path is not None:
            with contextlib.suppress(OSError, ValueError):
                if json.loads(self.roster_path.read_text()).get("pid") == os.getpid():
                    self.roster_path.unlink()
        sys.stderr.flush()
        os._exit(0)


def _reap() -> None:
    """Collect the daemon's children that ended (its embedding process): they are this process's now."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def _close_all_but(*kept: int) -> None:
    """Close what the daemon's libraries left open without close-on-exec (the vector store's
    files): the dormant process holds nothing else, and the daemon it wakes opens them again."""
    try:
        open_fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return
    for fd in open_fds:
        if fd not in kept:
            with contextlib.suppress(OSError):
                os.close(fd)


def _peek_line(conn: socket.socket) -> bytes | None:
    """The first request line waiting on the connection, left unread (None: closed, or silent too
    long: FIRST_LINE_SECONDS, or the connection's own timeout); a line longer than PEEK_BYTES
    comes back cut, without its newline."""
    deadline = time.monotonic() + FIRST_LINE_SECONDS
    while True:
        try:
            data = conn.recv(PEEK_BYTES, socket.MSG_PEEK)
        except TimeoutError:
            return None
        if not data:
            return None
        end = data.find(b"\n")
        if end >= 0:
            return data[:end + 1]
        if len(data) >= PEEK_BYTES:
            return data
        if time.monotonic() > deadline:
            return None
        time.sleep(0.01)


def _parsed(line: bytes) -> dict[str, Any] | None:
    """The request as a JSON object, or None for anything else (the full daemon says what is wrong)."""
    if not line.endswith(b"\n"):
        return None
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def main(argv: list[str]) -> None:
    """`ROOT STATE_FILE`: the root names the repository on the command line (a process is signalled
    only if its command line is a codesearch daemon of that root)."""
    Dormant(Path(argv[1])).serve()


if __name__ == "__main__":
    main(sys.argv[1:])
