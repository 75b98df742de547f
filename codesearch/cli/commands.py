"""Command-line interface: each command's work, by calling the API, and its output."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..text import for_terminal, text_problem
from .color import use_color
from .graph_export import cmd_graph
from .parser import (
    COMMAND_OF_ALIAS,
    EXIT_ERROR,
    EXIT_NO_MATCH,
    EXIT_OK,
    EXIT_USAGE,
    BadArguments,
    CommandError,
    UsageError,
    build_parser,
    report_error,
    usage_error_line,
)
from .quick import grep_exit_code, grep_json_head, grep_params, search_params, stdout_fd
from .relations import cmd_impact, cmd_relations
from .scoping import note_unmatched_path, scope_filters
from .services import (
    answer_with,
    check_settings,
    close_local_services,
    daemon_of,
    local_service,
    open_index,
    root_of,
    settings_for,
    workspace_of,
)
from .team_commands import run_team, store_of

if TYPE_CHECKING:
    from ..api.protocol import Service
    from ..api.types import GrepRequest, IndexAnswer, SearchAnswer, SearchRequest
    from ..daemon.client import DaemonClient
    from ..wire import Record



def cmd_chunks(args: argparse.Namespace) -> int:
    from ..ingest.extract import SkipFile, extract, read_source
    from ..ingest.languages import language_for_path
    from ..paths import escape_name

    settings = settings_for(Path.cwd(), args)
    out: list[dict] = []
    failures = 0
    for name in args.files:
        path = Path(name)
        problem = _not_a_file(path)
        if problem:
            print(f"codesearch: {for_terminal(name)}: {problem}", file=sys.stderr)
            failures += 1
            continue
        rel = escape_name(path.as_posix())  # as the index would store it: any name prints as text
        language = language_for_path(rel) or "text"
        try:
            result = extract(rel, read_source(path, settings, language), language, settings)
        except SkipFile as exc:
            print(f"codesearch: {for_terminal(name)}: skipped ({exc.reason}: {exc})", file=sys.stderr)
            failures += 1
            continue
        for chunk in result.chunks:
            item = chunk.to_json(with_text=args.text)
            item["size"] = chunk.size
            out.append(item)
    if args.json:
        print(json.dumps({"chunks": out}, ensure_ascii=False))
    else:
        for c in out:
            parent = c["parent_id"] or "-"
            print(f"{for_terminal(c['path'])}:{c['start_line']}-{c['end_line']}  {c['kind']:<9} "
                  f"{for_terminal(c['qualified_name'])}  [id {c['id']} parent {parent} size {c['size']}]")
            for line in c["header"].splitlines():  # it names the file
                print(f"    | {for_terminal(line)}")
    return EXIT_ERROR if failures and not out else EXIT_OK


def _not_a_file(path: Path) -> str | None:
    """Why `chunks` cannot read `path`, asked without opening it (a FIFO would block the open)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return exc.strerror or str(exc)
    return None if stat.S_ISREG(mode) else "not a regular file"


def cmd_index(args: argparse.Namespace) -> int:
    from ..api.types import IndexRequest
    if args.scip:  # an absolute path (parser.existing_file), as the `scip` setting
        args.overrides["scip"] = args.scip
    client = _index_owner(args)
    if args.rebuild:
        answer = _rebuild(args)
    elif client is not None:  # a running daemon owns the index: ask it, rather than write beside it
        try:
            answer = client.index(IndexRequest(timeout=3600, verify=args.verify))
        except OSError as exc:
            from ..daemon.lifecycle import running_daemon
            if running_daemon(root_of(args), args.index_dir):  # alive, not answering: not written beside it
                raise CommandError(f"the codesearch daemon of {root_of(args)} did not answer ({exc}); "
                                   "try again, or stop it first") from None
            answer = _index_here(args)
    else:
        answer = _index_here(args)
    if args.json:
        print(json.dumps(answer.to_dict()))
    elif not args.quiet:
        print(_index_summary(answer))
    return EXIT_OK if answer.ok else EXIT_ERROR


