"""Pathological input is skipped with a reason instead of taking the indexer's time."""

from __future__ import annotations

import pytest
from conftest import extract_text

from codesearch.ingest.extract import SkipFile
from codesearch.ingest.parsing import MAX_SYNTAX_DEPTH

DEEP = 20_000  # past the bound, far below what the issue measured (50,000 calls took 12-21 s)


@pytest.mark.parametrize("rel, text", [
    ("nested_calls.py", "x = " + "f(\n" * DEEP + "1" + ")\n" * DEEP),
    ("nested_lists.py", "x = " + "[\n" * DEEP + "1" + "]\n" * DEEP),
    ("parens.js", "var a = " + "(\n" * DEEP + "1" + ")\n" * DEEP + ";\n"),
    ("nested.rs", "fn main() { let x = " + "vec![\n" * DEEP + "1" + "]\n" * DEEP + "; }\n"),
])
def test_a_file_nested_past_the_bound_is_skipped_as_too_complex(rel, text):
    with pytest.raises(SkipFile) as info:
        extract_text(rel, text)
    assert info.value.reason == "too_complex" and str(MAX_SYNTAX_DEPTH) in str(info.value)


def test_deep_but_real_nesting_is_indexed_whole():
    """Twice the deepest tree of the benchmark's 4,756 files (146 levels) is still code."""
    depth = 60  # each nested call adds a few syntax levels
    source = "def outer():\n    return " + "wrap(" * depth + "leaf()" + ")" * depth + "\n"
    result = extract_text("deep.py", source)
    assert [c.name for c in result.chunks if c.kind == "function"] == ["outer"]
    assert sum(1 for _, _, name, *_ in result.calls if name == "wrap") == depth



def test_a_walk_that_overflows_the_stack_skips_the_file(monkeypatch):
    """A file whose parse overflows the stack is skipped with its reason, as a file nested too
    deep is (the indexer lists it and goes on), not raised to the end of the whole index."""
    from codesearch.ingest import extract as extract_module

    def overflowing(rel, data, spec):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(extract_module, "parse_source", overflowing)
    with pytest.raises(SkipFile) as info:
        extract_text("chain.py", "x = 1\n")
    assert info.value.reason == "too_complex"


def test_a_long_chain_of_values_made_from_each_other_keeps_short_hints():
    """`v1 := v0.Next()`, `v2 := v1.Next()`, ...: each value's hint would hold every call before
    it, stored and followed again at each call (hints growing with the square of the chain);
    past MAX_STEPS methods the value is not known, and near its start it still is."""
    from codesearch.ingest.call_chains import MAX_STEPS, STEP
    length = 4 * MAX_STEPS
    source = ("package main\n\nfunc run(b *Builder) {\n\tv0 := b.Start()\n"
              + "".join(f"\tv{i} := v{i - 1}.Next()\n" for i in range(1, length)) + "}\n")
    hints = [hint for _, _, name, _, hint, _ in extract_text("chain.go", source).calls if name == "Next"]
    assert len(hints) == length - 1
    assert max(hint.count(STEP) for hint in hints) <= MAX_STEPS
    assert hints[0] != "" and STEP in hints[2]


def test_a_name_bound_to_many_values_keeps_short_hints():
    """`x1, err := open1()`, `x2, err := open2()`, ...: err's hint lists the values it may hold
    where resolution is to tell which agree; past MAX_ONE_OF of them it is not known, instead of
    each call on err storing them all (hints growing with the square of the function's length)."""
    from codesearch.ingest.call_chains import MAX_ONE_OF, ONE_OF
    count = 4 * MAX_ONE_OF
    source = ("package main\n\ntype E struct{}\n\nfunc (e *E) Error() string { return \"\" }\n\n"
              + "".join(f"func open{i}() (int, *E) {{ return 0, nil }}\n\n" for i in range(count))
              + "func run() {\n" + "".join(f"\tx{i}, err := open{i}()\n\t_ = err.Error()\n" for i in range(count))
              + "}\n")
    hints = [hint for _, _, name, _, hint, _ in extract_text("errs.go", source).calls if name == "Error"]
    assert len(hints) == count
    assert max(hint.count(ONE_OF) for hint in hints) < MAX_ONE_OF
