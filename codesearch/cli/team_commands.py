"""The commands that work on a team store (`--store URI`, or the `store` setting): index a
repository into it, query it, callers and callees, and serve it over HTTP."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from .color import use_color
from .parser import EXIT_OK, CommandError, UsageError
from .services import settings_for

if TYPE_CHECKING:
    from ..daemon.session import DaemonSession

TEAM_COMMANDS = frozenset({"index", "query", "callers", "callees", "impact", "daemon", "mcp"})


def store_of(args: argparse.Namespace) -> str | None:
    """The team store this command uses: --store, else the `store` setting of the repository
    (`index PATH`) or of the current folder; None: the local index."""
    if args.command not in TEAM_COMMANDS:
        return None
    given = getattr(args, "store", None)
    if given or args.command in ("daemon", "mcp"):
        return given
    from ..config import ConfigError, load_settings
    root = Path(args.path) if args.command == "index" else Path.cwd()
    try:
        return load_settings(root if root.is_dir() else None).store or None
    except ConfigError:
        return None  # told by the command's own reading of the settings


def run_team(args: argparse.Namespace, uri: str) -> int:
    from ..team.milvus_store import TeamStoreError
    from ..team.uri import StoreUriError
    try:
        from ..team.front import open_store
        store = open_store(uri)
    except StoreUriError as exc:
        raise UsageError(str(exc)) from None
    except TeamStoreError as exc:
        raise _failed(str(exc)) from None
    try:
        if args.command == "index":
            return _index(args, store)
        if args.command == "query":
            return _query(args, store)
        if args.command == "daemon":
            return _serve(args, store)
        if args.command == "mcp":
            return _mcp(args, store)
        if args.command == "impact":
            return _impact(args, store)
        return _relations(args, store)
    except TeamStoreError as exc:
        raise _failed(str(exc)) from None
    finally:
        store.close()


def _failed(message: str) -> Exception:
    return CommandError(message)


def _index(args: argparse.Namespace, store) -> int:
    from ..team.front import index_repository
    root = Path(args.path).resolve()
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder" if root.exists() else f"{root} does not exist")
    report = index_repository(store, root, settings_for(root, args), name=args.name, branch=args.branch)
    if args.json:
        print(json.dumps(report.to_dict()))
    elif not args.quiet:
        print(report.summary())
    return EXIT_OK


def _scope_filters(args: argparse.Namespace):
    from ..filters import Filters
    repos = args.repo or []
    if len(repos) > 1:
        raise UsageError("with --store, give at most one --repo NAME (omit it for every repository)")
    return Filters(language=args.lang, kind=args.kind, path_glob=args.path, repo=repos[0] if repos else None,
                   branch=args.branch)


def _service(args: argparse.Namespace, store, keyword_only: bool = False, http: str | None = None):
    from ..team.front import team_service
    return team_service(store, settings_for(Path.cwd(), args), keyword_only=keyword_only, http=http)


def _query(args: argparse.Namespace, store) -> int:
    from dataclasses import replace

    from ..search.requests import SearchRequest
    from ..wire import RequestError
    from .quick import search_params
    from .render import print_human
    if args.batch:
        raise UsageError("--batch does not take --store yet: one query per command")
    text = " ".join(args.text)
    if not text.strip():
        raise UsageError("the query is empty: codesearch query TEXT")
    try:
        request = SearchRequest.from_dict(search_params(args, text))
        request = replace(request, filters=_scope_filters(args))
    except RequestError as exc:
        raise UsageError(str(exc)) from None
    answer = _service(args, store, keyword_only=args.mode == "keyword").search(request)
    if args.json:
        print(json.dumps(answer.to_dict(), ensure_ascii=False))
        return EXIT_OK
    print_human(answer, color=use_color(args.color, sys.stdout), explain=args.explain)
    if answer.note:
        print(f"codesearch: {answer.note}", file=sys.stderr)
    return EXIT_OK


def _relations(args: argparse.Namespace, store) -> int:
    from ..search.requests import RelationsRequest
    from .relations import relation_request
    request = relation_request(RelationsRequest, args, _scope_filters(args),
                               direction="callers" if args.command == "callers" else "callees")
    answer = _service(args, store, keyword_only=True).relations(request)
    if args.json:
        print(json.dumps(answer.to_dict(), ensure_ascii=False))
        return EXIT_OK
    if answer.note:
        print(f"codesearch: {answer.note}", file=sys.stderr)
    for r in answer.results:
        print(f"{r.repo}@{r.branch}:{r.path}:{r.start_line}: {r.qualified_name} ({r.resolution}, {r.depth} hop)")
    return EXIT_OK


def _impact(args: argparse.Namespace, store) -> int:
    from ..search.requests import ImpactRequest
    from .relations import relation_request
    from .render import format_impact
    request = relation_request(ImpactRequest, args, _scope_filters(args))
    answer = _service(args, store, keyword_only=True).impact(request)
    if args.json:
        print(json.dumps(answer.to_dict(), ensure_ascii=False))
    elif answer.files:
        print(format_impact(answer, color=use_color(args.color, sys.stdout)))
    if answer.note:
        print(f"codesearch: {answer.note}", file=sys.stderr)
    return EXIT_OK


def _serve(args: argparse.Namespace, store) -> int:
    """`daemon run --store URI --http [HOST:]PORT`: the store's service over HTTP until stopped."""
    from ..daemon.http_address import TOKEN_ENV, HttpConfigError, check_exposure, parse_address
    from ..transports.http import HttpServer
    if args.action != "run" or not args.http:
        raise UsageError("with --store, the daemon is the team service: codesearch daemon run --store URI "
                         "--http [HOST:]PORT")
    token = args.http_token or os.environ.get(TOKEN_ENV)
    try:
        address = parse_address(args.http)
        check_exposure(address, token)
    except HttpConfigError as exc:
        raise UsageError(str(exc)) from None
    service = _service(args, store, http=str(address))
    try:
        server = HttpServer(address, service, token)
    except HttpConfigError as exc:  # the port taken
        raise UsageError(str(exc)) from None
    service.http = str(server.address)
    server.serve_in_thread()
    print(f"codesearch: serving the team store {store.uri} on http://{server.address}", file=sys.stderr, flush=True)
    stop = service.stopping
    try:
        _until(stop)
    finally:
        server.close()
    return EXIT_OK


def _until(stop: threading.Event) -> None:
    """Wait for a shutdown request, SIGTERM or Ctrl-C."""
    import signal
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass


class DirectSession:
    """What the MCP tools call methods through: here the team service itself (no daemon)."""

    def __init__(self, service):
        self.service = service

    def call(self, ask):
        return ask(self.service)


def _mcp(args: argparse.Namespace, store) -> int:
    """`mcp --store URI`: the MCP tools over stdio, answered by the team store."""
    import logging
    from typing import cast

    import anyio
    from mcp.server.stdio import stdio_server

    from ..transports.mcp import CodeSearchTools, build_server
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="codesearch mcp: %(message)s")
    server = build_server(CodeSearchTools(cast("DaemonSession", DirectSession(_service(args, store)))))

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
    return EXIT_OK
