"""The fast path of `codesearch query ... --json` and of `codesearch grep ...` when a daemon
serves the repository.

It parses the arguments (`parser`), finds the daemon's socket and sends the request with what a
client may import (`daemon.client_surface`), and prints the daemon's JSON as the daemon wrote it
(a grep answer passed on piece by piece as it comes), importing argparse, json and socket and no
record classes, pathlib or typing. Whatever it
does not handle (no daemon, a workspace, --batch, --lang, which is checked against every
language's grammar, arguments that are not text, a request the daemon refuses) goes the full
way (`main`), as if this had not been tried; only a busy or silent daemon is reported here, in
the same words, so that it is not asked twice.
"""

from __future__ import annotations

import json
import os
import sys

from ..daemon.client_surface import (
    ALL_KINDS,
    NO_DAEMON_ENV,
    AnswerBrokeOff,
    DaemonBusy,
    DaemonClient,
    DaemonError,
    command_root,
    socket_file,
    text_problem,
)
from .grep_text import write_grep_answer
from .parser import EXIT_ERROR, EXIT_NO_MATCH, EXIT_OK, EXIT_USAGE, BadArguments, build_parser, report_error

TYPE_CHECKING = False  # typing is not imported at run time: it is a visible share of a CLI process's CPU
if TYPE_CHECKING:
    import argparse


BUSY_ADVICE = "try again, or add --no-daemon to answer in this process"
NO_ANSWER = "the daemon did not answer in time; try again, or add --no-daemon"


def answer(argv: list[str]) -> int | None:
    """The exit code of a `query --json` or `grep --json` that a running daemon answered (its
    JSON printed), or None when this is not such a command."""
    if argv[:1] not in (["query"], ["search"], ["grep"]) or (argv[0] != "grep" and "--json" not in argv) \
            or os.environ.get(NO_DAEMON_ENV) or {"-h", "--help"} & set(argv) or any(map(text_problem, argv)):
        return None  # bad text too: the full path's request refuses it in a line
    try:
        args = build_parser(only=argv[0]).parse_args(argv)
    except BadArguments:
        return None
    if not (args.json or argv[0] == "grep") or args.no_daemon or args.workspace or len(args.repo or ()) > 1 \
            or args.lang:
        return None
    root = command_root(args.repo[0] if args.repo else None, args.index_dir)
    sock = socket_file(root, args.index_dir)
    if not os.path.isdir(root) or not os.path.exists(sock):
        return None
    if argv[0] != "grep":
        return _query(args, sock)
    return _grep(args, sock) if args.json else _grep_text(args, sock, root)


def _query(args: argparse.Namespace, sock: str) -> int | None:
    text = " ".join(args.text)
    if args.batch or (args.kind and args.kind not in ALL_KINDS) or not text.strip():
        return None
    try:
        reply = DaemonClient(sock).call_json("search", search_params(args, text))
    except (DaemonBusy, TimeoutError) as exc:
        return _reported(exc, EXIT_ERROR)
    except (OSError, DaemonError):
        return None  # nobody listens, or the request was refused: the full path answers or explains
    sys.stdout.buffer.write(reply + b"\n")
    sys.stdout.flush()
    return EXIT_OK


def _grep_text(args: argparse.Namespace, sock: str, root: str) -> int | None:
    """grep's text output (grep_text), from the daemon's JSON read into dicts."""
    try:
        answer = json.loads(DaemonClient(sock).call_json("grep", grep_params(args)))
    except (DaemonBusy, TimeoutError) as exc:
        return _reported(exc, EXIT_USAGE)
    except (OSError, DaemonError):
        return None  # nobody listens, or the request was refused: the full path answers or explains
    write_grep_answer(answer, args)
    sys.stdout.flush()
    if answer["total"]:
        return EXIT_OK
    from .path_note import note_unmatched_path
    note_unmatched_path([root], args.path)
    return EXIT_NO_MATCH


def _grep(args: argparse.Namespace, sock: str) -> int | None:
    """Exit codes as grep's; the answer's first bytes say whether anything matched."""
    head = grep_json_head(args.pattern)
    try:
        start = DaemonClient(sock).grep_json_into(grep_params(args), sys.stdout.buffer, len(head) + 1, stdout_fd())
    except (DaemonBusy, TimeoutError) as exc:
        return _reported(exc, EXIT_USAGE)
    except BrokenPipeError:
        raise  # the reader went away: main says nothing more
    except AnswerBrokeOff as exc:  # part of it may be written: not asked again
        report_error(str(exc), EXIT_USAGE, as_json=False)
        return EXIT_USAGE
    except (OSError, DaemonError):
        return None  # nothing written: nobody listens, or the request was refused; the full path answers or explains
    sys.stdout.buffer.write(b"\n")
    sys.stdout.flush()
    return grep_exit_code(start, head)


def stdout_fd() -> int | None:
    """The descriptor under stdout, flushed, for the daemon to write an answer into (its 40 MB
    are then not copied through the socket and this process); None when stdout has none (a
    test's capture in memory)."""
    try:
        sys.stdout.flush()
        return sys.stdout.buffer.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _reported(problem: DaemonBusy | TimeoutError, code: int) -> int:
    """A busy or silent daemon, told in the full path's words (so that it is not asked twice)."""
    report_error(f"{problem}; {BUSY_ADVICE}" if isinstance(problem, DaemonBusy) else NO_ANSWER, code, as_json=True)
    return code


def grep_json_head(pattern: str) -> bytes:
    """How a grep answer's JSON begins, up to its first match."""
    from json.encoder import encode_basestring
    return f'{{"pattern": {encode_basestring(pattern)}, "matches": ['.encode()


def grep_exit_code(start: bytes, head: bytes) -> int:
    """grep's exit code from the answer's first bytes (`head` and one more): 1 when its list of
    matches is empty, not from parsing 30 MB."""
    if start.startswith(head):
        return EXIT_NO_MATCH if start.startswith(b"]", len(head)) else EXIT_OK
    return EXIT_OK if json.loads(start)["total"] else EXIT_NO_MATCH


def grep_params(args: argparse.Namespace) -> dict:
    """A grep request's fields from the grep command's arguments, as the wire spells them. -l
    and -c print the answer's files, which count every match whatever the limit: they ask for
    one match (not in a workspace, whose files are ordered by the matches it shows)."""
    context = args.context
    files_only = (args.files_with_matches or args.count) and not args.json and not args.workspace \
        and len(args.repo or ()) <= 1
    params = {"pattern": args.pattern, "fixed": args.fixed_strings, "word": args.word_regexp,
              "ignore_case": args.ignore_case and not args.case_sensitive,
              "before": args.before_context if args.before_context is not None else context,
              "after": args.after_context if args.after_context is not None else context,
              "filters": {"language": args.lang, "path_glob": args.path},
              "sort": args.sort, "limit": 1 if files_only else args.limit, "explain": args.explain}
    if args.paths:
        params["paths"] = list(args.paths)
    return params


def search_params(args: argparse.Namespace, text: str) -> dict:
    """A search request's fields from the query command's arguments, as the wire spells them
    (`SearchRequest.from_dict` reads them in process)."""
    params = {"query": text, "mode": args.mode, "limit": args.limit,
              "filters": {"language": args.lang, "kind": args.kind, "path_glob": args.path},
              "files": args.files or args.files_by is not None, "explain": args.explain, "context": args.context}
    if args.files_by is not None:
        params["file_ranking"] = args.files_by
    if args.max_tokens is not None:
        params["max_tokens"] = args.max_tokens
    return params
