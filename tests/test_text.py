"""Client text and terminal text (codesearch/text.py)."""

from __future__ import annotations

import pytest

from codesearch.text import for_terminal, text_problem


@pytest.mark.parametrize(("text", "problem"), [
    ("retry backoff", None),
    ("naïve café → ok", None),
    ("tab\tand newline\n", None),
    ("a\0b", "holds a NUL character"),
    ("\ud800", "is not valid UTF-8 text"),  # a lone surrogate from JSON's escape
    ("a\udcffb", "is not valid UTF-8 text"),  # a command-line byte that was not UTF-8
])
def test_text_problem(text, problem):
    assert text_problem(text) == problem


@pytest.mark.parametrize(("name", "shown"), [
    ("src/main.py", "src/main.py"),
    ("café/naïve.py", "café/naïve.py"),
    ("csi\u009b31m.py", "csi\\u009b31m.py"),  # C1 CSI: an escape sequence on many terminals
    ("evil\u202etxt.exe", "evil\\u202etxt.exe"),  # shown reversed otherwise
    ("a\u2066b\u2069\u200e\u200f\u061c", "a\\u2066b\\u2069\\u200e\\u200f\\u061c"),
    ("esc\x1b[2J\x07\x7f", "esc\\x1b[2J\\x07\\x7f"),
    ("byte\udcff", "byte\\udcff"),  # would not even encode
])
def test_for_terminal_escapes_controls_bidi_and_surrogates(name, shown):
    assert for_terminal(name) == shown
    assert for_terminal(shown) == shown  # what it writes is safe as it stands
