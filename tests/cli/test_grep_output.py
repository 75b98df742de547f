"""grep's text output against ripgrep's: context lines once each, `--` between runs that do not
meet, ripgrep's colours when asked (`--color`, NO_COLOR, a terminal), a closed pipe ends quietly."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import REPO_ROOT, run_cli

from codesearch.cli.color import MATCH, PATH, RESET, MatchPainter, use_color
from codesearch.cli.grep_text import grep_lines
from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.ripgrep import rg_binary

LINES = ["a", "foo 1", "b", "foo 2", "c", "d", "e", "foo 3", "f", "g", "h", "i", "foo 4", "j", "foo 5", "k"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("grep_output") / "repo"
    root.mkdir()
    (root / "notes.txt").write_text("\n".join(LINES) + "\n")
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)
    index.close()
    return root


@pytest.mark.parametrize("context", [["-C1"], ["-C2"], ["-A1"], ["-B2"], ["-A3", "-B1"], ["-C0"], []])
def test_context_lines_are_ripgreps_byte_for_byte(repo, context):
    """Below the chunk's line, the lines are ripgrep's own for the same file and context."""
    ours = run_cli("grep", *context, "foo", "notes.txt", "--repo", str(repo), "--no-daemon", "--color", "never")
    theirs = subprocess.run([rg_binary(), "--no-config", "-n", *context, "foo", "notes.txt"], cwd=repo,
                            capture_output=True, timeout=30)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout.split("\n", 1)[1].encode() == theirs.stdout


def match(line: int, before: list[str], after: list[str], start: int = 1, path: str = "a.py") -> dict:
    return {"path": path, "line": line, "column": 1, "text": f"hit {line}", "before": before, "after": after,
            "chunk": {"kind": "function", "qualified_name": f"f{start}", "start_line": start}}


def test_a_line_shared_by_two_contexts_is_printed_once_and_groups_part_with_dashes():
    answer = {"matches": [match(2, ["one"], ["three"]), match(4, ["three"], ["five"]), match(9, ["eight"], [])]}
    assert grep_lines(answer, "grouped", context=True) == [
        "a.py  function f1", "1-one", "2:hit 2", "3-three", "4:hit 4", "5-five", "--", "8-eight", "9:hit 9"]
    # without context, no dashes: ripgrep prints none either
    plain = {"matches": [match(2, [], []), match(9, [], [])]}
    assert grep_lines(plain, "grouped") == ["a.py  function f1", "2:hit 2", "9:hit 9"]


def test_chunks_of_one_file_share_no_line_and_ranked_order_loses_none():
    following = {"matches": [match(3, ["two"], ["four"]), match(5, ["four"], [], start=5)]}
    assert grep_lines(following, "grouped", context=True) == [
        "a.py  function f1", "2-two", "3:hit 3", "4-four", "", "a.py  function f5", "5:hit 5"]
    ranked = {"matches": [match(5, ["four"], [], start=5), match(3, ["two"], ["four"])]}
    assert grep_lines(ranked, "grouped", context=True) == [
        "a.py  function f5", "4-four", "5:hit 5", "", "a.py  function f1", "2-two", "3:hit 3", "4-four"]


def test_colours_are_ripgreps():
    painter = MatchPainter("fo+", fixed=False, word=False, ignore_case=True)
    answer = {"matches": [match(2, [], [])], "files": [{"path": "a.py", "count": 1}]}
    answer["matches"][0]["text"] = "x FOO foo"
    assert grep_lines(answer, "files", color=painter) == [f"{PATH}a.py{RESET}"]
    grouped = grep_lines(answer, "grouped", color=painter)
    assert grouped[0].startswith(f"{PATH}a.py{RESET}")
    assert grouped[1] == f"\033[32m2{RESET}:x {MATCH}FOO{RESET} {MATCH}foo{RESET}"
    assert MatchPainter("(", fixed=True, word=False, ignore_case=False)("a ( b") == f"a {MATCH}({RESET} b"
    assert MatchPainter("(", fixed=False, word=False, ignore_case=False)("a ( b") == "a ( b"  # re refuses it
    assert MatchPainter("foo", fixed=False, word=True, ignore_case=False)("foo food") == f"{MATCH}foo{RESET} food"


class Terminal:
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("choice", "no_color", "tty", "wanted"), [
    ("auto", None, True, True), ("auto", "1", True, False), ("auto", "", True, True), ("auto", None, False, False),
    ("always", "1", False, True), ("never", None, True, False)])
def test_when_to_colour(monkeypatch, choice, no_color, tty, wanted):
    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    assert use_color(choice, Terminal() if tty else object()) is wanted


def test_color_on_the_command_line(repo):
    always = run_cli("grep", "foo", "--repo", str(repo), "--no-daemon", "--color", "always")
    assert f"{MATCH}foo{RESET}" in always.stdout and always.stdout.startswith(f"{PATH}notes.txt{RESET}")
    piped = run_cli("grep", "foo", "--repo", str(repo), "--no-daemon")  # auto, and not a terminal
    assert "\033[" not in piped.stdout and piped.returncode == 0
    bad = run_cli("grep", "foo", "--repo", str(repo), "--color", "sometimes")
    assert bad.returncode == 2


@pytest.mark.parametrize("command", [["grep", "foo"], ["chunks", "notes.txt"], ["daemon", "status"],
                                     ["grep", "--json", "foo"]])
def test_a_closed_pipe_ends_quietly(repo, command):
    """As `rg | head`: exit 0, nothing on stderr, whatever the command."""
    (repo / "many.txt").write_text("foo\n" * 200_000)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    read, write = os.pipe()
    os.close(read)  # nobody reads: the first write fails
    try:
        done = subprocess.run([sys.executable, "-m", "codesearch.cli", *command, "--no-daemon"]
                              if command[0] == "grep" else [sys.executable, "-m", "codesearch.cli", *command],
                              cwd=repo, env=env, stdout=write, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
