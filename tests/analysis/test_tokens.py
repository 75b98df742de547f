"""Code-aware terms for the keyword index and queries."""

from __future__ import annotations

import pytest

from codesearch.analysis.tokens import identifier_terms, index_text, looks_like_symbol, query_terms, split_identifier

# --- tokens ----------------------------------------------------------------------------------

@pytest.mark.parametrize("word, parts", [
    ("getHTTPResponse2", ["get", "http", "response", "2"]),
    ("parse_config", ["parse", "config"]),
    ("XMLHttpRequest", ["xml", "http", "request"]),
    ("computeBackoff", ["compute", "backoff"]),
    ("ComputeBackoff", ["compute", "backoff"]),
    ("MAX_ITEMS", ["max", "items"]),
    ("$scope", ["scope"]),
    ("__init__", ["init"]),
    ("value", ["value"]),
])
def test_split_identifier(word, parts):
    assert split_identifier(word) == parts


def test_identifier_terms():
    assert identifier_terms("parse_config") == ["parseconfig", "parse", "config"]
    assert identifier_terms("getHTTPResponse") == ["gethttpresponse", "get", "http", "response"]
    assert identifier_terms("value") == ["value"]
    assert identifier_terms("ComputeBackoff") == identifier_terms("compute_backoff")
    long = "_".join(["part"] * 20)  # whole term longer than 64 characters: parts only, at most 8
    assert identifier_terms(long) == ["part"] * 8


def test_the_index_leaves_out_terms_of_one_character_and_stopwords():
    text = "for i in range(n): if is_valid(x) and getX(): return 42"
    assert index_text(text).split() == ["range", "isvalid", "valid", "getx", "get", "return", "42"]


def test_query_terms_drop_stopwords_and_split():
    assert query_terms("who calls parse_config") == ["calls", "parseconfig", "parse", "config"]
    assert query_terms("where are the retries with backoff handled") == ["retries", "backoff", "handled"]
    assert query_terms("parse parse_config") == ["parse", "parseconfig", "config"]  # distinct, in order
    assert query_terms("The") == ["the"]  # a lone stopword is kept: it is the whole query
    assert query_terms("the of", drop_stopwords=False) == ["the", "of"]
    assert query_terms("") == []


@pytest.mark.parametrize("query, expected", [
    ("HTTPException", True), ("parse_config", True), ("Foo.bar", True), ("ns::f", True), ("obj->method", True),
    ("Klass#method", True), ("compute_backoff()", True), ("  computeBackoff  ", True), ("$el", True),
    ("retry delay", False), ("", False), ("   ", False), ("1abc", False), ("foo-bar", False), ("foo(", False),
    ("who calls parse_config", False),
])
def test_looks_like_symbol(query, expected):
    assert looks_like_symbol(query) is expected
