"""The methods agents lean on besides search: definition, impact, read, and search's token
budget; each through the API table on a real index, answers checked against the published schema."""

from __future__ import annotations

import json
import shutil

import jsonschema
import pytest
from conftest import SAMPLES

from codesearch.api.local import LocalService
from codesearch.api.methods import METHODS, call
from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.budget import estimate_tokens
from codesearch.wire import RequestError, json_schema


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    root = tmp_path_factory.mktemp("lookup") / "repo"
    shutil.copytree(SAMPLES / "python", root, ignore=shutil.ignore_patterns(".codesearch"))
    (root / "long.py").write_text("".join(f"x{i} = {i}\n" for i in range(2500)))
    (root / "latin1.py").write_bytes(b"name = 'caf\xe9'\n")
    (root / "blob.py").write_bytes(b"\x00\x01\x02binary")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "leak.py").symlink_to("/etc/passwd")
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)
    yield LocalService(index)
    index.close()


def ask(service, method: str, params: dict) -> dict:
    answer = call(service, method, params)
    jsonschema.validate(answer, json_schema(METHODS[method].answer))  # what OpenAPI and MCP publish
    return answer


def test_definition_by_qualified_and_bare_name(service):
    qualified = ask(service, "definition", {"name": "Inventory.Stats"})["definitions"]
    assert [(d["path"], d["kind"], d["qualified_name"]) for d in qualified] == [
        ("inventory.py", "class", "Inventory.Stats")]
    assert qualified[0]["docstring"] == "Summary statistics for an inventory snapshot."
    assert qualified[0]["signature"] == "class Stats"
    bare = ask(service, "definition", {"name": "parse_config"})["definitions"]
    assert bare[0]["start_line"] == 8 and bare[0]["signature"].startswith("def parse_config(path: str)")


def test_an_unknown_name_gets_near_names(service):
    answer = ask(service, "definition", {"name": "parse_confg"})
    assert answer["definitions"] == []
    assert "no definition named 'parse_confg'" in answer["note"] and "parse_config" in answer["note"]
    assert "parse_config" in ask(service, "callers", {"name": "lod_config"})["note"]


def test_an_ambiguous_name_says_so(service):
    answer = ask(service, "callers", {"name": "__init__"})
    assert len(answer["targets"]) > 1
    assert "qualified name to narrow" in answer["note"]
    assert "note" not in ask(service, "callers", {"name": "parse_config"})


def test_impact_groups_transitive_callers_by_file_nearest_first(service):
    answer = ask(service, "impact", {"name": "_split_line"})
    assert answer["depth"] == 3
    assert [f["path"] for f in answer["files"]] == ["config.py", "inventory.py"]
    assert [(c["qualified_name"], c["depth"]) for c in answer["files"][0]["callers"]] == [("parse_config", 1)]
    # main, and the module's `if __name__ == "__main__": main()` that calls it
    assert [(c["qualified_name"], c["depth"]) for c in answer["files"][1]["callers"]] == [
        ("main", 2), ("inventory.py", 3)]
    assert answer["callers"] == 3
    one_hop = ask(service, "impact", {"name": "_split_line", "depth": 1})
    assert [f["path"] for f in one_hop["files"]] == ["config.py"]


def test_read_a_line_range_and_a_chunk(service):
    piece = ask(service, "read", {"path": "config.py", "start_line": 8, "end_line": 9})
    assert piece["text"].startswith("def parse_config(") and piece["text"].count("\n") == 2
    assert (piece["start_line"], piece["end_line"], piece["total_lines"], piece["truncated"]) == (8, 9, 37, False)
    found = call(service, "search", {"query": "compute_backoff", "mode": "keyword", "limit": 1})["results"][0]
    chunk = ask(service, "read", {"id": found["id"]})
    assert chunk["path"] == "inventory.py" and chunk["text"].startswith("def compute_backoff(")
    assert chunk["end_line"] - chunk["start_line"] + 1 == chunk["text"].count("\n")


