"""The command line's grammar: every command, its options and their defaults, defined once.

Light on purpose (argparse and the vocabulary's words): the fast path of a query through a
running daemon parses its arguments here and imports nothing else of the command line.
"""

from __future__ import annotations

import argparse
import os

from .. import __version__
from ..vocabulary import FILE_RANKINGS, MODES
from .color import COLOR_CHOICES

TYPE_CHECKING = False  # typing is not imported at run time: it is a visible share of a CLI process's CPU
if TYPE_CHECKING:
    from typing import Any, NoReturn

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
EXIT_NO_MATCH = 1  # grep's "nothing matched"


class UsageError(Exception):
    """Bad usage: exit code 2."""


class CommandError(Exception):
    """A runtime failure with a one-sentence explanation: exit code 1."""


class BadArguments(Exception):
    """argparse refused the command line (exit code 2); raised instead of exiting, so that a
    `--json` command still answers in JSON."""

    def __init__(self, parser: argparse.ArgumentParser, message: str):
        super().__init__(message)
        self.parser = parser


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise BadArguments(self, message)

    def _get_formatter(self) -> argparse.HelpFormatter:
        """argparse's, sized as it sizes it, without importing shutil to ask (it asks on every
        add_argument, a visible share of each CLI process)."""
        return self.formatter_class(prog=self.prog, width=_terminal_columns() - 2)  # type: ignore[call-arg]



COMMAND_OF_ALIAS = {"search": "query"}
LANG_HELP = "only this language, by any common name or extension: python, py, go, golang, ts, c++, ..."
PATH_HELP = "only these paths: a folder (src, src/), a path's start, or a glob (*.py, src/**, **/tests/**)"
MAIN_EXAMPLES = """examples:
  codesearch index                          index the repository you are in
  codesearch query "retry with backoff"     search it by meaning and by name
  codesearch grep -w parse_config           exact text or a regex, definitions first
  codesearch callers parse_config           who calls a function
  codesearch COMMAND --help                 a command's options and examples"""
EXAMPLES = {
    "query": """examples:
  codesearch query "where are retries scheduled"
  codesearch search "http client timeout" --lang py --path src/ -n 5
  codesearch query parse_config --mode keyword --json
  codesearch query "open a database connection" --kind function --files""",
    "grep": r"""examples:
  codesearch grep -w parse_config
  codesearch grep -F "TODO(" --path src/ -C 2
  codesearch grep -l "import requests" --lang python
  codesearch grep "def test_\w+" tests --sort path --vimgrep""",
    "callers": """examples:
  codesearch callers parse_config
  codesearch callers Client.send --depth 2
  codesearch callers compute_backoff --path src/ --json""",
    "impact": """examples:
  codesearch impact parse_config
  codesearch impact Client.send --depth 2 --path src/
  codesearch impact compute_backoff --json""",
    "callees": """examples:
  codesearch callees main
  codesearch callees Server.handle --depth 2
  codesearch callees run --lang go --json""",
    "index": """examples:
  codesearch index                      the repository you are in
  codesearch index ~/src/project --no-vectors
  codesearch index --verify --json
  codesearch index --rebuild            a damaged catalog, from scratch""",
    "daemon": """examples:
  codesearch daemon start               watch and serve the repository you are in
  codesearch daemon status --json
  codesearch daemon start --http 8080   also the HTTP API on 127.0.0.1:8080
  codesearch daemon list
  codesearch daemon stop""",
}
MAX_WAIT_SECONDS = 86_400.0
MAX_IDLE_STOP_MINUTES = 525_600  # a year: the range of the daemon_idle_minutes setting
GRAPH_FORMATS = ("graphml", "gexf", "json", "dot")  # graph.formats.FORMATS, named here without loading NetworkX
GRAPH_DEPTH = 2  # `graph export NAME`: as far as the graph retriever's PageRank reaches


def existing_file(text: str) -> str:
    """A file to read, as an absolute path (so that a later run in another folder finds it too)."""
    path = os.path.realpath(os.path.expanduser(text))
    if not os.path.isfile(path):
        raise argparse.ArgumentTypeError(f"{text!r}: no such file")
    return path


