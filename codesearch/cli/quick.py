"""The fast path of `codesearch query ... --json` when a daemon serves the repository.

It parses the arguments (`parser`), finds the daemon's socket (`locations`), sends the search and
prints the daemon's JSON as the daemon wrote it, importing argparse, json and socket and no
record classes, pathlib or typing. Whatever it does not handle (no daemon, a workspace, --batch,
--lang, which is checked against every language's grammar, a request the daemon refuses) goes
the full way (`main`), as if this had not been tried; only a busy or silent daemon is reported
here, in the same words, so that it is not asked twice.
"""

from __future__ import annotations

import os
import sys

from ..daemon.client import NO_DAEMON_ENV, DaemonBusy, DaemonClient, DaemonError, socket_file
from ..locations import command_root
from ..vocabulary import ALL_KINDS
from .parser import EXIT_ERROR, EXIT_OK, BadArguments, build_parser, report_error

TYPE_CHECKING = False  # typing is not imported at run time (4-5 ms of CPU per CLI process, measured loaded)
if TYPE_CHECKING:
    import argparse

BUSY_ADVICE = "try again, or add --no-daemon to answer in this process"
NO_ANSWER = "the daemon did not answer in time; try again, or add --no-daemon"


def answer(argv: list[str]) -> int | None:
    """The exit code of a `query --json` that a running daemon answered (its JSON printed), or
    None when this is not such a query."""
    if argv[:1] != ["query"] or "--json" not in argv or os.environ.get(NO_DAEMON_ENV) or {"-h", "--help"} & set(argv):
        return None
    try:
        args = build_parser(only="query").parse_args(argv)
    except BadArguments:
        return None
    text = " ".join(args.text)
    if (not args.json or args.batch or args.no_daemon or args.workspace or len(args.repo or ()) > 1
            or args.lang or (args.kind and args.kind not in ALL_KINDS) or not text.strip()):
        return None
    root = command_root(args.repo[0] if args.repo else None, args.index_dir)
    sock = socket_file(root, args.index_dir)
    if not os.path.isdir(root) or not os.path.exists(sock):
        return None
    try:
        reply = DaemonClient(sock).call_json("search", search_params(args, text))
    except DaemonBusy as exc:
        report_error(f"{exc}; {BUSY_ADVICE}", EXIT_ERROR, as_json=True)
        return EXIT_ERROR
    except TimeoutError:
        report_error(NO_ANSWER, EXIT_ERROR, as_json=True)
        return EXIT_ERROR
    except (OSError, DaemonError):
        return None  # nobody listens, or the request was refused: the full path answers or explains
    sys.stdout.buffer.write(reply + b"\n")
    sys.stdout.flush()
    return EXIT_OK


def search_params(args: argparse.Namespace, text: str) -> dict:
    """A search request's fields from the query command's arguments, as the wire spells them
    (`SearchRequest.from_dict` reads them in process)."""
    params = {"query": text, "mode": args.mode, "limit": args.limit,
              "filters": {"language": args.lang, "kind": args.kind, "path_glob": args.path},
              "files": args.files, "explain": args.explain, "context": args.context}
    if args.max_tokens is not None:
        params["max_tokens"] = args.max_tokens
    return params
