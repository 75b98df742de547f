"""A pasted error message lands on the statement that raises it: the keyword index's phrases
(store/keywords.py phrase_counts) and the searcher's exact-text step, end to end."""

from __future__ import annotations

import pytest
from conftest import keyword_indexed_sample

from codesearch.filters import Filters
from codesearch.search.query import Query
from codesearch.search.requests import SearchRequest
from codesearch.search.searcher import Searcher


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    index = keyword_indexed_sample(tmp_path_factory.mktemp("exact"), "python")
    yield index
    index.close()


def test_phrase_counts_count_the_phrases_each_chunk_holds(index):
    phrases = Query.parse("ValueError: inventory is full").phrases
    counts = index.catalog.keywords.phrase_counts(phrases, Filters(), 10)
    assert counts and counts[0][1] == len(phrases)
    holder = index.catalog.files.chunks_by_ids([counts[0][0]])[counts[0][0]]
    assert holder.path == "inventory.py" and holder.name == "add_item"
    assert index.catalog.keywords.phrase_counts(phrases, Filters(language="rust"), 10) == []


@pytest.mark.parametrize("side_by_side", [True, False])
def test_a_pasted_message_finds_its_raise_site_first(index, side_by_side):
    answer = Searcher(index).search(SearchRequest(query="ValueError: inventory is full", mode="keyword",
                                                  explain=True), side_by_side=side_by_side)
    top = answer.results[0]
    assert (top.path, top.name) == ("inventory.py", "add_item")
    assert any("word for word" in note for note in top.explain or ())
