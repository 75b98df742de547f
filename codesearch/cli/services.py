"""Which service answers a command: the daemon serving the repository (or the workspace), one
started on demand, or this process (the index opened here, kept for the command's other queries).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..locations import command_root
from .parser import CommandError, UsageError
from .quick import BUSY_ADVICE, NO_ANSWER

if TYPE_CHECKING:
    from ..api.protocol import Service
    from ..api.workspace_service import WorkspaceService
    from ..config import Settings
    from ..daemon.client import DaemonClient
    from ..indexing.index import Index
    from ..search.requests import SearchAnswer, SearchRequest
    from ..workspace import RepoSpec, Workspace

AUTO_START_WAIT_SECONDS = 30.0  # a query waits this long for the daemon it starts over an existing index


def settings_for(root: Path, args: argparse.Namespace):
    from ..config import ConfigError, load_settings
    try:
        return load_settings(root, overrides=getattr(args, "overrides", None))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def check_settings(args: argparse.Namespace, workspace: Workspace | None, root: Path) -> None:
    """The settings of the repositories a daemon will serve (the workspace's, else root's), read
    now: a bad one is told here in a line (exit 2), not in the daemon's log after it failed."""
    for served in [r.root for r in workspace.repos] if workspace is not None else [root]:
        settings_for(served, args)


def root_of(args: argparse.Namespace) -> Path:
    """The repository a command works on: `index PATH` and `daemon ... PATH`, else --repo."""
    attr = "path" if args.command in ("index", "daemon", "mcp", "doctor") else "repo"
    given = getattr(args, attr, None)
    if isinstance(given, list):  # --repo may be given more than once (a workspace), daemon PATH too
        given = given[0] if given else None
    root = Path(command_root(given, getattr(args, "index_dir", None)))
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder" if root.exists() else f"{root} does not exist")
    return root


def workspace_of(args: argparse.Namespace) -> Workspace | None:
    """The workspace the command covers (--workspace FILE, or --repo given more than once), or
    None for one repository. Parsed once per command."""
    if not hasattr(args, "_workspace"):
        args._workspace = None
        from ..workspace import WorkspaceError, load_workspace, workspace_of_paths
        file = getattr(args, "workspace", None)
        repos = getattr(args, "path" if args.command in ("daemon", "mcp") else "repo", None)
        try:
            if file and isinstance(repos, list) and repos:
                raise UsageError("give --workspace FILE or the repositories' paths, not both")
            if file:
                args._workspace = load_workspace(file)
            elif isinstance(repos, list) and len(repos) > 1:
                args._workspace = workspace_of_paths(repos)
        except WorkspaceError as exc:
            raise UsageError(str(exc)) from None
        if args._workspace is not None and getattr(args, "index_dir", None):
            raise UsageError("--index-dir names one index; in a workspace each repository keeps its own")
    return args._workspace


def open_index(args: argparse.Namespace, create: bool = False) -> Index:
    from ..indexing.index import Index, IndexMissing
    root = root_of(args)
    try:
        return Index(root, settings_for(root, args), args.index_dir, create=create)
    except IndexMissing as exc:
        raise CommandError(str(exc)) from None


def daemon_of(args: argparse.Namespace) -> DaemonClient | None:
    """The daemon serving the repository (or the workspace), unless --no-daemon."""
    from ..daemon.client import connect, connect_workspace
    if getattr(args, "no_daemon", False):
        return None
    workspace = workspace_of(args)
    if workspace is not None:
        return connect_workspace(workspace)
    return connect(root_of(args), args.index_dir)


def served_label(args: argparse.Namespace) -> str:
    workspace = workspace_of(args)
    return f"the workspace of {', '.join(r.name for r in workspace.repos)}" if workspace else str(root_of(args))


