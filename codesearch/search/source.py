"""The text of the chunks a search shows, read from their files: the catalog keeps no copy of
the code (README, "Index size"), and the file on disk is what the user opens anyway."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from ..model import Chunk, source_lines
from ..paths import inside

MAX_SHOWN_LINES = 2_000  # a file chunk spans its whole file: a snippet looks at its start only
MAX_READ_BYTES = 4 << 20  # past this a file is not read for a snippet (indexed files are far smaller)


def fill_text(root: Path, chunks: list[Chunk]) -> None:
    """Give each chunk its lines (start_line..end_line) as they are on disk now; a file that
    is gone, unreadable or no longer inside the root gives empty text."""
    by_path: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        by_path[chunk.path].append(chunk)
    for rel, group in by_path.items():
        lines = _lines(root, rel)
        for chunk in group:
            last = min(chunk.end_line, chunk.start_line - 1 + MAX_SHOWN_LINES)
            chunk.text = "\n".join(lines[chunk.start_line - 1:last]) if lines else ""


def _lines(root: Path, rel: str) -> list[str]:
    path = inside(root, rel)
    if path is None:
        return []
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_READ_BYTES)
    except OSError:
        return []
    return source_lines(data.decode("utf-8", errors="replace"))
