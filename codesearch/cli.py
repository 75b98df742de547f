"""Command-line interface: argument parsing and output formatting only."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Callable

from . import __version__

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad usage: exit code 2."""


class CommandError(Exception):
    """A runtime failure with a one-sentence explanation: exit code 1."""


def _settings_for(root: Path, args: argparse.Namespace):
    from .config import ConfigError, load_settings
    try:
        return load_settings(root, overrides=getattr(args, "overrides", None))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def cmd_chunks(args: argparse.Namespace) -> int:
    from .config import load_settings
    from .extract import SkipFile, extract, read_source
    from .languages import language_for_path

    settings = load_settings(Path.cwd())
    out: list[dict] = []
    failures = 0
    for name in args.files:
        path = Path(name)
        if not path.is_file():
            print(f"codesearch: {name}: no such file", file=sys.stderr)
            failures += 1
            continue
        rel = path.as_posix()
        language = language_for_path(rel) or "text"
        try:
            data = read_source(path, settings)
        except SkipFile as exc:
            print(f"codesearch: {name}: skipped ({exc.reason}: {exc})", file=sys.stderr)
            failures += 1
            continue
        result = extract(rel, data, language, settings)
        for chunk in result.chunks:
            item = chunk.to_json(with_text=args.text)
            item["size"] = chunk.size
            out.append(item)
    if args.json:
        print(json.dumps({"chunks": out}, ensure_ascii=False))
    else:
        for c in out:
            parent = c["parent_id"] or "-"
            print(f"{c['path']}:{c['start_line']}-{c['end_line']}  {c['kind']:<9} {c['qualified_name']}"
                  f"  [id {c['id']} parent {parent} size {c['size']}]")
            for line in c["header"].splitlines():
                print(f"    | {line}")
    return EXIT_ERROR if failures and not out else EXIT_OK


def _root_of(args: argparse.Namespace) -> Path:
    """The repository a command works on: `index PATH` and `daemon ... PATH`, else --repo."""
    attr = "path" if args.command in ("index", "daemon") else "repo"
    root = Path(getattr(args, attr, None) or ".").resolve()
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder")
    return root


def _open_index(args: argparse.Namespace, create: bool = False):
    from .index import Index, IndexMissing
    root = _root_of(args)
    try:
        return Index(root, _settings_for(root, args), args.index_dir, create=create)
    except IndexMissing as exc:
        raise CommandError(str(exc)) from None


def cmd_index(args: argparse.Namespace) -> int:
    from .daemon.client import daemon_call
    if not args.no_daemon and not args.verify:
        # a running daemon owns the index: ask it, rather than write beside it from here
        answer = daemon_call(_root_of(args), args.index_dir, "index", {"timeout": 3600})
        if answer is not None:
            if args.json:
                print(json.dumps(answer))
            elif not args.quiet:
                last = answer.get("last_reindex") or {}
                print(f"the daemon reindexed: {last.get('added', 0)} added, {last.get('modified', 0)} modified, "
                      f"{last.get('deleted', 0)} deleted in {last.get('seconds', 0):.1f}s "
                      "(vectors follow in the background)")
            return EXIT_OK
    from .index import IndexBusy
    from .indexer import Indexer, print_log
    from .store.catalog import CatalogError
    index = _open_index(args, create=True)
    try:
        indexer = Indexer(index, progress=None if not args.quiet else False,
                          log=print_log if not args.quiet else None)
        report = indexer.run(embed=not args.no_vectors, wait_for_lock=args.wait)
        if args.verify:
            removed, missing = indexer.verify_vectors()
            if missing:
                indexer.sync_vectors(report)
            print_log(f"verified vectors: {removed} stray removed, {missing} missing re-added")
    except (IndexBusy, CatalogError) as exc:
        raise CommandError(str(exc)) from None
    finally:
        index.close()
    if args.json:
        data = {k: v for k, v in report.__dict__.items() if k != "embedded_ids"}
        print(json.dumps(data))
    elif not args.quiet:
        print(report.summary())
    return EXIT_OK


def cmd_stats(args: argparse.Namespace) -> int:
    from .stats import collect_stats, format_stats
    index = _open_index(args)
    try:
        data = collect_stats(index, count_vectors=not args.fast)
    finally:
        index.close()
    print(json.dumps(data) if args.json else format_stats(data))
    return EXIT_OK


def _filters(args: argparse.Namespace):
    from .languages import known_languages
    from .search.request import Filters
    if args.lang and args.lang not in known_languages():
        raise UsageError(f"unknown language {args.lang!r}; known: {', '.join(sorted(known_languages()))}")
    if args.kind and args.kind not in KINDS:
        raise UsageError(f"unknown kind {args.kind!r}; known: {', '.join(sorted(KINDS))}")
    return Filters(language=args.lang, kind=args.kind, path_glob=args.path)


KINDS = {"file", "class", "function", "method", "struct", "interface", "trait", "enum", "module", "namespace",
         "impl", "type", "object", "record", "protocol", "extension", "union", "macro", "instance", "block",
         "section", "test"}


