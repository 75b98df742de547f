"""Text that crosses the program's edge: what a client's text must be to be taken, and how any text
is shown on a terminal. Imports nothing: the CLI's fast path uses both."""

from __future__ import annotations

import re

# shown escaped on a terminal: C0 and C1 controls and DEL (U+009B alone starts an escape sequence
# on many terminals), the bidirectional controls (U+202E shows a name backwards), lone surrogates
_UNSAFE_ON_TERMINAL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """Why a client's text cannot be used, or None: a NUL (C libraries and SQLite stop there), or
    a lone surrogate (JSON's "\\ud800", or a command-line argument that was not UTF-8), which
    cannot be written out as UTF-8."""
    if "\0" in text:
        return "holds a NUL character"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "is not valid UTF-8 text"
    return None


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def for_terminal(text: str) -> str:
    """`text` with every control, bidirectional control and lone surrogate written as `\\xNN` or
    `\\uNNNN`: a file or folder name cannot move the cursor, recolour the screen or show itself
    reversed. The index's stored form of a name (paths.escape_name) escapes C0 controls already;
    this covers the rest, and any text that did not come from the index."""
    return _UNSAFE_ON_TERMINAL.sub(_escaped, text)
