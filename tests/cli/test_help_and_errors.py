"""Help that explains every argument with examples, `search` as `query`, a suggestion for a
mistyped command, flag or choice, and errors of one line with README's exit codes."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codesearch.cli import services
from codesearch.cli.commands import main
from codesearch.cli.parser import EXAMPLES, build_parser
from codesearch.config import load_settings
from codesearch.daemon.client import INVALID_PARAMS, DaemonError
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer

SAMPLE = Path(__file__).resolve().parents[2] / "sample_repos" / "python"


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("help") / "repo"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".codesearch"))
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)
    index.close()
    return root


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[name] = sub
                found.update({f"{name} {k}": v for k, v in commands(sub).items()})
    return found


def test_every_argument_of_every_command_is_described():
    undescribed = [(name, action.dest) for name, sub in commands(build_parser()).items() for action in sub._actions
                   if not action.help and not isinstance(action, argparse._SubParsersAction)]
    assert not undescribed


@pytest.mark.parametrize("command", ["query", "grep", "callers", "callees", "index", "daemon"])
def test_main_commands_show_three_examples_or_more(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    assert out.count("\n  codesearch ") >= 3 and EXAMPLES[command].splitlines()[1] in out
    assert command not in ("query", "callers") or "ONNX" in out  # --model: the default runs on ONNX


def test_search_is_query(repo, capsys):
    _, query, _ = run(capsys, "query", "clamp", "--repo", str(repo), "--mode", "keyword", "--json", "--no-daemon")
    code, search, err = run(capsys, "search", "clamp", "--repo", str(repo), "--mode", "keyword", "--json",
                            "--no-daemon")
    assert code == 0, err
    assert [r["id"] for r in json.loads(search)["results"]] == [r["id"] for r in json.loads(query)["results"]]


@pytest.mark.parametrize(("args", "hint"), [
    (["query", "x", "--limt", "3"], "(did you mean --limit?); see codesearch query --help"),
    (["serch", "x"], "(did you mean search?); see codesearch --help"),
    (["qurey", "x"], "(did you mean query?)"),
    (["query", "x", "--mode", "hybird"], "(did you mean hybrid?)"),
    (["grep", "x", "--colr", "never"], "(did you mean --color?)"),
    (["query", "x", "--zzzzzz"], "unrecognized arguments: --zzzzzz; see codesearch query --help")])
def test_a_mistyped_word_gets_the_nearest_in_one_line(args, hint, capsys):
    code, out, err = run(capsys, *args)
    assert code == 2 and err.count("\n") == 1 and hint in err, err
    code, out, err = run(capsys, *args, "--json")
    assert json.loads(out)["exit_code"] == 2 and hint in json.loads(out)["error"]


def test_a_missing_folder_does_not_exist(tmp_path, capsys):
    code, _, err = run(capsys, "query", "x", "--repo", str(tmp_path / "gone"))
    assert code == 2 and err == f"codesearch: {tmp_path / 'gone'} does not exist\n"
    (tmp_path / "file").write_text("")
    code, _, err = run(capsys, "query", "x", "--repo", str(tmp_path / "file"))
    assert code == 2 and "is not a folder" in err


@pytest.mark.parametrize(("command", "exit_code"), [(["grep", "x"], 2), (["query", "x", "--mode", "keyword"], 1)])
def test_an_unreadable_repository_is_one_line(repo, command, exit_code, capsys, monkeypatch):
    """As root no file is unreadable: the settings' read is made to fail as it does for others."""
    settings = repo / ".codesearch.toml"

    def refused(root, *rest, **more):
        raise PermissionError(13, "Permission denied", str(settings))
    monkeypatch.setattr(services, "settings_for", refused)
    code, _, err = run(capsys, *command, "--repo", str(repo), "--no-daemon")
    assert (code, err) == (exit_code, f"codesearch: {settings}: permission denied\n")


def test_a_bad_pattern_through_the_daemon_is_the_patterns_fault(repo, monkeypatch):
    class Refusing:
        def grep(self, request):
            raise DaemonError("invalid params: invalid regular expression: unclosed group", INVALID_PARAMS)
    monkeypatch.setattr(services, "daemon_of", lambda args: Refusing())
    args = build_parser().parse_args(["grep", "(", "--repo", str(repo)])
    with pytest.raises(services.UsageError, match=r"^invalid regular expression: unclosed group$"):
        services.answer_with(args, lambda service: service.grep(None))


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None, reason="root reads any folder")
def test_an_unreadable_subfolder_is_said_in_the_index_summary(tmp_path):
    """Skipped files and folders are counted with their reason on the summary line, so an
    unreadable folder is not passed over without a word (root reads it unless its capabilities
    are dropped, as any user's process would read)."""
    root = tmp_path / "repo"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".codesearch"))
    (root / "secret").mkdir()
    (root / "secret" / "hidden.py").write_text("def hidden():\n    return 1\n")
    (root / "secret").chmod(0)
    prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    try:
        done = subprocess.run([*prefix, sys.executable, "-m", "codesearch.cli", "index", str(root), "--no-daemon",
                               "--no-vectors"], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    finally:
        (root / "secret").chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert "1 unreadable" in done.stdout + done.stderr
