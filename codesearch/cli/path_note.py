"""The line that says a `--path` filter matched no file at all, so that an empty answer is not
read as "nothing in those files matched". Asked of the tree only when an answer came back empty."""

from __future__ import annotations

import sys

from ..filters import matches_no_file, unmatched_path_line


def note_unmatched_path(roots: list[str], path_glob: str | None) -> None:
    """After an empty answer: say so on stderr when the path filter matched no file in any root."""
    if path_glob and all(matches_no_file(root, path_glob) for root in roots):
        print(f"codesearch: {unmatched_path_line(path_glob)}", file=sys.stderr)
