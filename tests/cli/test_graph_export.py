"""`codesearch graph export`: the whole graph or a neighbourhood, in each format, to stdout or a
file; a repository without an index and an unknown name are refused in a line."""

from __future__ import annotations

import json

import pytest
from conftest import keyword_indexed_sample, run_cli


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    index = keyword_indexed_sample(tmp_path_factory.mktemp("graph-cli"), "python")
    root = index.root
    index.close()
    return root


def test_the_whole_graph_as_node_link_json(repo):
    done = run_cli("graph", "export", "--format", "json", "--repo", str(repo))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    names = {node["qualified_name"] for node in data["nodes"]}
    assert {"main", "parse_config", "Inventory.total_value", "config.py"} <= names
    assert data["directed"] and any(edge["kind"] == "imports" for edge in data["edges"])


def test_a_neighbourhood_as_dot_in_a_file(repo, tmp_path):
    out = tmp_path / "clamp.dot"
    done = run_cli("graph", "export", "clamp", "--depth", "1", "--format", "dot", "--repo", str(repo), "-o", str(out))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    text = out.read_text()
    assert text.startswith("digraph codesearch {\n") and text.endswith("}\n")
    labels = {line.split('label="')[1].split('"')[0] for line in text.splitlines() if "label=" in line}
    assert labels == {"clamp", "compute_backoff", "test_clamp", "config.py"}


@pytest.mark.parametrize("args, code, message", [
    (["Nope"], 1, "codesearch: no definition named 'Nope' in the index of "),
    (["--depth", "1"], 2, "codesearch: --depth counts hops from the definitions of NAME"),
])
def test_refusals_take_one_line(repo, args, code, message):
    done = run_cli("graph", "export", *args, "--repo", str(repo))
    assert done.returncode == code and done.stdout == ""
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1


def test_a_repository_without_an_index_is_refused_in_a_line(tmp_path):
    done = run_cli("graph", "export", "--repo", str(tmp_path))
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "has no index yet" in done.stderr