def _index_owner(args: argparse.Namespace) -> DaemonClient | None:
    """The daemon serving the repository, which alone writes its index: `index` is handed to it
    (once it serves, if it is starting). `--rebuild` (which replaces the files under it) and
    `--no-daemon` are refused while one runs, naming it: two writers lost the daemon's saves."""
    from ..daemon.client import NO_DAEMON_ENV, DaemonClient
    from ..daemon.lifecycle import DaemonFiles, running_at, wait_ready
    root = root_of(args)
    files = DaemonFiles.of(root, args.index_dir)
    health = running_at(files)
    if health is None:
        return None
    pid = health.get("pid")
    if args.rebuild or args.scip:  # the daemon reads its own SCIP index (the scip setting, or index.scip)
        raise CommandError(f"a codesearch daemon (pid {pid}) serves {root} and alone writes its index; stop it "
                           f"first (codesearch daemon stop {root}), then {'rebuild' if args.rebuild else 'index'}")
    if args.no_daemon or os.environ.get(NO_DAEMON_ENV):
        raise CommandError(f"a codesearch daemon (pid {pid}) serves {root} and alone writes its index; run "
                           f"codesearch index {root} without --no-daemon to have it reindex, or stop it first")
    if health.get("starting") and not wait_ready(files, time.monotonic() + args.wait):
        raise CommandError(f"the codesearch daemon (pid {pid}) of {root} is still starting; "
                           f"try again once it serves (codesearch daemon status {root})")
    return DaemonClient(files.sock)


def _index_here(args: argparse.Namespace) -> IndexAnswer:
    from ..api.local import index_answer
    from ..indexing.index import IndexBusy
    from ..indexing.indexer import Indexer, print_log
    from ..store.space import OutOfSpace
    from .progress import progress_sink
    index = open_index(args, create=True)
    try:
        indexer = Indexer(index, log=print_log if not args.quiet else None,
                          on_progress=progress_sink(json_events=args.progress_json, quiet=args.quiet))
        report = indexer.run(embed=not args.no_vectors, wait_for_lock=args.wait, verify=args.verify)
    except IndexBusy as exc:  # a damaged catalog goes on to main(), which names the fix
        raise CommandError(str(exc)) from None
    except OutOfSpace as exc:
        raise CommandError(f"{exc}; queries answer from the index as it is: free some space, "
                           "then run codesearch index again") from None
    finally:
        index.close()
    return index_answer(report)


def _rebuild(args: argparse.Namespace) -> IndexAnswer:
    from ..api.local import index_answer
    from ..indexing.index import IndexBusy
    from ..indexing.indexer import print_log
    from ..indexing.rebuild import rebuild_index
    root = root_of(args)
    try:
        report = rebuild_index(root, settings_for(root, args), args.index_dir, embed=not args.no_vectors,
                               log=print_log if not args.quiet else None)
    except IndexBusy as exc:
        raise CommandError(str(exc)) from None
    return index_answer(report)


def _index_summary(answer: IndexAnswer) -> str:
    from ..indexing.indexer import summary_of
    lines = [summary_of(answer)]
    if answer.rebuilt:
        lines.append(f"rebuilt: {answer.rebuilt}")
    if answer.vectors_repaired:
        lines.append(f"the vector store was rebuilt from the catalog: {answer.vectors_repaired}")
    if answer.verified:
        lines.append("verified: the catalog is sound and the vector store holds exactly its vectors"
                     + (f" ({answer.vectors_reconciled} put right)" if answer.vectors_reconciled else ""))
    if answer.note:
        lines.append(answer.note)
    if not answer.ok:
        lines.append("the index is not up to date")
    return "\n".join(lines)


def cmd_stats(args: argparse.Namespace) -> int:
    """Through the daemon when one runs (it owns the vector store), else from the files."""
    from ..api.stats import collect_stats
    from .render import format_stats
    client = daemon_of(args)
    stats = None
    if client is not None:
        with contextlib.suppress(OSError):
            stats = client.stats()
    if stats is None:
        index = open_index(args)
        try:
            stats = collect_stats(index, count_vectors=not args.fast)
        finally:
            index.close()
    print(json.dumps(stats.to_dict()) if args.json else format_stats(stats))
    return EXIT_OK


