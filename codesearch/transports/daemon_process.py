"""A daemon's process: the daemon of a repository (or of each repository of a workspace) with its
socket server, and its HTTP server when asked, run until stopped; `daemon.lifecycle` starts this
module's `main` in a process of its own, and stops it."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..daemon import roster
from ..daemon.client import DaemonClient
from ..daemon.dormant import MODULE as DORMANT_MODULE
from ..daemon.dormant import STATE_NAME as DORMANT_STATE_NAME
from ..daemon.http_address import TOKEN_ENV, HttpConfigError, check_exposure, parse_address
from ..daemon.lifecycle import (
    DAEMON_MODULE,
    DaemonFiles,
    DaemonLock,
    StartHandoff,
    daemon_settings,
    read_pid,
    remove_files,
    stop_least_recent,
)
from ..indexing.index import ensure_index_dir
from ..paths import index_dir_for
from .http import HttpServer
from .socket import RpcServer

if TYPE_CHECKING:
    from ..api.protocol import Service
    from ..daemon.core import Daemon
    from ..embedding.backends import SharedEmbedder
    from ..workspace import Workspace

LOG_FORMAT = "%(asctime)s %(levelname)s %(message)s"
log = logging.getLogger("codesearch.daemon")
ROSTER_WRITE_SECONDS = 5.0  # the registry's last request time is rewritten at most this often
WAKE_RECONCILE_SECONDS = 30.0  # a woken daemon answers once it has reconciled, or after this long
WAKE_MODEL_SECONDS = 15.0  # and a search that woke it once its model is loaded again, or after this long


@dataclass(frozen=True)
class Handover:
    """What a dormant daemon hands the daemon it wakes: its listening socket, its daemon lock and
    the connection whose request woke it (still unread), as inherited descriptors."""

    listen_fd: int
    lock_fd: int
    conn_fd: int | None


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
        remove_files(files.sock)  # we hold the lock: any socket here is a dead daemon's
        return True

    def close(self) -> None:
        for server in reversed(self.servers):
            server.close()
        for daemon in self.daemons:
            daemon.stop()
        for files, lock in reversed(self.held):
            remove_files(files.sock, files.pid)
            lock.release()


def _root_daemon(root: Path, index_dir: str | None, force_polling: bool, stopping: threading.Event,
                 served: _Served, embedder: SharedEmbedder | None = None) -> Daemon:
    from ..daemon.core import Daemon
    daemon = Daemon(root, daemon_settings(root), index_dir, force_polling=force_polling, stopping=stopping,
                    embedder=embedder)
    served.daemons.append(daemon)
    return daemon


def run_foreground(root: Path, index_dir: str | None, force_polling: bool = False, http: str | None = None,
                   idle_minutes: float | None = None, handover: Handover | None = None) -> int:
    """Serve until asked to stop (the shutdown method, SIGTERM or Ctrl-C, at any moment), or
    until nothing was asked or done for `idle_minutes` (an auto-started daemon); after
    `daemon_dormant_minutes` quiet, sleep as a dormant process (`daemon.dormant`) that wakes it.
    `http`: [HOST:]PORT of an HTTP front-end too (its token comes from CODESEARCH_HTTP_TOKEN).
    `handover`: this daemon was woken by its dormant process."""
    root = root.resolve()
    wake = ["-m", DAEMON_MODULE, "run", str(root), *(["--index-dir", index_dir] if index_dir else []),
            *(["--polling"] if force_polling else []),
            *(["--idle-minutes", str(idle_minutes)] if idle_minutes is not None else [])]
    return _run(DaemonFiles.of(root, index_dir), str(root), http,
                lambda stopping, served: _root_daemon(root, index_dir, force_polling, stopping, served),
                idle_minutes, registered=root, wake=None if http else wake, handover=handover)


def run_workspace(workspace: Workspace, force_polling: bool = False, http: str | None = None,
                  idle_minutes: float | None = None) -> int:
    """Serve every repository of the workspace from this process: a daemon per repository (its
    watcher and writer), one embedding model for all, and the workspace's answers on its socket."""
    from ..api.types import Ok
    from ..api.workspace_service import Member, WorkspaceService
    from ..embedding.backends import EmbedderPool
    from ..embedding.worker import daemon_embedder

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
         idle_minutes: float | None = None, registered: Path | None = None, wake: list[str] | None = None,
         handover: Handover | None = None) -> int:
    """Hold the daemon lock of `files`, build the service, serve it on the socket (and HTTP)
    until stopped, or until every daemon was idle for `idle_minutes`, then close everything in
    reverse. `registered`: the repository listed in the daemon registry (`daemon list`).
    `wake`: the arguments that start this daemon again (None: it never goes dormant).
    `handover`: the socket, lock and first connection of the dormant process that woke it."""
    http_address = parse_address(http) if http else None
    if http_address:
        check_exposure(http_address, os.environ.get(TOKEN_ENV))
    ensure_index_dir(files.lock.parent)
    lock = DaemonLock(files.lock)
    acquired = lock.adopt(handover.lock_fd) if handover else lock.acquire()
    StartHandoff.locked()
    if not acquired:
        log.info("a daemon already serves %s (pid %s)", label, read_pid(files.pid))
        return 0
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    served = _Served()
    try:
        files.pid.write_text(str(os.getpid()))
        remove_files(files.lock.parent / DORMANT_STATE_NAME)
        if handover is None:
            remove_files(files.sock)  # we hold the lock: any socket here is a dead daemon's
        service = build(stopping, served)
        if http_address:  # before the socket: a client that sees the socket may ask for the address
            web = HttpServer(http_address, service, os.environ.get(TOKEN_ENV))
            for daemon in served.daemons:
                daemon.http_address = str(web.address)
            web.serve_in_thread()
            served.servers.append(web)
            log.info("serving HTTP on http://%s", web.address)
        listening = _inherited(handover.listen_fd) if handover else None
        server = RpcServer(files.sock, service, listening=listening)
        served.servers.append(server)
        if handover is None:
            server.serve_in_thread()
        for daemon in served.daemons:
            daemon.idle_stop_minutes = idle_minutes
            daemon.start()
        if handover is not None:
            _answer_woken(server, served, handover)
        entry = None
        if registered is not None:
            entry = roster.register(registered, files.lock.parent, auto=idle_minutes is not None,
                                    idle_minutes=idle_minutes)
            if entry.auto and served.daemons:
                threading.Thread(target=stop_least_recent, name="cap",
                                 args=(served.daemons[0].settings.max_auto_daemons, files.lock.parent),
                                 daemon=True).start()
        log.info("serving %s on %s (pid %d)", label, files.sock, os.getpid())
        StartHandoff.serving()
        next_write = 0.0  # when the registry's last request time may be written again
        while not stopping.wait(0.5):
            idle = min(d.idle_seconds() for d in served.daemons) if served.daemons else 0.0
            if idle_minutes is not None and served.daemons and idle > idle_minutes * 60:
                log.info("idle for %.0f minutes: stopping", idle_minutes)
                break
            if entry is not None and time.time() - idle > entry.last_request + 1 and time.monotonic() > next_write:
                entry = replace(entry, last_request=time.time() - idle)
                roster.write(entry)
                next_write = time.monotonic() + ROSTER_WRITE_SECONDS
            dormant_minutes = served.daemons[0].settings.daemon_dormant_minutes if served.daemons else 0.0
            if wake is not None and entry is not None and dormant_minutes and idle > dormant_minutes * 60 \
                    and not _go_dormant(files, lock, server, served, entry, wake, idle, idle_minutes):
                break  # the dormant process could not be started
        log.info("shutting down")
    finally:
        served.close()
        remove_files(files.sock, files.pid)
        if registered is not None:
            roster.unregister(files.lock.parent)
        lock.release()
    return 0


