"""Many threads searching one Searcher at once get exactly the answers of one thread alone:
no shared connection, no lock, and the graph loaded once."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import SAMPLES

from codesearch.api.types import SearchRequest
from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
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
