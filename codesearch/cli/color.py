"""Colour on the command line, as ripgrep paints it: whether to (`--color`, `NO_COLOR`, a
terminal) and the escapes for a path, a line number and a match. Light: the fast path imports it."""

from __future__ import annotations

import os

COLOR_CHOICES = ("auto", "always", "never")
PATH, LINE, MATCH, RESET = "\033[35m", "\033[32m", "\033[1;31m", "\033[0m"  # ripgrep's defaults


def use_color(choice: str, stream: object) -> bool:
    """always and never as said; auto: colour on a terminal unless NO_COLOR is set (no-color.org:
    any value but the empty string), as ripgrep does."""
    if choice != "auto":
        return choice == "always"
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def paint(text: str, escape: str) -> str:
    return f"{escape}{text}{RESET}" if text else text


class MatchPainter:
    """Colours every match of a grep pattern in a line. The pattern is ripgrep's syntax, read
    here with Python's `re`, which agrees on what grep patterns commonly use; a pattern `re`
    refuses is left uncoloured rather than guessed at."""

    def __init__(self, pattern: str, fixed: bool, word: bool, ignore_case: bool):
        import re
        body = re.escape(pattern) if fixed else pattern
        if word:
            body = rf"(?<!\w)(?:{body})(?!\w)"
        try:
            self.regex: re.Pattern[str] | None = re.compile(body, re.IGNORECASE if ignore_case else 0)
        except (re.error, OverflowError):
            self.regex = None

    def __call__(self, line: str) -> str:
        if self.regex is None:
            return line
        return self.regex.sub(lambda m: paint(m.group(0), MATCH), line)