def test_long_files_are_read_in_pieces_and_bad_bytes_replaced(service):
    first = ask(service, "read", {"path": "long.py"})
    assert (first["end_line"], first["total_lines"], first["truncated"]) == (2000, 2500, True)
    rest = ask(service, "read", {"path": "long.py", "start_line": 2001})
    assert (rest["start_line"], rest["end_line"], rest["truncated"]) == (2001, 2500, False)
    assert ask(service, "read", {"path": "latin1.py"})["text"] == "name = 'caf\ufffd'\n"


@pytest.mark.parametrize("params, message", [
    ({"path": "../outside.py"}, "outside the repository"),
    ({"path": "/etc/passwd"}, "outside the repository"),
    ({"path": "leak.py"}, "outside the repository"),  # a symlink that leaves the root
    ({"path": ".git/config"}, "cannot be read"),
    ({"path": ".codesearch/catalog.sqlite"}, "cannot be read"),
    ({"path": "."}, "cannot be read"),
    ({"path": "blob.py"}, "binary"),
    ({"path": "build"}, "a folder"),
    ({"path": "missing.py"}, "does not exist"),
    ({"path": "config.py", "start_line": 38}, "past its end"),
    ({"path": "config.py", "start_line": 0}, "between 1 and"),
    ({"id": "0000"}, "no chunk with id"),
    ({}, "either a path or a chunk id"),
    ({"path": "config.py", "id": "x"}, "either a path or a chunk id"),
])
def test_read_refuses_what_it_must(service, params, message):
    with pytest.raises(RequestError, match=message):
        call(service, "read", params)


def test_a_range_that_ends_before_it_starts_reads_no_line(service):
    """The published schema cannot compare two fields, so the server takes what it accepts."""
    empty = ask(service, "read", {"path": "config.py", "start_line": 9, "end_line": 8})
    assert (empty["start_line"], empty["end_line"], empty["text"], empty["truncated"]) == (9, 8, "", False)


def test_a_token_budget_shortens_snippets_then_drops_results(service):
    params = {"query": "inventory item value", "mode": "keyword", "limit": 10, "context": 5}
    full = ask(service, "search", params)
    size = estimate_tokens(json.dumps(full, separators=(",", ":"), ensure_ascii=False))
    assert len(full["results"]) >= 4 and "note" not in full
    roomy = ask(service, "search", {**params, "max_tokens": size + 10})
    assert "note" not in roomy and [r["snippet"] for r in roomy["results"]] == [r["snippet"] for r in full["results"]]
    for budget in (size // 2, size // 4):
        fitted = ask(service, "search", {**params, "max_tokens": budget})
        cost = estimate_tokens(json.dumps(fitted, separators=(",", ":"), ensure_ascii=False))
        assert cost <= budget + 30, (cost, budget)  # + the note that says what was cut
        assert "fitted to max_tokens" in fitted["note"]
        assert [r["id"] for r in fitted["results"]] == [r["id"] for r in full["results"]][:len(fitted["results"])]
    tiny = ask(service, "search", {**params, "max_tokens": 1})
    assert len(tiny["results"]) == 1 and tiny["results"][0]["id"] == full["results"][0]["id"]


@pytest.mark.parametrize("name", sorted(METHODS))
def test_published_request_schemas_match_what_is_accepted(name):
    method = METHODS[name]
    schema = json_schema(method.request)
    jsonschema.Draft202012Validator.check_schema(schema)
    for field in schema["properties"]:
        assert field in method.request.__dataclass_fields__, field
    if "limit" in schema["properties"]:
        with pytest.raises(RequestError):
            method.request.from_dict({**dict.fromkeys(schema.get("required", []), "x"), "limit": 0})


def test_status_says_when_answers_may_be_stale():
    fields = json_schema(METHODS["status"].answer)["properties"]
    assert fields["embedded_share"]["type"] == "number" and fields["stale"]["type"] == "boolean"