def _inherited(fd: int) -> socket.socket:
    """A socket handed over by descriptor number, no longer passed on to processes this one starts."""
    os.set_inheritable(fd, False)
    return socket.socket(fileno=fd)


def _answer_woken(server: RpcServer, served: _Served, handover: Handover) -> None:
    """Serve a woken daemon's socket once it has reconciled with the disk (a change made while it
    was dormant is in the first answer), beginning with the connection that woke it; a search
    that would embed its query waits for the model longer than usual (WAKE_MODEL_SECONDS), as it
    would have found it loaded had the daemon stayed awake."""
    deadline = time.monotonic() + WAKE_RECONCILE_SECONDS
    for daemon in served.daemons:
        daemon.ready.wait(max(0.0, deadline - time.monotonic()))
        daemon.embedder.wait_seconds = WAKE_MODEL_SECONDS
    conn = _inherited(handover.conn_fd) if handover.conn_fd is not None else None
    server.serve_in_thread()
    if conn is not None:
        server.process_request(conn, "")


def _go_dormant(files: DaemonFiles, lock: DaemonLock, server: RpcServer, served: _Served, entry: roster.DaemonEntry,
                wake: list[str], idle: float, idle_minutes: float | None) -> bool:
    """Give back the model, index and caches: stop accepting (connections wait in the socket's
    backlog), stop the daemons, and exec the dormant process with the socket and the lock.
    Returns only if it stays awake: True when a request came meanwhile (it serves on), False
    when the exec failed (the daemon then stops as usual)."""
    status = served.daemons[0].status().to_dict()
    server.shutdown()
    if min(d.idle_seconds() for d in served.daemons) < idle:  # a request came since it was found quiet
        server.serve_in_thread()
        return True
    for daemon in served.daemons:
        daemon.stop()
    served.daemons.clear()
    state = files.lock.parent / DORMANT_STATE_NAME
    stop_at = None if idle_minutes is None else time.time() + idle_minutes * 60 - idle
    state.write_text(json.dumps({
        "root": entry.root, "listen_fd": server.socket.fileno(), "lock_fd": lock.fd,
        "remove_at_stop": [str(files.sock), str(files.pid)], "roster_path": str(roster.entry_path(files.lock.parent)),
        "stop_at": stop_at, "status": {**status, "pending_changes": 0, "stale": False}, "started": entry.started,
        "wake": wake}))
    roster.write(replace(entry, dormant=True, last_request=time.time() - idle))
    for fd in (server.socket.fileno(), lock.fd):
        if fd is not None:
            os.set_inheritable(fd, True)
    log.info("quiet for %.1f minutes: giving back the model and caches (dormant until the next request)",
             idle / 60)
    logging.shutdown()
    try:
        os.execv(sys.executable, [sys.executable, "-m", DORMANT_MODULE, entry.root, str(state)])
    except OSError as exc:
        log.error("could not go dormant (%s): stopping instead", exc)
        remove_files(state)
        return False


