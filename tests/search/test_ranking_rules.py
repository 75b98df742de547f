"""Each ranking rule on a real index of sample_repos/ranking (tree-sitter, SQLite, the call graph
keyword and graph retrievers, so no model): the result that
comes first with the rule, and that another one does without it. The fixture's files are
shaped so that the rule under test decides; `alone` switches off other steps where they would
decide the same question."""

from __future__ import annotations

import pytest
from conftest import keyword_indexed_sample

from codesearch.search.ranking import RankingOptions
from codesearch.search.requests import SearchRequest
from codesearch.search.searcher import Searcher


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    index = keyword_indexed_sample(tmp_path_factory.mktemp("ranking"), "ranking")
    yield Searcher(index)
    index.close()


def first(searcher: Searcher, query: str, **changes) -> tuple[str, str]:
    """(path, name) of the first result, with these RankingOptions changed from the defaults."""
    options = RankingOptions()
    for name, value in changes.items():
        setattr(options, name, value)
    answer = searcher.search(SearchRequest(query=query, limit=5, retrievers=("keyword", "graph"), ranking=options))
    return answer.results[0].path, answer.results[0].name


@pytest.mark.parametrize("query, rule, neutral, expected, alone", [
    # a name written as code in a query of words: its definition, not the file that talks most about reports
    ("stock reports with format_amount", "identifier_factor", 1.0, ("shop/money.py", "format_amount"), {}),
    # words that spell a file's name ("price list" -> price_list.py) over a function named with them
    ("price list lookups", "joined_stem_factor", 1.0, ("shop/price_list.py", "price_list.py"), {}),
    # the definition a file is named after, when the query names it
    ("Session and checkout", "main_definition_factor", 1.0, ("shop/session.py", "Session"), {}),
    # a query word that a path word begins (lockfile ~ lock.py)
    ("lockfile pins", "prefix_chars", 0, ("shop/lock.py", '"""Pinned versions of the shop\'s suppliers."""'), {}),
    # a file with many matching chunks over one with a single slightly better one
    ("adding items", "coherence_share", 0.0, ("shop/legacy.py", "add_to_cart"), {}),
    # symbols: the definition outside the tests, though the test's fake ranks higher before tiers
    ("Session", "symbol_test_demotion", 0.0, ("shop/session.py", "Session"),
     {"test_penalty": False, "file_coherence": False, "symbol_stem_bonus": 0.0}),
    # symbols: the definition in the file named after it, over an older copy elsewhere
    ("Cart", "symbol_stem_bonus", 0.0, ("shop/cart.py", "Cart"), {"name_path_boost": False}),
])
def test_rule_decides_what_comes_first(searcher, query, rule, neutral, expected, alone):
    assert first(searcher, query, **alone) == expected
    assert first(searcher, query, **alone, **{rule: neutral}) != expected


@pytest.mark.parametrize("query, expected", [("refunds and exchanges", "shop/refunds.py"),
                                             ("exchanges and refunds", "shop/exchanges.py")])
def test_the_subject_named_first_comes_first(searcher, query, expected):
    """refunds.py and exchanges.py hold the same code: the query's word order decides, and
    without the decay the two queries answer alike."""
    assert first(searcher, query)[0] == expected
    without = {first(searcher, q, word_decay=1.0)[0] for q in ("refunds and exchanges", "exchanges and refunds")}
    assert len(without) == 1


def test_every_rule_step_can_be_switched_off(searcher):
    """RankingOptions.off() is the fused order: no step of the ranking runs."""
    options = RankingOptions.off()
    answer = searcher.search(SearchRequest(query="stock reports with format_amount", limit=5,
                                           retrievers=("keyword",), ranking=options, explain=True))
    assert answer.results and all(not r.explain for r in answer.results)