def cmd_query(args: argparse.Namespace) -> int:
    from ..search.requests import SearchRequest
    from ..wire import RequestError
    from .render import print_human, print_vimgrep
    if args.batch:
        if not args.repo and workspace_of(args) is None:
            raise UsageError("--batch needs --repo PATH (or --workspace FILE)")
        # a line that is not UTF-8 is answered as a bad line, like an empty one, not the whole file refused
        queries = Path(args.batch).read_text(encoding="utf-8", errors="surrogateescape").splitlines()
    else:
        if not args.text or not " ".join(args.text).strip():
            raise UsageError("the query is empty: codesearch query TEXT")
        queries = [" ".join(args.text)]
    scope_filters(args)  # validated before anything is opened
    for text in queries:
        problem = _bad_batch_line(text) if args.batch else None
        if problem:
            shown = text.encode("utf-8", "backslashreplace").decode("utf-8")
            print(json.dumps({"query": shown, "results": [], "timing_ms": {"total": 0.0}, "error": problem}))
            continue
        try:
            request = SearchRequest.from_dict(search_params(args, text))
        except RequestError as exc:
            raise UsageError(str(exc)) from None
        if args.json or args.batch:  # a daemon's answer passed on as it wrote it
            print(answer_with(args, partial(_answer_json, method="search", request=request, ask=_search)), flush=True)
            continue
        answer = answer_with(args, partial(_search, request=request))
        if args.vimgrep:
            print_vimgrep(answer)
        else:
            print_human(answer, color=use_color(args.color, sys.stdout), explain=args.explain)
        if answer.note:
            print(f"codesearch: {answer.note}", file=sys.stderr)
        elif not answer.results and workspace_of(args) is not None:  # one repository's service says it itself
            note_unmatched_path(args)
    return EXIT_OK


def _bad_batch_line(text: str) -> str | None:
    """Why a line of a --batch file gets an error object instead of an answer, or None."""
    if not text.strip():
        return "empty query"
    problem = text_problem(text)
    return f"the query {problem}" if problem else None


def _search(service: Service, request: SearchRequest) -> SearchAnswer:
    return service.search(request)


def cmd_grep(args: argparse.Namespace) -> int:
    """Exit codes as grep's: 0 something matched, 1 nothing did, 2 an error."""
    from ..search.requests import GrepRequest
    from ..wire import RequestError
    from .grep_text import write_grep_answer
    try:
        request = GrepRequest.from_dict(grep_params(args))
    except RequestError as exc:
        raise UsageError(str(exc)) from None
    try:
        if args.json:  # the answer's JSON as the service wrote it (a daemon's passed on as it comes)
            head = grep_json_head(request.pattern)
            sys.stdout.flush()
            start = answer_with(args, lambda service: _write_grep_json(service, request, len(head) + 1))
            sys.stdout.buffer.write(b"\n")
            return grep_exit_code(start, head)
        answer = answer_with(args, lambda service: _grep_dict(service, request))
    except CommandError as exc:  # grep's errors exit 2, whatever their kind
        raise UsageError(str(exc)) from None
    write_grep_answer(answer, args)
    if answer["total"]:
        return EXIT_OK
    note_unmatched_path(args)
    return EXIT_NO_MATCH


def _grep_dict(service: Service, request: GrepRequest) -> dict:
    """The grep answer in its JSON form, read from the JSON the service writes: no records for
    text output (10,000 matches of a common word)."""
    return json.loads(b"".join(service.grep_json(request)))


def _write_grep_json(service: Service, request: GrepRequest, head: int) -> bytes:
    """The grep answer's JSON on stdout, piece by piece as it comes (a 30-MB answer is never held
    whole): a daemon's as its reply arrives, this process's as its blocks are made. Returns its
    first `head` bytes."""
    from ..daemon.client import DaemonClient
    if isinstance(service, DaemonClient):
        return service.grep_json_into(request.to_dict(), sys.stdout.buffer, head, stdout_fd())
    start = b""
    for block in service.grep_json(request):
        if len(start) < head:
            start += block[:head - len(start)]
        sys.stdout.buffer.write(block)
    return start


def _answer_json(service: Service, method: str, request: Record, ask: Callable[[Service, Any], Record]) -> str:
    """The JSON text of `ask(service, request)`: a daemon's passed on as it came, this process's written."""
    from ..daemon.client import DaemonClient
    if isinstance(service, DaemonClient):
        return service.call_json(method, request.to_dict()).decode("utf-8")
    return json.dumps(ask(service, request).to_dict(), ensure_ascii=False)


def cmd_eval(args: argparse.Namespace) -> int:
    from ..eval.runner import METRICS, evaluate, load_queries
    from ..search.requests import SearchRequest
    try:
        queries = load_queries(Path(args.queries))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {args.queries}: {exc}") from None
    report = evaluate(local_service(args), queries,
                      lambda text: SearchRequest(query=text, mode=args.mode, limit=args.limit, files=args.files))
    if args.json:
        print(json.dumps(report))
        return EXIT_OK
    header = f"{'':<14}" + "".join(f"{m:>11}" for m in METRICS) + f"{'queries':>9}"
    print(header)
    rows = [("overall", report["overall"])] + list(report["categories"].items())
    for name, values in rows:
        print(f"{name:<14}" + "".join(f"{values[m]:>11.3f}" for m in METRICS) + f"{values['queries']:>9}")
    return EXIT_OK