def _searcher(args: argparse.Namespace):
    from .search.searcher import Searcher
    index = _open_index(args)
    if index.catalog.is_empty():
        raise CommandError(f"the index of {index.root} is empty; run: codesearch index {index.root}")
    return Searcher(index)


def _request(args: argparse.Namespace, text: str):
    from .search.request import SearchRequest
    return SearchRequest(query=text, mode=args.mode, limit=args.limit, filters=_filters(args), files=args.files,
                         explain=args.explain, context=args.context)


def cmd_query(args: argparse.Namespace) -> int:
    from .output import print_human, print_vimgrep
    from .search.request import SearchError
    if args.batch:
        if not args.repo:
            raise UsageError("--batch needs --repo PATH")
        queries = Path(args.batch).read_text(encoding="utf-8").splitlines()
    else:
        if not args.text or not " ".join(args.text).strip():
            raise UsageError("the query is empty: codesearch query TEXT")
        queries = [" ".join(args.text)]
    filters = _filters(args)  # validate before opening anything
    del filters
    from .daemon.client import daemon_search
    searcher = None
    for text in queries:
        if args.batch and not text.strip():
            print(json.dumps({"query": text, "results": [], "timing_ms": {"total": 0.0}, "error": "empty query"}))
            continue
        request = _request(args, text)
        answer = None if args.no_daemon else daemon_search(_root_of(args), args.index_dir, request)
        if answer is None:
            searcher = searcher or _searcher(args)
            try:
                answer = searcher.search(request)
            except SearchError as exc:
                raise UsageError(str(exc)) from None
        if args.json or args.batch:
            print(json.dumps(answer, ensure_ascii=False), flush=True)
        elif args.vimgrep:
            print_vimgrep(answer, _root_of(args))
        else:
            print_human(answer, color=sys.stdout.isatty(), explain=args.explain)
    return EXIT_OK


def cmd_relations(args: argparse.Namespace) -> int:
    from .daemon.client import daemon_call
    direction = "callers" if args.command == "callers" else "callees"
    answer = None if args.no_daemon else daemon_call(_root_of(args), args.index_dir, direction,
                                                     {"name": args.name, "depth": args.depth})
    if answer is None:
        answer = _searcher(args).relations(args.name, direction, args.depth)
    if args.json:
        print(json.dumps(answer, ensure_ascii=False))
        return EXIT_OK
    if not answer["targets"]:
        print(f"no definition named {args.name!r} in the index", file=sys.stderr)
        return EXIT_OK
    for r in answer["results"]:
        indent = "  " * (r["depth"] - 1)
        print(f"{indent}{r['path']}:{r['start_line']}  {r['kind']} {r['qualified_name']}")
    if not answer["results"]:
        print(f"no {direction} of {args.name!r} found", file=sys.stderr)
    return EXIT_OK


def cmd_eval(args: argparse.Namespace) -> int:
    from .eval.runner import METRICS, evaluate, load_queries
    from .search.request import SearchRequest
    try:
        queries = load_queries(Path(args.queries))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {args.queries}: {exc}") from None
    searcher = _searcher(args)
    report = evaluate(searcher, queries, lambda text: SearchRequest(query=text, mode=args.mode, limit=args.limit,
                                                                    files=args.files))
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
    from .daemon import main as lifecycle
    root = _root_of(args)
    try:
        if args.action == "run":
            return lifecycle.run_foreground(root, args.index_dir, args.polling)
        if args.action == "start":
            health = lifecycle.start_detached(root, args.index_dir, args.timeout, args.polling)
            verb = "already running" if health.get("already_running") else "started"
            print(f"codesearch daemon {verb} for {root} (pid {health.get('pid')})")
            return EXIT_OK
        if args.action == "stop":
            stopped = lifecycle.stop_daemon(root, args.index_dir)
            print("codesearch daemon stopped" if stopped else f"no codesearch daemon serves {root}")
            return EXIT_OK
        health = lifecycle.running_daemon(root, args.index_dir)
        if not health:
            if args.json:
                print(json.dumps({"running": False}))
            else:
                print(f"no codesearch daemon serves {root}")
            return EXIT_OK
        from .daemon.client import call, socket_path
        status = call(socket_path(root, args.index_dir), "status")
        if args.json:
            print(json.dumps({"running": True, **status}))
        else:
            print(_format_status(status))
        return EXIT_OK
    except lifecycle.DaemonLifecycleError as exc:
        raise CommandError(str(exc)) from None


def _format_status(s: dict) -> str:
    last = s.get("last_reindex") or {}
    emb = s["embedding"]
    lines = [f"pid {s['pid']}, up {s['uptime_seconds']:.0f}s, watching {s['root']} ({s['watcher']})",
             f"files {s['files']}, chunks {s['chunks']}, vectors {s['vectors']}, edges {s['edges']}",
             f"pending changes {s['pending_changes']}"]
    if last:
        lines.append(f"last reindex {time.strftime('%H:%M:%S', time.localtime(last['at']))} "
                     f"in {last['seconds'] * 1000:.0f} ms")
    if emb["chunks_without_vectors"]:
        lines.append(f"embedding: {emb['chunks_without_vectors']} chunks left, {emb['rate_per_second']}/s, "
                     f"ETA {emb['eta_seconds']:.0f}s")
    if s.get("watcher_note"):
        lines.append(s["watcher_note"])
    return "\n".join(lines)


