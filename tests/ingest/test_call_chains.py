"""The pieces a receiver that is a call is read with (ingest/call_chains.py): split at the dots
outside brackets and strings, the result meant of a call that returns several, what a
declaration of several names binds each to, a range loop's element types, values made of a type."""

from __future__ import annotations

import pytest

from codesearch.ingest.call_chains import assigned, called, element_type, is_chain, made_type, parts, positioned


@pytest.mark.parametrize(("text", "expected"), [
    ("a.b(x.y).c()", ["a", "b(x.y)", "c()"]),
    ('r.Path("/a.b").Name(n)', ["r", 'Path("/a.b")', "Name(n)"]),
    ('f(")").g', ['f(")")', "g"]),  # a bracket in a string opens or closes nothing
    ("m['['].Get()", ["m['[']", "Get()"]),
    ('f("\\"").g', ['f("\\"")', "g"]),  # an escaped quote does not end the string
    ("new(Route).Host(h)", ["new(Route)", "Host(h)"]),
    ("plain", ["plain"]),
])
def test_parts_split_at_the_dots_outside_brackets_and_strings(text: str, expected: list[str]) -> None:
    assert parts(text) == expected


def test_positioned_reads_the_result_meant() -> None:
    assert positioned("f(x)#1") == ("f(x)", 1)
    assert positioned("f(x)") == ("f(x)", 0)
    assert positioned("NewRouter()@>Path#12") == ("NewRouter()@>Path", 12)


def test_assigned_binds_each_name_of_a_declaration_to_its_result() -> None:
    assert assigned("route", "route, err := f(x)") == "f(x)"
    assert assigned("err", "route, err := f(x)") == "f(x)#1"
    assert assigned("other", "route, err := f(x)") == ""  # the declaration does not name it
    assert assigned("v", "k, v := range m") == "range m#1"
    assert assigned("x", "Route") == "Route"  # no declaration: the text as it is


@pytest.mark.parametrize(("type_text", "position", "expected"), [
    ("[]*Route", 0, "int"),
    ("[]*Route", 1, "*Route"),
    ("*[4]Route", 1, "Route"),
    ("map[string]*Route", 0, "string"),
    ("map[string]*Route", 1, "*Route"),
    ("map[Key[int]][]Route", 0, "Key[int]"),  # brackets inside the key
    ("map[Key[int]][]Route", 1, "[]Route"),
    ("chan *Route", 0, "*Route"),
    ("<-chan Route", 0, "Route"),
    ("chan Route", 1, ""),
    ("[]Route", 2, ""),
    ("Route", 0, ""),  # not a slice, map or channel
])
def test_element_type_of_a_range_loops_names(type_text: str, position: int, expected: str) -> None:
    assert element_type(type_text, position) == expected


def test_made_type_and_called() -> None:
    assert made_type("new(Route)") == "Route"
    assert made_type("&Route{name: n}") == "Route"
    assert made_type("mux.Router{}") == "mux.Router"
    assert made_type("NewRouter()") is None
    assert called('Path("/x")') == "Path"
    assert called("Path") is None  # a field, no call
    assert called("a.b()") is None  # not the call of one name


def test_is_chain_tells_a_result_or_several_values_from_a_type() -> None:
    assert is_chain("NewRouter()@")
    assert is_chain("Route@>Path")
    assert is_chain("Route@|Other@")
    assert not is_chain("Route@mux")
