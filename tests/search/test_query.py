"""Query: the text parsed once, a report's shape only for a report."""

from __future__ import annotations

from codesearch.analysis.query_shape import shape_of
from codesearch.analysis.tokens import query_terms
from codesearch.filters import Filters
from codesearch.search.query import Query


def test_a_question_has_terms_and_no_shape():
    query = Query.parse("  who calls parse_config  ", "keyword", Filters(language="python"))
    assert query.text == "who calls parse_config"
    assert (query.mode, query.filters.language) == ("keyword", "python")
    assert not query.long and query.shape is None and not query.symbol
    assert query.terms == tuple(query_terms("who calls parse_config"))


def test_a_report_has_its_shape_and_a_name_is_a_symbol():
    report = "Crash on save\n\nTraceback (most recent call last):\n  File \"app/views.py\", line 3, in save\n"
    query = Query.parse(report)
    assert query.long and query.shape == shape_of(report.strip())
    assert Query.parse("Inventory.add_item").symbol