def _add_index_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index-dir", help="where the index lives (default: REPO/.codesearch)")
    p.add_argument("--model", dest="model", help="sentence-transformers model name or path")
    p.add_argument("--chroma-url", dest="chroma_url", help="use a Chroma server, e.g. http://localhost:8000")


def _overrides(args: argparse.Namespace) -> None:
    args.overrides = {"model": getattr(args, "model", None), "chroma_url": getattr(args, "chroma_url", None)}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="codesearch", description="Local code search.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("--version", action="version", version=f"codesearch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("chunks", help="print the chunks of some files (no index needed)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print {\"chunks\": [...]}")
    p.add_argument("--text", action="store_true", help="include each chunk's text")
    p.set_defaults(func=cmd_chunks)

    p = sub.add_parser("index", help="build or update the index of a repository")
    p.add_argument("path", nargs="?", default=".", metavar="PATH")
    _add_index_options(p)
    p.add_argument("--no-vectors", action="store_true", help="keyword index and graph only; embed later")
    p.add_argument("--verify", action="store_true", help="also reconcile every vector with Chroma")
    p.add_argument("--wait", type=float, default=60.0, metavar="SECONDS",
                   help="how long to wait for another indexer to finish (default 60)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary")
    p.add_argument("--no-daemon", action="store_true", help="index in this process even if a daemon runs")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("query", help="search the index")
    p.add_argument("text", nargs="*", metavar="TEXT")
    p.add_argument("--repo", default=None, metavar="PATH", help="the indexed repository (default: .)")
    _add_index_options(p)
    p.add_argument("--limit", "-n", type=int, default=10)
    p.add_argument("--json", action="store_true", help="one JSON object (JSON Lines with --batch)")
    p.add_argument("--vimgrep", action="store_true", help="path:line:col:text lines for editors")
    p.add_argument("--files", action="store_true", help="at most one result per file")
    p.add_argument("--mode", choices=("hybrid", "vector", "keyword", "graph"), default="hybrid")
    p.add_argument("--lang", help="only this language")
    p.add_argument("--path", help="only paths matching this glob, e.g. 'src/*'")
    p.add_argument("--kind", help="only this kind of chunk (function, class, method, file, ...)")
    p.add_argument("--batch", metavar="FILE", help="one query per line; JSON Lines out")
    p.add_argument("--explain", action="store_true", help="show retriever ranks and ranking steps")
    p.add_argument("--context", type=int, default=0, metavar="N", help="N more snippet lines")
    p.add_argument("--no-daemon", action="store_true", help="answer in this process even if a daemon runs")
    p.set_defaults(func=cmd_query)

    for name, what in (("callers", "who calls NAME"), ("callees", "what NAME calls")):
        p = sub.add_parser(name, help=what)
        p.add_argument("name", metavar="NAME")
        p.add_argument("--repo", default=None, metavar="PATH")
        _add_index_options(p)
        p.add_argument("--depth", type=int, default=1)
        p.add_argument("--json", action="store_true")
        p.add_argument("--no-daemon", action="store_true")
        p.set_defaults(func=cmd_relations)

    p = sub.add_parser("eval", help="NDCG@10, MRR@10, P@5, Recall@10 of a query file")
    p.add_argument("queries", metavar="QUERIES.json")
    p.add_argument("--repo", default=None, metavar="PATH")
    _add_index_options(p)
    p.add_argument("--mode", choices=("hybrid", "vector", "keyword", "graph"), default="hybrid")
    p.add_argument("--limit", type=int, default=30)
    p.add_argument("--files", action="store_true", help="rank files (aggregated) instead of chunks")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("daemon", help="background watcher and socket server")
    p.add_argument("action", choices=("start", "stop", "status", "run"))
    p.add_argument("path", nargs="?", default=".", metavar="PATH")
    p.add_argument("--index-dir", help="where the index lives (default: PATH/.codesearch)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--polling", action="store_true", help="poll instead of native file events")
    p.add_argument("--timeout", type=float, default=600, help="seconds to wait for readiness on start")
    p.set_defaults(func=cmd_daemon)

    p = sub.add_parser("stats", help="what the index holds")
    p.add_argument("--repo", default=".", metavar="PATH")
    _add_index_options(p)
    p.add_argument("--json", action="store_true")
    p.add_argument("--fast", action="store_true", help="do not open Chroma to count vectors")
    p.set_defaults(func=cmd_stats)
    return parser



def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    handler: Callable[[argparse.Namespace], int] = args.func
    _overrides(args)
    try:
        return handler(args)
    except UsageError as exc:
        print(f"codesearch: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (CommandError, OSError) as exc:
        if args.debug:
            raise
        print(f"codesearch: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("codesearch: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the contract: one sentence, no traceback
        if args.debug:
            raise
        print(f"codesearch: unexpected error: {exc.__class__.__name__}: {exc} (rerun with --debug)",
              file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
