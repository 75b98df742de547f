"""`codesearch chunks`, run as a real subprocess."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

INVENTORY = "sample_repos/python/inventory.py"
README = "sample_repos/python/README.md"
CONTRACT_FIELDS = {"id", "parent_id", "path", "language", "kind", "name", "qualified_name", "signature",
                   "docstring", "start_line", "end_line", "content_hash"}


@pytest.fixture(scope="module")
def json_output():
    result = run_cli("chunks", INVENTORY, README, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_json_has_chunks_with_contract_fields(json_output):
    assert set(json_output) == {"chunks"}
    chunks = json_output["chunks"]
    assert chunks
    for chunk in chunks:
        assert set(chunk) >= CONTRACT_FIELDS, chunk
        assert "text" not in chunk  # only with --text
        assert isinstance(chunk["start_line"], int) and isinstance(chunk["end_line"], int)
        assert chunk["start_line"] <= chunk["end_line"]
    assert {c["path"] for c in chunks} == {INVENTORY, README}
    assert {c["language"] for c in chunks} == {"python", "markdown"}


def test_json_tree_and_values(json_output):
    chunks = [c for c in json_output["chunks"] if c["path"] == INVENTORY]
    ids = {c["id"] for c in chunks}
    file_chunk = chunks[0]
    assert file_chunk["kind"] == "file" and file_chunk["parent_id"] is None
    assert all(c["parent_id"] in ids for c in chunks[1:])
    by_name = {c["qualified_name"]: c for c in chunks}
    backoff = by_name["compute_backoff"]
    assert (backoff["kind"], backoff["name"], backoff["start_line"], backoff["end_line"]) == (
        "function", "compute_backoff", 64, 67)
    assert backoff["signature"] == "def compute_backoff(attempt: int, base: float = 0.5, cap: float = 30.0) -> float"
    assert backoff["docstring"] == "Return the retry delay for an attempt using capped exponential growth."
    assert by_name["Inventory.add_item"]["parent_id"] == by_name["Inventory"]["id"]
    assert len(backoff["content_hash"]) == 32


def test_json_with_text():
    result = run_cli("chunks", INVENTORY, "--json", "--text")
    assert result.returncode == 0, result.stderr
    chunks = {c["qualified_name"]: c for c in json.loads(result.stdout)["chunks"]}
    assert "return clamp(delay, 0.0, cap)" in chunks["compute_backoff"]["text"]


def test_human_output_lists_kinds_and_names():
    result = run_cli("chunks", INVENTORY)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for kind, name in [("file", INVENTORY), ("class", "Inventory"), ("method", "Inventory.add_item"),
                       ("function", "compute_backoff"),
                       ("block", 'if __name__ == "__main__":')]:
        assert any(kind in line and name in line for line in out.splitlines()), (kind, name)
    assert f"{INVENTORY}:64-67" in out
    assert f"{INVENTORY}:81-82" in out


def test_missing_file_exit_1_one_line_no_traceback():
    result = run_cli("chunks", "does/not/exist.py")
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "does/not/exist.py" in lines[0]
    assert "Traceback" not in result.stderr


def test_missing_file_next_to_a_good_one_still_prints_the_good_one():
    result = run_cli("chunks", "does/not/exist.py", INVENTORY, "--json")
    assert "does/not/exist.py" in result.stderr and "Traceback" not in result.stderr
    assert json.loads(result.stdout)["chunks"]


def test_no_arguments_is_a_usage_error():
    result = run_cli()
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_chunks_without_files_is_a_usage_error():
    result = run_cli("chunks")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
