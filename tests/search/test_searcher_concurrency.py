"""Many threads searching one Searcher at once get exactly the answers of one thread alone:
no shared connection, no lock, and the graph loaded once."""

from __future__ import annotations

import shutil
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import SAMPLES

from codesearch.api.types import SearchRequest
from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.retrievers.retriever import Hits
from codesearch.search.searcher import Searcher

QUERIES = ["compute_backoff", "retry delay with exponential backoff", "who calls parse_config", "Inventory",
           "parse a key value config file", "clamp", "total value of the items", "what does main call"]


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    root = tmp_path_factory.mktemp("concurrent") / "repo"
    for language in ("python", "go", "rust"):
        shutil.copytree(SAMPLES / language, root / language, ignore=shutil.ignore_patterns(".codesearch"))
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)  # keyword and graph: no model needed
    yield Searcher(index)
    index.close()


def _answer(searcher: Searcher, query: str, mode: str) -> list[tuple]:
    answer = searcher.search(SearchRequest(query=query, mode=mode, limit=10))
    return [(r.id, r.score, tuple(sorted(r.sources.items()))) for r in answer.results]


@pytest.mark.parametrize("mode", ["keyword", "graph", "hybrid"])
def test_concurrent_searches_equal_sequential_ones(searcher, mode):
    jobs = [(q, mode) for q in QUERIES] * 6
    alone = {job: _answer(searcher, *job) for job in set(jobs)}
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(lambda job: (job, _answer(searcher, *job)), jobs))
    for job, answer in together:
        assert answer == alone[job], job
    assert any(alone.values())


def test_the_graph_starts_from_the_keyword_list_without_waiting_for_the_vector_side(searcher, monkeypatch):
    """The graph retriever is seeded by the keyword list alone: it runs while a slow vector search
    is still under way, and the answer fuses all three lists."""
    events: list[str] = []
    vector, graph = searcher.retriever("vector"), searcher.retriever("graph")
    real_graph = graph.search

    def slow_vector(query, limit, earlier):
        time.sleep(0.3)
        events.append("vector done")
        return Hits(ids=["no-such-chunk"], note="")

    def watched_graph(query, limit, earlier):
        events.append("graph starts" + (" (vector list in)" if "vector" in earlier else ""))
        return real_graph(query, limit, earlier)

    monkeypatch.setattr(vector, "search", slow_vector)
    monkeypatch.setattr(graph, "search", watched_graph)
    answer = searcher.search(SearchRequest(query="compute_backoff", mode="hybrid", limit=10))
    assert events == ["graph starts", "vector done"]
    assert set(answer.timing_ms) >= {"keyword", "vector", "graph"} and answer.results