def seconds(text: str) -> float:
    """A time to wait: a finite number of seconds from 0 to a day (`nan`, `inf` and negative
    numbers are refused as usage errors, not waited on)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value <= MAX_WAIT_SECONDS:  # also false for nan
        raise argparse.ArgumentTypeError(f"{text!r} is not from 0 to {MAX_WAIT_SECONDS:,.0f} seconds")
    return value


def idle_stop(text: str) -> str:
    """`daemon start --idle-stop`: minutes from 0 (never) to a year, `auto` or `never`."""
    word = text.strip().lower()
    if word in ("auto", "never"):
        return word
    try:
        minutes = float(word)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not minutes, auto or never") from None
    if not 0 <= minutes <= MAX_IDLE_STOP_MINUTES:  # also false for nan
        raise argparse.ArgumentTypeError(f"{text!r} is not from 0 to {MAX_IDLE_STOP_MINUTES:,} minutes")
    return "never" if minutes == 0 else repr(minutes)


def _terminal_columns() -> int:
    """shutil.get_terminal_size().columns: $COLUMNS, else the terminal's, else 80."""
    import os
    import sys
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _add_index_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index-dir", help="where the index lives (default: REPO/.codesearch)")
    p.add_argument("--model", dest="model",
                   help="the embedding model: a Hugging Face name or a local path (default all-MiniLM-L6-v2, "
                        "run with ONNX; the embedder setting picks another runtime)")
    p.add_argument("--device", dest="device", help="where the model runs: cpu, cuda or cuda:N "
                   "(default: a CUDA GPU when there is one, else the CPU)")
    p.add_argument("--chroma-url", dest="chroma_url", help="use a Chroma server, e.g. http://localhost:8000")


def _add_no_daemon_option(p: argparse.ArgumentParser,
                          meaning: str = "answer in this process even if a daemon runs") -> None:
    p.add_argument("--no-daemon", action="store_true", help=meaning)


def _add_color_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--color", choices=COLOR_CHOICES, default="auto", metavar="WHEN",
                   help="colour paths, line numbers and matches: auto (on a terminal, unless NO_COLOR is set; "
                        "the default), always or never")


def _add_repo_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo", action="append", default=None, metavar="PATH",
                   help="the indexed repository (default: the enclosing one); more than once: search them all as one")
    p.add_argument("--workspace", metavar="FILE",
                   help="the repositories of a workspace file ([[repo]] tables: path, name, boost)")


def _add_store_options(p: argparse.ArgumentParser, indexing: bool = False) -> None:
    p.add_argument("--store", metavar="URI", help="a team store instead of the local index: milvus:///ABS/PATH.db "
                   "(Milvus Lite), milvus://HOST:19530 or milvus+https://HOST (token: $CODESEARCH_MILVUS_TOKEN)")
    p.add_argument("--branch", metavar="BRANCH", help="with --store: the branch "
                   + ("indexed (default: the checkout's)" if indexing else "searched (default: every branch)"))
    if indexing:
        p.add_argument("--name", metavar="NAME",
                       help="with --store: the repository's name there (default: its folder's)")