def answer_with(args: argparse.Namespace, ask: Callable[[Service], Any]) -> Any:
    """`ask` the daemon when one serves the repository, else this process (the same API).

    A daemon that is busy, or too slow, is an error that says so; one that is gone (a socket
    nobody listens on) is answered here, with a note."""
    from ..api.protocol import ServiceUnavailable
    from ..daemon.client import DaemonBusy, DaemonError
    from ..wire import RequestError
    client = daemon_of(args)
    if client is None and workspace_of(args) is None and root_of(args) not in _LOCAL:
        client = on_demand(args)  # one repository: index it or start its daemon (a workspace's members are not)
    try:
        if client is not None:
            try:
                return ask(client)
            except DaemonBusy as exc:
                raise CommandError(f"{exc}; {BUSY_ADVICE}") from None
            except TimeoutError:
                raise CommandError(NO_ANSWER) from None
            except BrokenPipeError:
                raise  # our reader went away (the daemon wrote into our stdout): not the daemon's doing
            except OSError as exc:
                print(f"codesearch: no daemon answered for {served_label(args)} ({exc.strerror or exc}); "
                      "answering in this process", file=sys.stderr)
        return ask(local_service(args))
    except RequestError as exc:
        raise UsageError(str(exc)) from None
    except ServiceUnavailable as exc:  # its message says what is missing (a workspace: each member's reason)
        raise CommandError(str(exc)) from None
    except DaemonError as exc:
        # the socket's words for a refused request ("invalid params: ...") are not the command line's
        raise (UsageError if exc.bad_request else CommandError)(str(exc).removeprefix("invalid params: ")) from None


_LOCAL: dict[Path, Service] = {}


def close_local_services() -> None:
    """Close the services this command opened in process. An index's background probe of the
    vector store may be loading the model in native code: closing waits for it, where the end of
    the process tore the thread down inside that code and aborted after the answer was printed
    ("FATAL: exception not rethrown", exit -6)."""
    while _LOCAL:
        _, service = _LOCAL.popitem()
        close = getattr(service, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):  # the answer is out: nothing left to report
                close()


def on_demand(args: argparse.Namespace) -> DaemonClient | None:
    """No daemon serves the repository. With `auto_daemon` (the default), one is started: over
    an existing index this command waits for it and asks it. In a repository without an index a
    query is answered at once from ripgrep (FirstAnswers), and the daemon builds the index; any
    other command (and `query --batch`, a script that wants the index's answers) gets the keyword
    index and graph here first, the daemon then embeds. Without (--no-daemon, `auto_daemon =
    false`), a missing index is built here whole, vectors included, and nothing is left running."""
    from ..daemon import autostart
    root = root_of(args)
    settings = settings_for(root, args)
    auto = autostart.may_start(settings, refused=getattr(args, "no_daemon", False))
    if not autostart.has_index(root, args.index_dir):
        refuse_whole_folder(root)
        if auto and args.command == "query" and not args.batch:
            with os.scandir(root):  # an unreadable root is told in a line here, not answered with nothing
                pass
            print(f"codesearch: {root} has no index yet; answering from ripgrep now, while a daemon builds it",
                  file=sys.stderr)
            _LOCAL[root] = cast("Service", FirstAnswers(root, args.index_dir, settings))
        else:
            first_index(args, root, settings, auto)
        return None
    if not auto:
        return None
    from ..daemon.client import DaemonClient, socket_path
    from ..daemon.lifecycle import DaemonLifecycleError
    try:
        health = autostart.start(root, args.index_dir, settings, AUTO_START_WAIT_SECONDS)
    except (DaemonLifecycleError, OSError) as exc:
        print(f"codesearch: no daemon could start for {root} ({exc}); answering in this process", file=sys.stderr)
        return None
    if health is None:
        print(f"codesearch: the daemon for {root} is still catching up with the files; answering in this process",
              file=sys.stderr)
        return None
    return DaemonClient(socket_path(root, args.index_dir))


def refuse_whole_folder(root: Path) -> None:
    if root in (Path.home().resolve(), Path(root.anchor)):
        raise CommandError(f"{root} has no index, and a whole home or root folder is not indexed unasked; "
                           "run this in a repository, or: codesearch index PATH")


class FirstAnswers:
    """The query of a repository without an index: answered at once from ripgrep over its words
    (search/early_answer.py), then a daemon is started to build the index (keyword index and graph,
    then vectors), which later queries go through. Only `query` is sent here (cli/commands.py's
    other commands build the index first): hence the one method of a Service."""

    def __init__(self, root: Path, index_dir: str | None, settings: Settings):
        self.root, self.index_dir, self.settings = root, index_dir, settings

    def search(self, request: SearchRequest) -> SearchAnswer:
        from ..paths import index_dir_for
        from ..search.early_answer import early_answer
        answer = early_answer(self.root, index_dir_for(self.root, self.index_dir), self.settings, request,
                              "no index yet")
        return replace(answer, note=f"{answer.note}; {self._start_daemon()}")

    def _start_daemon(self) -> str:
        """Started after the answer is made: its imports and parsing would share the cores with it."""
        from ..daemon import autostart
        from ..daemon.lifecycle import DaemonLifecycleError
        try:
            health = autostart.start(self.root, self.index_dir, self.settings, wait_seconds=None)
        except (DaemonLifecycleError, OSError) as exc:
            return f"no daemon could start to build the index ({exc}); run: codesearch index {self.root}"
        return f"a daemon (pid {(health or {}).get('pid')}) now builds the index, and later queries go through it"


