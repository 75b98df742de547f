"""The keyword retriever's bounded work: in a very large index, a query's most common terms are
left out while their postings exceed the budget (the rarest always kept)."""

from __future__ import annotations

import pytest
from conftest import keyword_indexed_sample

from codesearch.search.retrievers import keyword as keyword_module
from codesearch.search.retrievers.keyword import KeywordRetriever
from codesearch.vocabulary import Filters


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    index = keyword_indexed_sample(tmp_path_factory.mktemp("keyword"), "python")
    yield index.catalog
    index.close()


def test_common_terms_are_left_out_past_the_budget_and_the_rarest_stays(catalog, monkeypatch):
    retriever = KeywordRetriever(catalog)
    frequency = retriever.document_frequencies(["return", "backoff"])
    assert frequency["return"] > frequency["backoff"] > 0
    assert retriever.within_budget(["return", "backoff"]) == ["return", "backoff"]  # a small index: all
    monkeypatch.setattr(keyword_module, "POSTINGS_BUDGET", frequency["backoff"])
    assert retriever.within_budget(["return", "backoff", "return"]) == ["backoff"]
    monkeypatch.setattr(keyword_module, "POSTINGS_BUDGET", 0)
    assert retriever.within_budget(["return", "backoff"]) == ["backoff"]  # never nothing
    hits = retriever.search("return the backoff", 10, Filters(), {})
    assert hits.ids  # searched by "backoff" alone


def test_term_counts_are_counted_again_after_a_reindex(catalog):
    retriever = KeywordRetriever(catalog)
    before = retriever.document_frequencies(["backoff"])["backoff"]
    with catalog.transaction():
        catalog.set_meta("last_index_time", "another run")
    assert retriever._counts[0] != "another run"
    assert retriever.document_frequencies(["backoff"])["backoff"] == before
    assert retriever._counts[0] == "another run"