def build_parser(only: str | None = None) -> Parser:
    """The command line; `only`: the command that argv names, whose part alone is built (a
    fraction of the CPU that building all of them takes); that command's errors, help and
    defaults are the same either way."""

    def wanted(name: str) -> bool:
        return only is None or COMMAND_OF_ALIAS.get(only, only) == name

    def command(name: str, what: str, **more: Any) -> Parser:
        """A command's parser, with its examples (EXAMPLES) below its options."""
        return sub.add_parser(name, help=what, description=what[:1].upper() + what[1:] + ".",
                              epilog=EXAMPLES.get(name), formatter_class=argparse.RawDescriptionHelpFormatter,
                              **more)

    parser = Parser(prog="codesearch", description="Local code search.", epilog=MAIN_EXAMPLES,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("--version", action="version", version=f"codesearch {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    if wanted("chunks"):
        p = command("chunks", "print the chunks of some files (no index needed)")
        p.add_argument("files", nargs="+", metavar="FILE", help="the files to cut into chunks")
        p.add_argument("--json", action="store_true", help="print {\"chunks\": [...]}")
        p.add_argument("--text", action="store_true", help="include each chunk's text")

    if wanted("index"):
        p = command("index", "build or update the index of a repository")
        p.add_argument("path", nargs="?", default=".", metavar="PATH", help="the repository (default: .)")
        _add_index_options(p)
        p.add_argument("--no-vectors", action="store_true", help="keyword index and graph only; embed later")
        p.add_argument("--verify", action="store_true",
                       help="also check the catalog's integrity and reconcile every vector with the store")
        p.add_argument("--rebuild", action="store_true",
                       help="build the index again from scratch (a damaged catalog); cached vectors are kept")
        p.add_argument("--wait", type=seconds, default=60.0, metavar="SECONDS",
                       help="how long to wait for another indexer to finish (default 60)")
        p.add_argument("--scip", metavar="FILE", type=existing_file,
                       help="a SCIP index (from scip-typescript, scip-python, ...) whose precise call edges replace "
                            "the name-based ones of the files it covers; remembered for later runs (default: "
                            "index.scip at the repository's root, unless the scip_discover setting is off)")
        p.add_argument("--json", action="store_true", help="print the report as JSON")
        p.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary")
        p.add_argument("--progress-json", action="store_true",
                       help="progress as JSON lines on stderr, for editors: {\"event\": \"progress\", \"stage\", ...}")
        _add_no_daemon_option(p, "index in this process (refused while a daemon serves the repository)")
        _add_store_options(p, indexing=True)

    if wanted("query"):
        p = command("query", "search the index by meaning and by name (alias: search)", aliases=["search"])
        p.add_argument("text", nargs="*", metavar="TEXT",
                       help="what to find: words, a question, a name or a piece of code")
        _add_repo_options(p)
        _add_index_options(p)
        p.add_argument("--limit", "-n", type=int, default=10, metavar="N", help="at most N results (default 10)")
        p.add_argument("--json", action="store_true", help="one JSON object (JSON Lines with --batch)")
        p.add_argument("--vimgrep", action="store_true", help="path:line:col:text lines for editors")
        p.add_argument("--files", action="store_true", help="at most one result per file")
        p.add_argument("--files-by", choices=FILE_RANKINGS, metavar="STRATEGY",
                       help="how --files ranks files (implies --files): fuse_first (the retrievers' chunk lists "
                            "fused, then files scored from their ranked chunks) or per_retriever (each "
                            "retriever's chunks made a file list, then the file lists fused); default: the "
                            "setting file_ranking")
        p.add_argument("--mode", choices=MODES, default="hybrid",
                       help="hybrid: meaning, words and the call graph fused (default); vector: meaning only; "
                            "keyword: words only (no model); graph: the call graph only")
        p.add_argument("--lang", help=LANG_HELP)
        p.add_argument("--path", help=PATH_HELP)
        p.add_argument("--kind", help="only this kind of chunk (function, class, method, file, ...)")
        p.add_argument("--batch", metavar="FILE", help="one query per line; JSON Lines out")
        p.add_argument("--explain", action="store_true", help="show retriever ranks and ranking steps")
        p.add_argument("--context", type=int, default=0, metavar="N", help="N more snippet lines")
        p.add_argument("--max-tokens", type=int, metavar="N",
                       help="fit the answer to about N tokens: shorter snippets, then fewer results")
        _add_color_option(p)
        _add_no_daemon_option(p)
        _add_store_options(p)

    for name, what, depth in (("callers", "who calls NAME", 1), ("callees", "what NAME calls", 1),
                              ("impact", "what may break if NAME changes: its callers, theirs, ... by file", 3)):
        if not wanted(name):
            continue
        p = command(name, what)
        p.add_argument("name", metavar="NAME", help="a definition's name, or qualified name (Class.method)")
        _add_repo_options(p)
        _add_index_options(p)
        p.add_argument("--depth", type=int, default=depth, help=f"hops along the call graph (default {depth})")
        p.add_argument("--limit", "-n", type=int, default=None, help="at most N results, nearest first")
        p.add_argument("--json", action="store_true", help="one JSON object")
        p.add_argument("--lang", help=LANG_HELP)
        p.add_argument("--path", help=PATH_HELP)
        p.add_argument("--kind", help="only this kind of chunk (function, method, ...)")
        _add_color_option(p)
        _add_no_daemon_option(p)
        _add_store_options(p)

    if wanted("grep"):
        p = command("grep", "exact text or a regex, ranked by structure (exit 0 match, 1 none, 2 error)")
        p.add_argument("pattern", metavar="PATTERN", help="a regular expression (ripgrep's syntax), or text with -F")
        p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders inside the repository")
        _add_repo_options(p)
        p.add_argument("--index-dir", help="where the index lives (default: REPO/.codesearch)")
        p.add_argument("-F", "--fixed-strings", action="store_true", help="the pattern is exact text")
        p.add_argument("-w", "--word-regexp", action="store_true", help="whole words only")
        p.add_argument("-i", "--ignore-case", action="store_true", help="any case matches")
        p.add_argument("-s", "--case-sensitive", action="store_true", help="case matters (the default)")
        p.add_argument("-A", "--after-context", type=int, metavar="N", help="N lines after each match")
        p.add_argument("-B", "--before-context", type=int, metavar="N", help="N lines before each match")
        p.add_argument("-C", "--context", type=int, default=0, metavar="N", help="N lines before and after each match")
        p.add_argument("-l", "--files-with-matches", action="store_true", help="only the files, ranked")
        p.add_argument("-c", "--count", action="store_true", help="matching lines per file")
        p.add_argument("--lang", help=LANG_HELP)
        p.add_argument("--path", help=PATH_HELP)
        p.add_argument("--sort", choices=("rank", "path"), default="rank",
                       help="rank: definitions, central code, then tests (default); path: file order")
        p.add_argument("--limit", type=int, default=10_000, help="matching lines shown at most (default 10000)")
        p.add_argument("--json", action="store_true", help="one JSON object: the matches, their chunks and files")
        p.add_argument("--vimgrep", action="store_true", help="path:line:column:text lines")
        p.add_argument("--explain", action="store_true", help="say why each group ranks where it does")
        _add_color_option(p)
        _add_no_daemon_option(p)

    if wanted("graph"):
        graph = command("graph", "write the call graph for other tools (GraphML, GEXF, JSON, DOT)")
        actions = graph.add_subparsers(dest="action", metavar="ACTION", required=True)
        p = actions.add_parser("export", help="the whole graph, or the neighbourhood of some definitions")
        p.add_argument("names", nargs="*", metavar="NAME",
                       help="the neighbourhood of the definitions of these names (default: the whole graph)")
        p.add_argument("--format", choices=GRAPH_FORMATS, default="graphml",
                       help="graphml (default), gexf, json (NetworkX's node-link data) or dot")
        p.add_argument("--depth", type=int, default=None, metavar="N",
                       help=f"hops out from the named definitions (default {GRAPH_DEPTH})")
        p.add_argument("--repo", default=None, metavar="PATH",
                       help="the indexed repository (default: the enclosing one)")
        p.add_argument("--index-dir", help="where the index lives (default: REPO/.codesearch)")
        p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")

    if wanted("eval"):
        p = command("eval", "NDCG@10, MRR@10, P@5, Recall@10 of a query file")
        p.add_argument("queries", metavar="QUERIES.json", help="the queries and the results each should find")
        p.add_argument("--repo", default=None, metavar="PATH",
                       help="the indexed repository (default: the enclosing one)")
        _add_index_options(p)
        p.add_argument("--mode", choices=MODES, default="hybrid", help="the search mode to measure (default hybrid)")
        p.add_argument("--limit", type=int, default=30, metavar="N", help="results asked per query (default 30)")
        p.add_argument("--files", action="store_true", help="rank files (aggregated) instead of chunks")
        p.add_argument("--json", action="store_true", help="the report as JSON")

    if wanted("daemon"):
        p = command("daemon", "background watcher and socket server")
        p.add_argument("action", choices=("start", "stop", "status", "list", "run"), metavar="ACTION",
                       help="start (in the background), stop, status, list (every running daemon) or run "
                            "(in the foreground)")
        p.add_argument("path", nargs="*", metavar="PATH",
                       help="the repository (default: the enclosing one); several: one daemon for all")
        p.add_argument("--workspace", metavar="FILE", help="serve every repository of a workspace file")
        p.add_argument("--index-dir", help="where the index lives (default: PATH/.codesearch)")
        p.add_argument("--json", action="store_true", help="the answer as JSON")
        p.add_argument("--polling", action="store_true", help="poll instead of native file events")
        p.add_argument("--timeout", type=seconds, default=600, help="seconds to wait for readiness on start")
        p.add_argument("--idle-stop", metavar="MINUTES", type=idle_stop,
                       help="stop after MINUTES with no request and no work; auto: as a daemon a client starts "
                            "(the daemon_idle_minutes setting); 0 or never: run until stopped (the default)")
        p.add_argument("--http", metavar="[HOST:]PORT",
                       help="also serve the HTTP API (127.0.0.1 unless HOST is given; another host needs a token)")
        p.add_argument("--http-token", metavar="TOKEN",
                       help="require `Authorization: Bearer TOKEN` on HTTP (default: $CODESEARCH_HTTP_TOKEN)")
        p.add_argument("--store", metavar="URI", help="run (with --http) the team service of this store: every "
                       "repository in it (milvus:///ABS/PATH.db, milvus://HOST:19530)")

    if wanted("merge"):
        p = command("merge", "fuse ranked lists from several sources (JSON on stdin) into one")
        p.add_argument("--boost-sources", metavar="NAME:W,...",
                       help="multiply the fused score of results first seen in NAME by W, e.g. docs:1.2,memory:0.8")
        p.add_argument("--k", default="60", metavar="K",
                       help="the RRF constant: each rank adds 1/(K + rank) (default 60)")
        p.add_argument("--limit", default=None, metavar="N", help="at most N merged results")

    if wanted("mcp"):
        p = command("mcp", "serve the MCP tools over stdio, through the repository's daemon")
        p.add_argument("path", nargs="*", metavar="PATH", help="the repository (default: .); several: a workspace")
        p.add_argument("--workspace", metavar="FILE", help="serve the repositories of a workspace file")
        p.add_argument("--index-dir", help="where the index lives (default: PATH/.codesearch)")
        p.add_argument("--no-start", action="store_true", help="do not start a daemon when none runs")
        p.add_argument("--store", metavar="URI", help="serve the tools from a team store (milvus:///ABS/PATH.db, "
                       "milvus://HOST:19530): every repository in it")

    if wanted("lsp"):
        p = command("lsp", "serve the Language Server Protocol over stdio (the root comes from initialize)")
        p.add_argument("--index-dir", help="where the index lives (default: ROOT/.codesearch)")
        p.add_argument("--no-start", action="store_true", help="do not start a daemon when none runs")
        p.add_argument("--stdio", action="store_true", help="accepted for clients that pass it (stdio is the only way)")

    if wanted("stats"):
        p = command("stats", "what the index holds")
        p.add_argument("--repo", default=None, metavar="PATH",
                       help="the indexed repository (default: the enclosing one)")
        _add_index_options(p)
        p.add_argument("--json", action="store_true", help="the statistics as JSON")
        p.add_argument("--fast", action="store_true", help="do not open Chroma to count vectors")

    if wanted("doctor"):
        p = command("doctor", "check the install, index, daemon and watcher; say what to do (exit 1: action)")
        p.add_argument("path", nargs="?", default=".", metavar="PATH", help="the repository (default: .)")
        _add_index_options(p)
        p.add_argument("--json", action="store_true", help="{\"root\", \"healthy\", \"checks\": [...]}")
        p.add_argument("--fast", action="store_true", help="do not load the embedding model to time it")

    if wanted("completion"):
        from .completion import SHELLS  # only here: it defines records (dataclasses)
        p = command("completion", "print shell completion: eval \"$(codesearch completion bash)\"")
        p.add_argument("shell", choices=SHELLS, help="the shell: " + ", ".join(SHELLS))
    return parser


def usage_error_line(parser: Parser, argv: list[str], message: str) -> str:
    """argparse's refusal as one line: the message, the nearest spelling of a mistyped command,
    flag or choice (difflib), and where to read the rest."""
    import difflib
    import re
    name = COMMAND_OF_ALIAS.get(argv[0], argv[0]) if argv else ""
    command = _commands(parser).get(name)
    prog = command.prog if command is not None else parser.prog
    wrong, candidates = "", []
    chose = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if chose:
        wrong, candidates = chose.group(1), re.findall(r"'([^']*)'", chose.group(2))
        message = message[:chose.start(2) - len("(choose from ")].rstrip()
    elif message.startswith("unrecognized arguments:"):
        flags = [word for word in message.split()[2:] if word.startswith("-")]
        wrong = flags[0].split("=")[0] if flags else ""
        candidates = [o for action in (command or parser)._actions for o in action.option_strings]
    near = difflib.get_close_matches(wrong, candidates, n=1, cutoff=0.6) if wrong else []
    hint = f" (did you mean {near[0]}?)" if near else ""
    return f"{message}{hint}; see {prog} --help"


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's commands by name (aliases too)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def report_error(message: str, code: int, as_json: bool) -> None:
    """A failed command's one sentence on stderr (escaped for a terminal: it may quote a file's
    name); with `--json`, also as JSON on stdout."""
    import sys

    from ..text import for_terminal
    if as_json:
        print_json_error(message, code)
    print(f"codesearch: {for_terminal(message)}", file=sys.stderr)


def print_json_error(message: str, code: int) -> None:
    """A `--json` command's failure: `{"error", "exit_code"}` on stdout as well (scripts parse it)."""
    import json
    print(json.dumps({"error": message, "exit_code": code}, ensure_ascii=False), flush=True)
