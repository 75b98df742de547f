"""`codesearch grep` on a copy of the Python sample: every option, the structure and ranking of the
matches, ignore rules, binary files, bad and pathological patterns, non-ASCII text, exit codes."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import SAMPLES, run_cli

from codesearch.api.local import LocalService
from codesearch.api.methods import call
from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.wire import RequestError


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("grep") / "repo"
    shutil.copytree(SAMPLES / "python", root, ignore=shutil.ignore_patterns(".codesearch"))
    (root / "unicode.py").write_text("def façade_helper():\n    return 'naïve café'  # café needle\n",
                                     encoding="utf-8")
    (root / "blob.bin").write_bytes(b"clamp here\n\x00\x01clamp again\n")
    (root / "secret").mkdir()
    (root / "secret" / "hidden.py").write_text("clamp = 1\n")
    (root / ".codesearchignore").write_text("secret/\n")
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)
    index.close()
    return root


@pytest.fixture(scope="module")
def service(repo):
    index = Index(repo, load_settings(repo))
    yield LocalService(index)
    index.close()


def grep(service, **params) -> dict:
    return call(service, "grep", params)


def lines(answer: dict) -> list[tuple[str, int]]:
    return [(m["path"], m["line"]) for m in answer["matches"]]


def test_matches_come_grouped_by_chunk_definition_first_tests_last(service):
    answer = grep(service, pattern="clamp", word=True, explain=True)
    found = lines(answer)
    assert found[0] == ("config.py", 35)  # def clamp(...)
    assert answer["matches"][0]["chunk"] == {"kind": "function", "name": "clamp", "qualified_name": "clamp",
                                             "start_line": 35, "end_line": 37}
    assert answer["matches"][0]["explain"][0] == "defines clamp"
    first_test = next(i for i, (path, _) in enumerate(found) if path.startswith("tests/"))
    assert all(not path.startswith("tests/") for path, _ in found[:first_test])
    assert all(path.startswith("tests/") for path, _ in found[first_test:])
    assert ("inventory.py", 67) in found  # the use inside compute_backoff
    chunk_of = {(m["path"], m["line"]): m["chunk"]["qualified_name"] for m in answer["matches"]}
    assert chunk_of[("inventory.py", 67)] == "compute_backoff"
    assert {f["path"] for f in answer["files"]} == {path for path, _ in found}
    assert answer["total"] == len(found) and answer["truncated"] is False


def test_path_order_when_asked(service):
    found = lines(grep(service, pattern="clamp", word=True, sort="path"))
    assert found == sorted(found)


def test_fixed_word_and_case(service):
    assert grep(service, pattern="max(", fixed=True)["total"] >= 1  # a regex metacharacter, taken literally
    with pytest.raises(RequestError, match="invalid regular expression"):
        grep(service, pattern="max(")
    assert grep(service, pattern="INVENTORY")["total"] == 0
    assert grep(service, pattern="INVENTORY", ignore_case=True)["total"] > 0
    partial = {m["text"] for m in grep(service, pattern="item")["matches"]}
    whole = {m["text"] for m in grep(service, pattern="item", word=True)["matches"]}
    assert whole < partial and any("items" in t for t in partial - whole)


def test_context_lines_before_and_after(service):
    match = grep(service, pattern="def clamp", before=2, after=1)["matches"][0]
    source = (SAMPLES / "python" / "config.py").read_text().split("\n")
    assert match["before"] == source[32:34] and match["after"] == source[35:36]
    assert match["text"] == source[34]


def test_files_counts_language_and_path_filters(service):
    answer = grep(service, pattern="def ")
    counts = {f["path"]: f["count"] for f in answer["files"]}
    assert counts["config.py"] == 4 and counts["inventory.py"] == 11
    assert {f["path"] for f in grep(service, pattern="def ", filters={"path_glob": "tests/*"})["files"]} == {
        "tests/test_inventory.py"}
    assert grep(service, pattern="Inventory", filters={"language": "markdown"})["files"][0]["path"] == "README.md"
    assert {f["path"] for f in grep(service, pattern="def ", paths=["tests"])["files"]} == {"tests/test_inventory.py"}
    assert grep(service, pattern="def ", limit=2)["truncated"] is True


def test_ignore_rules_binary_files_and_the_index_are_left_out(service):
    paths = {f["path"] for f in grep(service, pattern="clamp")["files"]}
    assert "blob.bin" not in paths  # binary
    assert "secret/hidden.py" not in paths  # .codesearchignore
    assert not any(p.startswith("build/") for p in {f["path"] for f in grep(service, pattern="def")["files"]})
    assert not any(p.startswith(".codesearch") for p in {f["path"] for f in grep(service, pattern="SQLite")["files"]})


def test_non_ascii_lines_report_character_columns(service):
    match = grep(service, pattern="needle")["matches"][0]
    assert match["path"] == "unicode.py" and match["text"] == "    return 'naïve café'  # café needle"
    assert match["text"][match["column"] - 1:].startswith("needle")
    assert grep(service, pattern="façade")["matches"][0]["column"] == 5


@pytest.mark.parametrize("pattern, message", [
    ("(unclosed", "invalid regular expression"),
    (r"\w{1000}{1000}", "size limit"),
])
def test_bad_patterns_get_one_line(service, pattern, message):
    with pytest.raises(RequestError, match=message):
        grep(service, pattern=pattern)


def test_pathological_patterns_finish(service):
    assert grep(service, pattern="(a*)*b")["timing_ms"]["total"] < 5000  # no backtracking engine


def test_paths_outside_the_repository_are_refused(service):
    with pytest.raises(RequestError, match="outside the repository"):
        grep(service, pattern="x", paths=["../"])


def test_the_command_line(repo):
    done = run_cli("grep", "-w", "clamp", "--repo", str(repo), "--no-daemon")
    assert done.returncode == 0 and done.stdout.startswith("config.py  function clamp\n35:def clamp("), done.stdout
    done = run_cli("grep", "-C", "1", "--vimgrep", "needle", "--repo", str(repo), "--no-daemon")
    assert done.stdout.splitlines() == ["unicode.py:2:33:    return 'naïve café'  # café needle"]
    done = run_cli("grep", "-l", "def ", "tests", "--repo", str(repo), "--no-daemon")
    assert done.stdout.splitlines() == ["tests/test_inventory.py"]
    done = run_cli("grep", "-c", "-F", "max(", "--repo", str(repo), "--no-daemon")
    assert done.stdout.splitlines() == ["config.py:1"]
    answer = json.loads(run_cli("grep", "--json", "clamp", "--repo", str(repo), "--no-daemon").stdout)
    assert set(answer) >= {"pattern", "matches", "timing_ms"}
    assert set(answer["matches"][0]) >= {"path", "line", "column", "text", "chunk", "before", "after"}
    assert run_cli("grep", "zzz_nothing_zzz", "--repo", str(repo), "--no-daemon").returncode == 1
    bad = run_cli("grep", "(", "--repo", str(repo), "--no-daemon")
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0 and "invalid regular expression" in bad.stderr