def cmd_daemon(args: argparse.Namespace) -> int:
    from ..daemon import lifecycle
    from ..daemon.client import DaemonClient
    from ..daemon.http_address import TOKEN_ENV, HttpConfigError, check_exposure, parse_address
    from .render import format_daemons, format_status
    if args.action == "list":
        running = [asdict(entry) for entry in lifecycle.list_daemons()]
        print(json.dumps({"daemons": running}) if args.json else format_daemons(running))
        return EXIT_OK
    workspace = workspace_of(args)
    root = root_of(args) if workspace is None else Path.cwd()
    target = (lifecycle.DaemonTarget.workspace(workspace) if workspace is not None
              else lifecycle.DaemonTarget.repository(root, args.index_dir))
    served = target.label
    if args.action in ("start", "run"):
        check_settings(args, workspace, root)
    idle_minutes = lifecycle.idle_stop_minutes(args.idle_stop, root)
    token = args.http_token or os.environ.get(TOKEN_ENV)
    try:
        if args.http:
            check_exposure(parse_address(args.http), token)
    except HttpConfigError as exc:
        raise UsageError(str(exc)) from None
    try:
        if args.action == "run":
            from ..transports.daemon_process import serve
            if token:
                os.environ[TOKEN_ENV] = token
            serve(root, args.index_dir, args.polling, args.http, workspace, idle_minutes)  # ends the process
        if args.action == "start":
            health = lifecycle.start_target(target, args.timeout, args.polling, args.http, token, idle_minutes)
            already = bool(health.get("already_running"))
            if already and args.http and not health.get("http"):
                raise CommandError(f"a daemon already serves {served} without HTTP; "
                                   "stop it first (codesearch daemon stop) to start one with --http")
            if args.json:
                print(json.dumps({"started": not already, "already_running": already, "pid": health.get("pid"),
                                  "root": health.get("root", str(root)),
                                  **({"http": health["http"]} if health.get("http") else {})}))
            else:
                http = f", HTTP on http://{health['http']}" if health.get("http") else ""
                print(f"codesearch daemon {'already running' if already else 'started'} for {served} "
                      f"(pid {health.get('pid')}{http})")
            return EXIT_OK
        if args.action == "stop":
            stopped = lifecycle.stop_target(target)
            if args.json:
                print(json.dumps({"stopped": stopped, "root": str(root) if workspace is None else served}))
            else:
                print("codesearch daemon stopped" if stopped else f"no codesearch daemon serves {served}")
            return EXIT_OK
        if not lifecycle.running_at(target.files):
            if args.json:
                print(json.dumps({"running": False}))  # the others: `daemon list --json`
            else:
                others = [asdict(entry) for entry in lifecycle.list_daemons()]
                listed = f"; running:\n{format_daemons(others)}" if others else ""
                print(f"no codesearch daemon serves {served}{listed}")
            return EXIT_OK
        status = DaemonClient(target.files.sock).status()
        print(json.dumps({"running": True, **status.to_dict()}) if args.json else format_status(status))
        return EXIT_OK
    except lifecycle.DaemonLifecycleError as exc:
        raise CommandError(str(exc)) from None


def cmd_merge(args: argparse.Namespace) -> int:
    """Ranked lists on stdin, one fused list out (DESIGN: `merge`); any bad input exits 2."""
    from ..search.merge import MergeInputError, merge, parse_boosts, read_lists
    try:
        k, limit = _number(args.k, "--k", float), _number(args.limit, "--limit", int)
        boosts = parse_boosts(args.boost_sources)
        answer = merge(read_lists(sys.stdin.read()), boosts, k=k, limit=limit)
    except MergeInputError as exc:
        raise UsageError(str(exc)) from None
    print(json.dumps(answer, ensure_ascii=False))
    return EXIT_OK


def _number(text: str | None, flag: str, kind: Callable[[str], Any]) -> Any:
    """A flag's number, or one clear line (argparse's own error is two: usage and message)."""
    if text is None:
        return None
    try:
        return kind(text)
    except ValueError:
        raise UsageError(f"{flag} takes a number, not {text!r}") from None