def first_index(args: argparse.Namespace, root: Path, settings: Any, auto: bool) -> None:
    """Index a repository that has none, progress on stderr, and keep its service for the answer."""
    from ..api.local import LocalService
    from ..daemon import autostart
    from ..daemon.lifecycle import DaemonLifecycleError
    from ..indexing.events import ProgressEvent
    from ..indexing.index import Index, IndexBusy
    from ..indexing.indexer import Indexer, print_log
    from .progress import progress_sink
    what = "its keyword index and graph now; vectors follow in the background" if auto else \
        "it now, vectors included"
    print(f"codesearch: {root} has no index yet; building {what}", file=sys.stderr)
    index = Index(root, settings, args.index_dir, create=True)
    started: dict[str, str] = {}

    def start_daemon() -> None:
        """Once the files are parsed: its imports then overlap the last writes and this answer,
        not the parsing, which keeps both cores busy (scripts/bench_first_query.py, docs/benchmarks.md)."""
        if not auto or started:
            return
        try:
            health = autostart.start(root, args.index_dir, settings, wait_seconds=None) or {}
            started["note"] = (f"first answer from keyword and graph only: a daemon (pid {health.get('pid')}) now "
                               "embeds in the background, and later queries go through it")
        except (DaemonLifecycleError, OSError) as exc:
            started["note"] = (f"keyword and graph only: no daemon could start to embed ({exc}); "
                               f"run: codesearch index {root}")

    show = progress_sink()

    def on_progress(event: ProgressEvent) -> None:
        show(event)
        if event.stage == "parse" and event.phase == "end":
            start_daemon()

    try:
        report = Indexer(index, log=print_log, on_progress=on_progress).run(embed=not auto, wait_for_lock=60)
    except IndexBusy as exc:
        index.close()
        raise CommandError(str(exc)) from None
    if not report.added + report.unchanged + report.modified:
        index.close()
        if started:  # files were parsed, and none could be indexed
            from ..daemon.lifecycle import stop_daemon
            with contextlib.suppress(DaemonLifecycleError, OSError):
                stop_daemon(root, args.index_dir)
        raise CommandError(f"{root} holds no files codesearch can index")
    start_daemon()  # when nothing was parsed here (another process indexed the files meanwhile)
    _LOCAL[root] = LocalService(index, vectors_elsewhere=started.get("note"))


def local_service(args: argparse.Namespace) -> Service:
    """The service in this process (kept for the command's other queries: --batch)."""
    workspace = workspace_of(args)
    if workspace is not None:
        key = Path("workspace:" + workspace.key())
        if key not in _LOCAL:
            _LOCAL[key] = open_workspace(workspace, lambda root: settings_for(root, args),
                                         use_daemons=not getattr(args, "no_daemon", False))
        return _LOCAL[key]
    root = root_of(args)
    if root not in _LOCAL:  # imported only now: FirstAnswers needs neither
        from ..api.local import LocalService
        from ..indexing.index import IndexMissing
        service = LocalService(open_index(args))
        try:
            service.searcher  # noqa: B018 - fails early on an empty index
        except IndexMissing as exc:
            raise CommandError(str(exc)) from None
        _LOCAL[root] = service
    return _LOCAL[root]


def open_workspace(workspace: Workspace, settings_of: Callable[[Path], Settings], use_daemons: bool = True
                   ) -> WorkspaceService:
    """A workspace answered in this process: each repository through its own daemon when one
    runs, else from its index here, all with one embedding model."""
    from ..api.local import LocalService
    from ..api.workspace_service import WorkspaceService, open_members
    from ..daemon.client import connect
    from ..embedding.backends import EmbedderPool
    from ..indexing.index import Index
    pool = EmbedderPool()

    def open_one(spec: RepoSpec) -> Service:
        client = connect(spec.root, None) if use_daemons else None
        if client is not None:
            return client
        settings = settings_of(spec.root)
        return LocalService(Index(spec.root, settings, None, embedder=pool.get(settings)))

    return WorkspaceService(workspace, open_members(workspace, open_one))
