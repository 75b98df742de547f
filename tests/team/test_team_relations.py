"""The team store's callers and callees are the local index's: the same chunks at the same hops
on the same repository, a recursive function among its own callers, a cycle walked once, and a
named definition that calls another of the same name not among the answers."""

from __future__ import annotations

import pytest
from team_helpers import index, store_fixture, write  # noqa: F401 - the store fixture

from codesearch.config import Settings
from codesearch.search.relations import definitions_named, neighbours
from codesearch.search.requests import RelationsRequest
from codesearch.store.call_graph import CallGraph
from codesearch.team.team_search import TeamSearcher

LOOPS = {
    "pkg/loops.py": '''def ping(n):
    if n:
        return pong(n - 1)
    return 0


def pong(n):
    return ping(n)


def factorial(n):
    return n * factorial(n - 1) if n else 1


def run():
    return ping(3) + factorial(4)
''',
    "pkg/steps.py": '''class Right:
    def step(self):
        return factorial(2)


class Left:
    def step(self):
        return Right().step()


def drive():
    return Left().step()
''',
}
NAMES = ("ping", "pong", "factorial", "run", "step", "drive")


@pytest.fixture(name="local", scope="module")
def local_fixture(tmp_path_factory):
    from conftest import keyword_indexed_files
    opened = keyword_indexed_files(tmp_path_factory.mktemp("local"), LOOPS)
    yield opened
    opened.close()


def local_relations(index, name: str, direction: str, depth: int) -> list[tuple[str, int]]:
    found = neighbours(CallGraph(index.catalog), definitions_named(index.catalog, name), direction, depth)
    return sorted((r.id, r.depth) for r in found)


def team_relations(store, name: str, direction: str, depth: int) -> list[tuple[str, int]]:
    answer = TeamSearcher(store, Settings(), None).relations(RelationsRequest(name=name, direction=direction,
                                                                              depth=depth))
    return sorted((r.id, r.depth) for r in answer.results)


@pytest.mark.parametrize("direction", ["callers", "callees"])
def test_team_relations_are_the_local_ones_through_recursion_and_cycles(store, local, tmp_path, direction):
    index(store, write(tmp_path / "loops", LOOPS), "loops")
    for name in NAMES:
        for depth in (1, 2, 3):
            assert team_relations(store, name, direction, depth) == local_relations(local, name, direction, depth), \
                (name, depth)


def test_a_recursive_function_is_its_own_caller_and_a_cycle_is_walked_once(store, local, tmp_path):
    index(store, write(tmp_path / "loops", LOOPS), "loops")
    ids = {name: definitions_named(local.catalog, name)[0] for name in ("factorial", "pong", "run")}
    assert (ids["factorial"], 1) in team_relations(store, "factorial", "callers", 1)
    assert team_relations(store, "ping", "callers", 3) == sorted([(ids["pong"], 1), (ids["run"], 1)])


@pytest.mark.parametrize("query", ["who calls factorial", "what does drive call", "callers of ping"])
def test_a_relation_search_ranks_as_the_local_one(store, local, tmp_path, query):
    """The answers first, by hops, then the keyword list's other results as context, in the local order."""
    from codesearch.search.requests import SearchRequest
    from codesearch.search.searcher import Searcher
    index(store, write(tmp_path / "loops", LOOPS), "loops")
    request = SearchRequest(query=query, mode="keyword", retrievers=("keyword", "graph"), limit=20)
    team = TeamSearcher(store, Settings(), None).search(request)
    mine = Searcher(local).search(request)
    assert [(r.id, r.sources.get("graph")) for r in team.results] == \
        [(r.id, r.sources.get("graph")) for r in mine.results]
