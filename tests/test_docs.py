"""The documentation says what the code does: docs/cli.md and the parser list the same commands and
flags, README's commands parse, every relative link leads to a file inside the repository, every
setting has its row, and no page tells the project's history (that is CHANGELOG.md's)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shlex
from pathlib import Path

import pytest

from codesearch.cli.parser import build_parser
from codesearch.config import Settings

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").rglob("*.md"))
README_MAX_LINES = 300

HEADING = re.compile(r"^#{2,} `codesearch(?: (?P<path>[^`]+))?`$")
ALSO = re.compile(r"^Also: (?P<names>.+)\.$")
ROW = re.compile(r"^\| (?P<cell>[^|]+) \|")
LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")
# issue numbers (`issue 38`, `#38`), stops, rounds and sessions of work; a benchmark's repetitions are
# "repetitions" in prose (a script's `--rounds` flag is its name, not prose)
HISTORY = re.compile(r"\bissues? #?\d+|\bissue-\d+|(?<![\w&/])#\d+\b|\bstops? \d+|(?<!-)\brounds?\b"
                     r"|\b(?:this|that|the latest|later|earlier) sessions?\b|\bthe session before", re.IGNORECASE)


def _parser_surface(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> tuple[set, set]:
    """(command paths, (command path, flag) pairs) of the parser, aliases included."""
    commands: set[tuple[str, ...]] = {path}
    flags = {(path, option) for action in parser._actions for option in action.option_strings}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                more_commands, more_flags = _parser_surface(sub, (*path, name))
                commands |= more_commands
                flags |= more_flags
    return commands, flags


def _doc_surface(text: str) -> tuple[set, set]:
    """(command paths, (command path, flag) pairs) that docs/cli.md lists: a heading per command,
    an "Also:" line for its aliases, a table row per argument."""
    commands: set[tuple[str, ...]] = set()
    flags: set[tuple[tuple[str, ...], str]] = set()
    current: list[tuple[str, ...]] = []
    for line in text.splitlines():
        if heading := HEADING.match(line):
            current = [tuple((heading["path"] or "").split())]
            commands.add(current[0])
        elif (also := ALSO.match(line)) and current:
            for name in re.findall(r"`codesearch ([^`]+)`", also["names"]):
                current.append(tuple(name.split()))
                commands.add(current[-1])
        elif (row := ROW.match(line)) and current:
            for option in re.findall(r"`(-[^`\s]+)`", row["cell"]):
                flags.update((command, option) for command in current)
    return commands, flags


def test_cli_doc_lists_every_command_and_flag_of_the_parser_and_no_other() -> None:
    parser_commands, parser_flags = _parser_surface(build_parser())
    doc_commands, doc_flags = _doc_surface((ROOT / "docs" / "cli.md").read_text(encoding="utf-8"))
    assert doc_commands == parser_commands, "run scripts/write_cli_doc.py"
    assert doc_flags == parser_flags, "run scripts/write_cli_doc.py"


def _sh_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, re.DOTALL)


def _codesearch_commands(block: str) -> list[list[str]]:
    """The arguments of each `codesearch` call in a shell block (comments and pipes cut off)."""
    calls = []
    for line in block.splitlines():
        line = line.split(" #")[0].strip()
        if line.startswith("#"):
            continue
        for part in re.split(r"&&|\|\||;|\|(?!\w)", line):
            words = shlex.split(part, comments=True)
            starts = [i for i, word in enumerate(words) if word == "codesearch" or word.endswith("/bin/codesearch")]
            if starts:  # the last: `claude mcp add codesearch -- codesearch mcp PATH` names the server first
                calls.append([w for w in words[starts[-1] + 1:] if not w.startswith(("<", ">"))])
    return calls


def test_readme_first_block_is_the_install_query_and_tests_that_ci_runs() -> None:
    first = _sh_blocks(README.read_text(encoding="utf-8"))[0]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -q ." in first and "bash scripts/setup.sh" in first
    assert "bash scripts/setup.sh" in ci and ".venv/bin/python -m pytest -q -n 3" in ci
    assert ".venv/bin/python -m pytest -q -n 3" in first
    calls = _codesearch_commands(first)
    assert [call[0] for call in calls] == ["query"]
    build_parser().parse_args(calls[0])


@pytest.mark.parametrize("call", [c for b in _sh_blocks(README.read_text(encoding="utf-8"))
                                  for c in _codesearch_commands(b)], ids=" ".join)
def test_readme_commands_parse(call: list[str]) -> None:
    build_parser().parse_args(call)


def test_readme_is_a_front_door() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= README_MAX_LINES


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_lead_to_files_in_the_repository(page: Path) -> None:
    for match in LINK.finditer(page.read_text(encoding="utf-8")):
        target = match["target"].split("#")[0]
        if not target or re.match(r"^[a-z]+:", target):
            continue
        resolved = (page.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{page.name}: {target} leaves the repository"
        assert resolved.exists(), f"{page.name}: {target} does not exist"


def test_settings_doc_has_every_setting_with_its_default() -> None:
    text = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    rows = {m[1]: m[2] for m in re.finditer(r"^\| `(\w+)` \| `([^`]*)` \|", text, re.MULTILINE)}
    for f in dataclasses.fields(Settings):
        if f.name == "extra":
            continue
        assert f.name in rows, f"docs/settings.md has no row for {f.name}"
        assert rows[f.name] == repr(f.default).strip("'"), f"docs/settings.md: {f.name}'s default"


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_development_history_in_readme_or_docs(page: Path) -> None:
    found = [line for line in page.read_text(encoding="utf-8").splitlines() if HISTORY.search(line)]
    assert not found, found[:3]


@pytest.mark.parametrize(("line", "history"), [
    ("Fixed in issue 38.", True), ("as #38 asked", True), ("until stop 32, the writer", True),
    ("the second round of this work", True), ("in the latest session", True),
    ("medians of 5 repetitions", False), ("`scripts/bench_grep.py --rounds 7`", False),
    ("`codesearch daemon stop` ends it", False), ("a `#` in a folder's name", False), ("&#38;", False),
])
def test_history_pattern_tells_history_from_prose(line: str, history: bool) -> None:
    assert bool(HISTORY.search(line)) == history


@pytest.mark.parametrize("result", sorted((ROOT / "docs" / "benchmarks").glob("*.json")), ids=lambda p: p.name)
def test_benchmark_results_are_small_json_without_this_machines_paths(result: Path) -> None:
    text = result.read_text(encoding="utf-8")
    json.loads(text)
    assert len(text) < 256 * 1024, "per-question rows only: no chunk texts"
    assert str(Path.home()) not in text and not re.search(r'"/(?:home|root|Users)/', text)