def cmd_doctor(args: argparse.Namespace) -> int:
    """Exit 0 when healthy (notes are advice), 1 when a check needs action."""
    from ..doctor import diagnose
    from .render import format_doctor
    root = root_of(args)
    report = diagnose(root, settings_for(root, args), args.index_dir, load_model=not args.fast)
    print(json.dumps(report.to_dict()) if args.json else format_doctor(report, color=sys.stdout.isatty()))
    return EXIT_OK if report.healthy else EXIT_ERROR


def cmd_completion(args: argparse.Namespace) -> int:
    from .completion import script
    sys.stdout.write(script(build_parser(), args.shell))
    return EXIT_OK


def cmd_lsp(args: argparse.Namespace) -> int:
    from ..transports.lsp import serve_stdio
    return serve_stdio(start=not args.no_start, index_dir=args.index_dir)


def cmd_mcp(args: argparse.Namespace) -> int:
    from ..transports.mcp import serve_stdio
    workspace = workspace_of(args)
    root = root_of(args) if workspace is None else Path.cwd()
    check_settings(args, workspace, root)
    return serve_stdio(root, args.index_dir, start=not args.no_start, workspace=workspace)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(only=argv[0] if argv and argv[0] in HANDLERS else None)
    try:
        args = parser.parse_args(argv)
    except BadArguments as exc:
        report_error(usage_error_line(parser, argv, str(exc)), EXIT_USAGE, as_json="--json" in argv)
        return EXIT_USAGE
    if not args.command:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    args.command = COMMAND_OF_ALIAS.get(args.command, args.command)
    try:
        code, message = _run(args)
    finally:
        close_local_services()
    if args.command == "grep" and message is not None:
        code = EXIT_USAGE  # grep's errors exit 2, whatever their kind (README)
    if message is not None:
        report_error(message, code, as_json=getattr(args, "json", False))
    return code


def _run(args: argparse.Namespace) -> tuple[int, str | None]:
    """The command's exit code, and the one sentence that explains a failure."""
    handler = HANDLERS[args.command]
    store = store_of(args)
    if store:  # a team store: codesearch/team
        handler = partial(run_team, uri=store)
    args.overrides = {"model": getattr(args, "model", None), "chroma_url": getattr(args, "chroma_url", None),
                      "device": getattr(args, "device", None)}
    try:
        return handler(args), None
    except UsageError as exc:
        return EXIT_USAGE, str(exc)
    except BrokenPipeError:
        raise  # the reader went away (`| head`): the command line ends quietly
    except (CommandError, OSError) as exc:
        if args.debug:
            raise
        return EXIT_ERROR, _one_line(exc)
    except KeyboardInterrupt:
        return 130, "interrupted"
    except Exception as exc:  # the contract: one sentence, no traceback
        if args.debug:
            raise
        from ..embedding.base import EmbeddingError
        from ..store.catalog import CatalogDamaged, CatalogError, is_damage  # only now: the CLI starts light
        from ..store.space import OutOfSpace
        from ..store.sqlite import sqlite3  # the library the catalog raises from
        if isinstance(exc, CatalogDamaged) or is_damage(exc):
            root = getattr(args, "path", None) or getattr(args, "repo", None) or "."
            root = root[0] if isinstance(root, list) else root  # --repo and daemon PATH may repeat
            detail = str(exc) if isinstance(exc, CatalogError) else f"the index database is damaged ({exc})"
            return EXIT_ERROR, f"{detail}; rebuild it with: codesearch index --rebuild {root}"
        if isinstance(exc, (CatalogError, sqlite3.DatabaseError, EmbeddingError, OutOfSpace)):
            return EXIT_ERROR, str(exc)
        return EXIT_ERROR, f"unexpected error: {exc.__class__.__name__}: {exc} (rerun with --debug)"


def _one_line(exc: Exception) -> str:
    """An error as one sentence: a system call's names the file and says what went wrong in words
    (`/x/.codesearch.toml: permission denied`), not `[Errno 13] ...`."""
    if isinstance(exc, OSError) and exc.strerror:
        what = exc.strerror[:1].lower() + exc.strerror[1:]
        return f"{exc.filename}: {what}" if exc.filename else what
    return str(exc)


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "chunks": cmd_chunks, "index": cmd_index, "query": cmd_query, "search": cmd_query, "callers": cmd_relations,
    "callees": cmd_relations, "impact": cmd_impact, "grep": cmd_grep, "eval": cmd_eval, "daemon": cmd_daemon,
    "merge": cmd_merge, "mcp": cmd_mcp, "lsp": cmd_lsp, "stats": cmd_stats, "doctor": cmd_doctor,
    "completion": cmd_completion, "graph": cmd_graph}
