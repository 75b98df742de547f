"""Ranked chunks -> the result records of the contract: location, kind, ranks and a snippet."""

from __future__ import annotations

import re

from ..model import RETRIEVER_NAMES, Chunk
from .ranking import Ranked
from .types import RelatedResult, SearchResult


def snippet_of(chunk: Chunk, terms: list[str], lines: int) -> tuple[str, int]:
    """A few lines of the chunk, starting near the first line that mentions a query term."""
    text_lines = chunk.text.split("\n")
    if not text_lines:
        return "", chunk.start_line
    pattern = re.compile("|".join(re.escape(t) for t in terms if len(t) > 2), re.IGNORECASE) if terms else None
    start = 0
    if pattern is not None and pattern.pattern:
        for i, line in enumerate(text_lines):
            if pattern.search(line):
                start = max(0, i - 1)
                break
    piece = text_lines[start:start + lines]
    first_line = chunk.start_line + start if chunk.kind != "file" else chunk.start_line
    return "\n".join(piece), first_line


def search_result(r: Ranked, ranks: dict[str, dict[str, int]], terms: list[str], context: int, explain: bool,
                  score: float | None = None) -> SearchResult:
    """`ranks`: retriever name -> chunk id -> 1-based rank in that retriever's list."""
    c = r.chunk
    snippet, line = snippet_of(c, terms, 4 + 2 * context)
    return SearchResult(
        path=c.path, start_line=c.start_line, end_line=c.end_line, kind=c.kind, name=c.name,
        qualified_name=c.qualified_name, language=c.language,
        score=round(score if score is not None else r.score, 6),
        sources={name: ranks[name].get(c.id) for name in RETRIEVER_NAMES if name in ranks},
        snippet=snippet, snippet_line=line, signature=c.signature, id=c.id,
        explain=tuple(r.notes) if explain else None)


def related_result(c: Chunk, score: float, depth: int, name: str) -> RelatedResult:
    snippet, line = snippet_of(c, [name.lower()], 3)
    return RelatedResult(path=c.path, start_line=c.start_line, end_line=c.end_line, kind=c.kind, name=c.name,
                         qualified_name=c.qualified_name, language=c.language, score=round(score, 4), depth=depth,
                         snippet=snippet, snippet_line=line, id=c.id)
