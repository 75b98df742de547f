"""The graph retriever's seeds (search/retrievers/graph.py), which the team store's graph list
shares: the words that may name definitions, their joined forms, and PageRank's personalization."""

from __future__ import annotations

from codesearch.search.query import Query
from codesearch.search.retrievers.graph import NAMED_SEED_WEIGHT, joined_terms, named_words, seed_weights


def test_a_question_s_words_and_their_joined_forms_may_name_definitions():
    words = named_words(Query.parse("where is parse_config called"))
    assert {"parse_config", "where", "called"} <= words
    assert "parseconfig" in joined_terms(words) and "parse" not in joined_terms(words)


def test_named_definitions_and_a_list_s_hits_add_up_and_nodes_outside_the_graph_are_left_out():
    rids = {"a": 0, "b": 1, "c": 2}
    weights = seed_weights(["a", "x"], ["b", "a", "y", "c"], rids.get)
    assert weights == {0: NAMED_SEED_WEIGHT + 1 / 2, 1: 1.0, 2: 1 / 4}
