"""Ranked chunks -> the result records of the contract: location, kind, ranks and a snippet."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..analysis.content_class import CLASSES
from ..model import Chunk
from ..vocabulary import NON_DEFINITION_KINDS, RETRIEVER_NAMES
from .ranking import Ranked
from .requests import (
    Definition,
    ImpactAnswer,
    ImpactFile,
    RelatedResult,
    RelationsAnswer,
    SearchResult,
    SimilarChunk,
)

SNIPPET_TERMS = 64  # query terms looked for to place a snippet


def term_pattern(terms: Sequence[str]) -> re.Pattern[str] | None:
    """What a snippet looks for: any of the query's terms of three letters or more."""
    words = [t for t in terms if len(t) > 2][:SNIPPET_TERMS]
    return re.compile("|".join(re.escape(t) for t in words), re.IGNORECASE) if words else None


def snippet_of(chunk: Chunk, pattern: re.Pattern[str] | None, lines: int) -> tuple[str, int]:
    """A few lines of the chunk, starting near the first line that `pattern` matches."""
    text_lines = chunk.text.split("\n")
    if not text_lines:
        return "", chunk.start_line
    start = 0
    if pattern is not None:
        for i, line in enumerate(text_lines):
            if pattern.search(line):
                start = max(0, i - 1)
                break
    piece = text_lines[start:start + lines]
    first_line = chunk.start_line + start if chunk.kind != "file" else chunk.start_line
    return "\n".join(piece), first_line


def name_position(c: Chunk) -> tuple[int | None, int | None]:
    """Where a definition's name stands (indexed with it; for chunks indexed before positions were
    recorded, the first whole-word match in the text, when the text is at hand); Nones for files."""
    if c.name_line:
        return c.name_line, c.name_column
    if c.kind in NON_DEFINITION_KINDS or not c.text or not c.name:
        return None, None
    word = re.compile(rf"(?<![\w$]){re.escape(c.name)}(?![\w$])")
    for offset, line in enumerate(c.text.split("\n")):
        m = word.search(line)
        if m:
            return c.start_line + offset, m.start() + 1
    return None, None


def search_result(r: Ranked, ranks: dict[str, dict[str, int]], pattern: re.Pattern[str] | None, context: int,
                  explain: bool, score: float | None = None, content_class: int | None = None,
                  similar: Sequence[Chunk] = ()) -> SearchResult:
    """`ranks`: retriever name -> chunk id -> 1-based rank in that retriever's list; `pattern`:
    the query's terms (term_pattern); `content_class`: its number (analysis/content_class.py);
    `similar`: the near-duplicates collapsed into it (search/collapse.py)."""
    c = r.chunk
    snippet, line = snippet_of(c, pattern, 4 + 2 * context)
    name_line, name_column = name_position(c)
    return SearchResult(
        path=c.path, start_line=c.start_line, end_line=c.end_line, kind=c.kind, name=c.name,
        qualified_name=c.qualified_name, language=c.language,
        score=round(score if score is not None else r.score, 6),
        sources={name: ranks[name].get(c.id) for name in RETRIEVER_NAMES if name in ranks},
        snippet=snippet, snippet_line=line, signature=c.signature, id=c.id,
        explain=tuple(r.notes) if explain else None, name_line=name_line, name_column=name_column,
        content_class=CLASSES[content_class] if content_class is not None else None,
        similar=tuple(SimilarChunk(id=s.id, path=s.path, start_line=s.start_line, end_line=s.end_line,
                                   language=s.language) for s in similar) or None)


def related_result(c: Chunk, score: float, depth: int, name: str,
                   sites: tuple[int, ...] | None = None, resolution: str | None = None) -> RelatedResult:
    snippet, line = snippet_of(c, term_pattern([name.lower()]), 3)
    name_line, name_column = name_position(c)
    return RelatedResult(path=c.path, start_line=c.start_line, end_line=c.end_line, kind=c.kind, name=c.name,
                         qualified_name=c.qualified_name, language=c.language, score=round(score, 4), depth=depth,
                         snippet=snippet, snippet_line=line, id=c.id, name_line=name_line, name_column=name_column,
                         sites=sites, resolution=resolution)


def definition_of(c: Chunk) -> Definition:
    name_line, name_column = name_position(c)
    return Definition(path=c.path, start_line=c.start_line, end_line=c.end_line, kind=c.kind, name=c.name,
                      qualified_name=c.qualified_name, language=c.language, signature=c.signature,
                      docstring=c.docstring, id=c.id, name_line=name_line, name_column=name_column)


def impact_of(answer: RelationsAnswer, depth: int) -> ImpactAnswer:
    """Callers grouped by file (by repository and file, in a workspace): files holding the
    nearest (then the most) callers first."""
    by_file: dict[tuple[str, str], list[RelatedResult]] = {}
    for r in answer.results:
        by_file.setdefault((r.repo or "", r.path), []).append(r)
    order = sorted(by_file, key=lambda f: (min(r.depth for r in by_file[f]), -len(by_file[f]), f))
    return ImpactAnswer(name=answer.name, depth=depth, targets=answer.targets,
                        files=tuple(ImpactFile(path, tuple(sorted(by_file[(repo, path)],
                                                                  key=lambda r: (r.depth, r.start_line))),
                                               repo=repo or None)
                                    for repo, path in order),
                        callers=len(answer.results), timing_ms=answer.timing_ms, note=answer.note)
