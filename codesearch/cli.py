"""Command-line interface: argument parsing and output formatting only."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="codesearch", description="Local code search.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("chunks", help="print the chunks of some files (no index needed)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="print {\"chunks\": [...]}")
    p.add_argument("--text", action="store_true", help="include each chunk's text")
    p.set_defaults(func=cmd_chunks)
    return parser



def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    handler: Callable[[argparse.Namespace], int] = args.func
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
