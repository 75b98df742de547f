"""Write docs/cli.md from the command-line parser, so the page lists every command and flag the
parser has and nothing else (tests/test_docs.py checks both ways).

    .venv/bin/python scripts/write_cli_doc.py            # rewrite docs/cli.md
    .venv/bin/python scripts/write_cli_doc.py --check    # exit 1 when docs/cli.md is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from codesearch.cli.parser import build_parser

DOC_PATH = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
HELP_COLUMNS = 100

INTRO = """# Command line

Every command and flag of `codesearch`, written from its parser by `scripts/write_cli_doc.py`
(run it after changing a command; `tests/test_docs.py` fails when this page and the parser
disagree). `codesearch COMMAND --help` prints the same, with examples.

Without `--repo`, a command works on the enclosing repository: the nearest folder up with an
index, else the git work tree, else the current folder. Every `--json` prints JSON on stdout,
errors included: `{"error": "one sentence", "exit_code": N}` with that exit code.

Exit codes: 0 success (also when nothing matched), 1 runtime error, 2 bad usage; errors are one
sentence on stderr (`--debug` shows tracebacks). `grep` alone exits as grep does: 0 when
something matched, 1 when nothing did, 2 on an error.

Shell completion: `eval "$(codesearch completion bash)"` in `~/.bashrc`; zsh:
`codesearch completion zsh > "${fpath[1]}/_codesearch"`; fish:
`codesearch completion fish > ~/.config/fish/completions/codesearch.fish`.
"""


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """A parser's commands by their own name (aliases left out)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: dict[int, str] = {}
            for name, sub in action.choices.items():
                seen.setdefault(id(sub), name)
            return {name: action.choices[name] for name in seen.values()}
    return {}


def aliases(parser: argparse.ArgumentParser, name: str) -> list[str]:
    """The other names of command `name` of `parser`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            target = action.choices[name]
            return [other for other, sub in action.choices.items() if sub is target and other != name]
    return []


def _cell(text: str | None) -> str:
    return " ".join((text or "").split()).replace("|", "\\|")


def _option_rows(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        if action.option_strings:
            names = ", ".join(f"`{o}`" for o in action.option_strings)
            if action.metavar or (action.nargs != 0 and not isinstance(action, argparse._HelpAction)):
                metavar = action.metavar or action.dest.upper()
                names += f" `{metavar}`" if isinstance(metavar, str) else ""
        else:
            names = f"`{action.metavar or action.dest}` (argument)"
        what = _cell(action.help % {"default": action.default} if action.help and "%(" in action.help
                     else action.help)
        if action.choices and not isinstance(action, argparse._SubParsersAction):
            what += f" (one of: {', '.join(str(c) for c in action.choices)})"
        rows.append(f"| {names} | {what} |")
    return rows


def _section(path: list[str], parser: argparse.ArgumentParser, level: int, also: list[str]) -> list[str]:
    heading = "#" * level + f" `codesearch {' '.join(path)}`"
    lines = [heading, ""]
    if parser.description:
        lines += [_cell(parser.description), ""]
    if also:
        lines += ["Also: " + ", ".join(f"`codesearch {' '.join([*path[:-1], a])}`" for a in also) + ".", ""]
    usage = " ".join(parser.format_usage().split())
    lines += ["```", usage.removeprefix("usage: "), "```", "", "| argument | what it does |", "|---|---|"]
    lines += _option_rows(parser)
    if parser.epilog and parser.epilog.startswith("examples:"):
        lines += ["", "```sh", *(line.strip() for line in parser.epilog.splitlines()[1:] if line.strip()), "```"]
    lines.append("")
    for name, sub in subcommands(parser).items():
        lines += _section([*path, name], sub, level + 1, aliases(parser, name))
    return lines


def render() -> str:
    """The whole page."""
    parser = build_parser()
    lines = [INTRO, "## `codesearch`", "", "| argument | what it does |", "|---|---|", *_option_rows(parser), ""]
    for name, sub in subcommands(parser).items():
        lines += _section([name], sub, 2, aliases(parser, name))
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    import os
    os.environ["COLUMNS"] = str(HELP_COLUMNS)
    text = render()
    if "--check" in sys.argv[1:]:
        if DOC_PATH.read_text(encoding="utf-8") != text:
            print(f"{DOC_PATH} is out of date: run scripts/write_cli_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC_PATH.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
