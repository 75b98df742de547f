"""The JSON Schema a request record publishes (OpenAPI, MCP) accepts exactly what the record's
own check accepts: each case is put to both, and both must agree."""

from __future__ import annotations

import jsonschema
import pytest

from codesearch.api.methods import METHODS
from codesearch.wire import RequestError, is_blank, json_schema

CASES = [
    ("callers", {}), ("callers", {"name": ""}), ("callers", {"name": " \t"}), ("callers", {"name": "\u3000"}),
    ("callers", {"name": "\x1c"}), ("callers", {"id": ""}), ("callers", {"id": "0123abcd"}),
    ("callers", {"name": "", "id": "0123abcd"}), ("callers", {"name": "main", "id": "0123abcd"}),
    ("callers", {"name": "main", "depth": 2.0}), ("callers", {"name": "main", "depth": 2.5}),
    ("callers", {"name": "ma\0in"}), ("impact", {"id": None}), ("impact", {"name": "main", "limit": 509.0}),
    ("read", {}), ("read", {"path": "config.py"}), ("read", {"id": "0123abcd"}),
    ("read", {"path": "config.py", "id": "0123abcd"}), ("read", {"path": None, "id": None}),
    ("read", {"path": "config.py", "id": None}), ("read", {"path": None, "id": "0123abcd"}),
    ("read", {"id": "0123abcd", "start_line": 3}), ("read", {"path": ""}), ("read", {"path": "\u2003"}),
    ("read", {"path": "config.py", "start_line": 9, "end_line": 8}), ("read", {"path": "config.py", "end_line": 0}),
    ("search", {"query": "x", "limit": 10.0}), ("search", {"query": " "}), ("search", {"query": "\x1f"}),
    ("search", {"query": "x", "filters": {"language": "py\0"}}), ("search", {"query": "x", "mode": "psychic"}),
    ("search", {"query": "x", "limit": 1001}), ("definition", {"name": "\u2003"}), ("definition", {"name": "a b"}),
    ("grep", {"pattern": "a\nb"}), ("grep", {"pattern": "a\rb"}), ("grep", {"pattern": "x", "paths": ["a\0"]}),
    ("symbols", {"query": "pa", "limit": 51.0}), ("references", {"name": "x", "limit": 10_001}),
]


@pytest.mark.parametrize("method, params", CASES)
def test_the_published_schema_and_the_check_agree(method, params):
    record = METHODS[method].request
    try:
        record.from_dict(params)
        accepted = True
    except RequestError:
        accepted = False
    valid = jsonschema.Draft202012Validator(json_schema(record)).is_valid(params)
    assert valid == accepted, ("schema valid" if valid else "schema invalid", "accepted" if accepted else "refused")


@pytest.mark.parametrize("text, blank", [
    ("", True), (" \t\r\n\x0b\x0c", True), ("\xa0\u2003\u3000\u2028", True), ("\x1c", False), ("\ufeff", False),
    (" a ", False),
])
def test_blank_is_unicode_white_space_as_every_regex_engine_reads_it(text, blank):
    assert is_blank(text) is blank
