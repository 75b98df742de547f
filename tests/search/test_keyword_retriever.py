"""The keyword retriever's bounded work: in a very large index, past the postings budget, the
chunks holding every term of a question come first, then those of its rarest terms within the
budget (the rarest always kept), the common ones where they name a chunk."""

from __future__ import annotations

import pytest
from conftest import keyword_indexed_sample

from codesearch.filters import Filters
from codesearch.search.query import Query
from codesearch.search.retrievers import keyword as keyword_module
from codesearch.search.retrievers.keyword import KeywordRetriever


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    index = keyword_indexed_sample(tmp_path_factory.mktemp("keyword"), "python")
    yield index.catalog
    index.close()


def test_common_terms_are_left_out_past_the_budget_and_the_rarest_stays(catalog, monkeypatch):
    retriever = KeywordRetriever(catalog)
    frequency = retriever.document_frequencies(["return", "backoff"])
    assert frequency["return"] > frequency["backoff"] > 0
    assert retriever.within_budget(["return", "backoff"]) == (["return", "backoff"], [])  # a small index: all
    named = retriever._named_frequency("return")
    assert 0 < named < frequency["return"]
    monkeypatch.setattr(keyword_module, "POSTINGS_BUDGET", frequency["backoff"] + named // 2)
    # "return" is searched where it names a chunk: that fits twice the budget, its whole postings do not
    assert retriever.within_budget(["return", "backoff", "return"]) == (["backoff"], ["return"])
    monkeypatch.setattr(keyword_module, "POSTINGS_BUDGET", 0)
    assert retriever.within_budget(["return", "backoff"]) == (["backoff"], [])  # never nothing
    hits = retriever.search(Query.parse("return the backoff"), 10, {})
    assert hits.ids  # searched by "backoff" alone


def test_past_the_budget_chunks_holding_every_term_come_first(catalog, monkeypatch):
    retriever = KeywordRetriever(catalog)
    both = [i for i, _ in catalog.keywords.search(["return", "backoff"], (1.0,) * 4, Filters(), 100, every=True)]
    rare = [i for i, _ in catalog.keywords.search(["backoff"], (1.0,) * 4, Filters(), 100)]
    assert both and set(both) < set(rare)  # some chunks say "backoff" without "return"
    monkeypatch.setattr(keyword_module, "POSTINGS_BUDGET", 0)
    hits = retriever.search(Query.parse("return the backoff"), 100, {})
    assert set(hits.ids[:len(both)]) == set(both)
    assert set(hits.ids) == set(rare)  # then the rest of what the rarest term finds, once each
    assert hits.scores == sorted(hits.scores, reverse=True)
    assert retriever.search(Query.parse("return the backoff"), len(both), {}).ids == hits.ids[:len(both)]


def test_term_counts_are_counted_again_after_a_reindex(catalog):
    retriever = KeywordRetriever(catalog)
    before = retriever.document_frequencies(["backoff"])["backoff"]
    counted = retriever._current_counts()[1]
    assert "backoff" in counted
    with catalog.transaction():
        catalog.set_meta("last_index_time", "another run")
    assert retriever.document_frequencies(["backoff"])["backoff"] == before
    assert retriever._current_counts()[1] is not counted  # counted again


def test_a_query_of_only_terms_the_index_leaves_out_searches_nothing(catalog, monkeypatch):
    retriever = KeywordRetriever(catalog)
    assert retriever.search(Query.parse("a"), 10, {}).note == "no searchable words"
    monkeypatch.setattr(keyword_module, "POSTINGS_BUDGET", 0)
    hits = retriever.search(Query.parse("is_backoff"), 10, {})  # "is" is no term of the index: no AND with it
    assert hits.ids


def test_past_the_budget_a_common_term_still_finds_the_chunks_it_names(catalog, monkeypatch):
    retriever = KeywordRetriever(catalog)
    weights = (1.0,) * 4
    both = {i for i, _ in catalog.keywords.search(["return", "backoff"], weights, Filters(), 100, every=True)}
    rare = {i for i, _ in catalog.keywords.search(["backoff"], weights, Filters(), 100)}
    naming = {i for i, _ in catalog.keywords.search([], weights, Filters(), 100, named=["return"])}
    anywhere = {i for i, _ in catalog.keywords.search(["return"], weights, Filters(), 100)}
    assert naming - rare and anywhere - naming - rare  # some chunks are found only by "return" in a name
    monkeypatch.setattr(keyword_module, "POSTINGS_BUDGET", len(rare) + len(naming) // 2)
    hits = retriever.search(Query.parse("return the backoff"), 100, {})
    assert set(hits.ids[:len(both)]) == both
    assert set(hits.ids) == rare | naming  # not the chunks that only say "return" in their body
