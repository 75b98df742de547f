"""The text of the chunks a search shows, read from their files: the catalog keeps no copy of
the code (docs/benchmarks.md, "Index size"), and the file on disk is what the user opens anyway."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from ..model import Chunk, source_lines
from ..paths import read_inside

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
    data = read_inside(root, rel, MAX_READ_BYTES)
    return source_lines(data.decode("utf-8", errors="replace")) if data is not None else []
