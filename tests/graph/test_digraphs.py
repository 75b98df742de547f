"""The store's graph as NetworkX DiGraphs: a neighbourhood is the part of the repository's graph
within its hops, calls say how they were resolved, and guessed calls appear only where relations
follow them."""

from __future__ import annotations

import networkx as nx
import pytest
from conftest import keyword_indexed_sample

from codesearch.config import load_settings
from codesearch.graph import neighbourhood, repository_graph
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    index = keyword_indexed_sample(tmp_path_factory.mktemp("graph"), "python")
    yield index
    index.close()


@pytest.fixture(scope="module")
def whole(index) -> nx.DiGraph:
    return repository_graph(index)


def node_named(graph: nx.DiGraph, qualified_name: str) -> str:
    return next(n for n, data in graph.nodes(data=True) if data["qualified_name"] == qualified_name)


def test_the_repository_graph_holds_every_chunk_and_every_stored_edge(index, whole):
    assert whole.number_of_nodes() == index.catalog.files.chunk_count()
    main, parse = node_named(whole, "main"), node_named(whole, "parse_config")
    assert whole.nodes[parse] == {"path": "config.py", "name": "parse_config", "qualified_name": "parse_config",
                                  "kind": "function", "start_line": whole.nodes[parse]["start_line"],
                                  "end_line": whole.nodes[parse]["end_line"]}
    assert whole.edges[main, parse] == {"kind": "calls", "weight": 1.0, "resolution": "import"}
    module, config = node_named(whole, "inventory.py"), node_named(whole, "config.py")
    assert whole.edges[module, config] == {"kind": "imports", "weight": 1.0}
    assert whole.edges[module, main] == {"kind": "calls,contains", "weight": 2.0, "resolution": "exact"}
    kinds = {kind for _, _, data in whole.edges(data=True) for kind in data["kind"].split(",")}
    assert kinds == {"calls", "imports", "contains"}


@pytest.mark.parametrize("hops", [0, 1, 2, 3])
@pytest.mark.parametrize("names", [["Inventory.total_value"], ["clamp", "Item"], ["inventory.py"]])
def test_a_neighbourhood_is_the_repository_graph_within_its_hops(index, whole, hops, names):
    seeds = [node_named(whole, name) for name in names]
    undirected = whole.to_undirected(as_view=True)
    expected = set().union(*(nx.single_source_shortest_path_length(undirected, s, cutoff=hops) for s in seeds))
    got = neighbourhood(index, seeds, hops)
    assert set(got.nodes) == expected
    assert dict(got.nodes(data=True)) == {n: whole.nodes[n] for n in expected}
    assert {(u, v): d for u, v, d in got.edges(data=True)} == \
        {(u, v): d for u, v, d in whole.subgraph(expected).edges(data=True)}


def test_a_neighbourhood_takes_the_catalog_and_skips_unknown_ids(index, whole):
    seed = node_named(whole, "clamp")
    assert set(neighbourhood(index.catalog, [seed, "0" * 16], 1).nodes) == set(neighbourhood(index, [seed], 1).nodes)
    assert neighbourhood(index, ["0" * 16]).number_of_nodes() == 0


def test_guessed_calls_are_in_a_neighbourhood_only(tmp_path):
    root = tmp_path / "repo"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / "one.py").write_text("def helper():\n    return 1\n")
    (root / "b" / "two.py").write_text("def helper():\n    return 2\n")
    (root / "run.py").write_text("def run():\n    return helper()\n")
    index = Index(root, load_settings(root), create=True)
    try:
        Indexer(index).run(embed=False)
        whole = repository_graph(index)
        run = node_named(whole, "run")
        helpers = sorted(n for n, d in whole.nodes(data=True) if d["name"] == "helper")
        assert len(helpers) == 2 and not any(whole.has_edge(run, h) for h in helpers)
        near = neighbourhood(index, [run], 1)
        assert {h: near.edges[run, h]["resolution"] for h in helpers} == dict.fromkeys(helpers, "name-only")
        assert sum(near.edges[run, h]["weight"] for h in helpers) == pytest.approx(0.5)
        assert not any(neighbourhood(index, [run], 1, guesses=False).has_edge(run, h) for h in helpers)
    finally:
        index.close()