def _exit(code: int) -> None:
    """End the process now: threads may still be loading the model (importing torch), and an
    interpreter shutdown beside them can abort; everything worth keeping is written already."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def configure_logging() -> None:
    """Daemon logs go to stderr (a detached daemon's stderr is its log file)."""
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)


def serve(root: Path, index_dir: str | None, force_polling: bool = False, http: str | None = None,
          workspace: Workspace | None = None, idle_minutes: float | None = None,
          handover: Handover | None = None) -> None:
    """Run the daemon (of `root`, or of `workspace` when given) in this process and end the
    process with it (see `_exit`). `handover`: woken by its dormant process."""
    configure_logging()
    DaemonLock.held_until_exit = True  # this process ends with the daemon (`_exit`)
    try:
        if workspace is not None:
            code = run_workspace(workspace, force_polling, http, idle_minutes)
        else:
            code = run_foreground(root, index_dir, force_polling, http, idle_minutes, handover)
    except HttpConfigError as exc:
        log.error("the daemon cannot start: %s", exc)
        StartHandoff.failed(str(exc))
        code = 2
    except Exception as exc:  # one line in the log (and to its starter) says why a daemon could not run
        log.exception("the daemon stopped on an error")
        folder = workspace.state_dir() if workspace is not None else index_dir_for(root.resolve(), index_dir)
        StartHandoff.failed(_reason(exc, folder))
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
    parser.add_argument("--start-lock-fd", type=int)  # from start_target: see StartHandoff
    parser.add_argument("--report-fd", type=int)
    parser.add_argument("--listen-fd", type=int)  # from a dormant daemon: see Handover
    parser.add_argument("--lock-fd", type=int)
    parser.add_argument("--conn-fd", type=int)
    args = parser.parse_args(argv)
    StartHandoff.start_lock, StartHandoff.report = args.start_lock_fd, args.report_fd
    workspace = (load_workspace(args.workspace) if args.workspace
                 else workspace_of_paths(args.paths) if len(args.paths) > 1 else None)
    handover = Handover(args.listen_fd, args.lock_fd, args.conn_fd) if args.listen_fd is not None else None
    serve(Path(args.paths[0] if args.paths else "."), args.index_dir, args.polling, args.http, workspace,
          args.idle_minutes, handover)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
