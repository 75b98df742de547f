"""A whole bug report as a query, on a real index of sample_repos/python: the file to fix comes
first, although the report talks about tests, quotes a message and pastes a traceback."""

from __future__ import annotations

import shutil

import pytest
from conftest import SAMPLES

from codesearch.api.types import SearchRequest
from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.searcher import Searcher

REPORT = '''Service does not start when a settings line has no value

I added a test for the inventory that starts the service with my own settings file, and the test
fails at start-up. The example in the README works, but only without a settings file. The file has
a line that only names a key, `currency`, and a line `max_items=5`. Output of the test run:

Traceback (most recent call last):
  File "/home/me/shop/inventory.py", line 70, in main
    settings = parse_config("inventory.ini")
  File "/home/me/shop/config.py", line 15, in parse_config
    key, value = _split_line(line)
ValueError: not enough values to unpack (expected 2, got 1)

A line without "=" should be skipped, or fall back to the default.
'''


def indexed(tmp_path_factory, embed: bool):
    root = tmp_path_factory.mktemp("report") / "repo"
    shutil.copytree(SAMPLES / "python", root, ignore=shutil.ignore_patterns(".codesearch"))
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=embed)
    return index


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    """Keyword index and graph: no model needed."""
    index = indexed(tmp_path_factory, embed=False)
    yield Searcher(index)
    index.close()


@pytest.fixture(scope="module")
def embedded_searcher(tmp_path_factory):
    """Vectors too: the hybrid search as it runs by default."""
    index = indexed(tmp_path_factory, embed=True)
    yield Searcher(index)
    index.close()


def files_for(searcher: Searcher, query: str, mode: str) -> list[str]:
    answer = searcher.search(SearchRequest(query=query, mode=mode, limit=5, files=True))
    return [r.path for r in answer.results]


def check_answer(files: list[str]) -> None:
    assert files[0] == "config.py", files
    assert "tests/test_inventory.py" not in files[:2] and "README.md" not in files[:2], files


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_report_finds_the_file_to_fix(searcher, mode):
    check_answer(files_for(searcher, REPORT, mode))


@pytest.mark.slow
def test_a_report_finds_the_file_to_fix_with_vectors(embedded_searcher):
    answer = embedded_searcher.search(SearchRequest(query=REPORT, limit=5, files=True))
    assert answer.partial is None  # the vector retriever took part
    check_answer([r.path for r in answer.results])


def test_the_report_s_test_words_do_not_lift_the_tests(searcher):
    """The test penalty stays on for a report that says "test" (it did not, before)."""
    answer = searcher.search(SearchRequest(query=REPORT, mode="keyword", limit=20, explain=True))
    test_results = [r for r in answer.results if r.path.startswith("tests/")]
    assert test_results and all(any("content class test" in n for n in (r.explain or ())) for r in test_results)
