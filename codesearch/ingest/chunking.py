"""ParsedFile -> File→Class→Method chunks, size-bounded (the cAST recipe).

Budget unit: non-whitespace characters (`model.non_whitespace_size`), so indentation style does
not change where code is cut. Rules:

- one `file` chunk per file: its imports and an outline of its definitions;
- one chunk per definition, whose text is the definition with each nested definition collapsed to
  its signature (a class chunk is the class skeleton; its methods are their own chunks);
- a definition over the budget is split at its statement seams, shallowest first, recursing into
  nested blocks and finally into lines; parts 2..n are children of part 1;
- loose top-level statements (not imports, not definitions) are merged into `block` chunks up to
  the budget.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from functools import partial
from itertools import accumulate
from pathlib import PurePosixPath

from ..model import Chunk, ParsedDefinition, ParsedFile, non_whitespace_size, source_lines

Line = tuple[int, str]  # (1-based line number, text)
OUTLINE_MAX_LINES = 200


def chunk_id(path: str, kind: str, qualified_name: str, ordinal: int, part: int = 1) -> str:
    """Stable id: unchanged code keeps its id even when lines above it move."""
    key = f"{path}\0{kind}\0{qualified_name}\0{ordinal}\0{part}"
    return hashlib.blake2b(key.encode("utf-8", "replace"), digest_size=8).hexdigest()


def content_hash(header: str, text: str) -> str:
    return hashlib.blake2b(f"{header}\n{text}".encode("utf-8", "replace"), digest_size=16).hexdigest()


def make_header(path: str, kind: str, qualified_name: str, signature: str) -> str:
    """The retrieval header every chunk carries: path, kind, qualified name, signature."""
    head = f"{path} | {kind} {qualified_name}".rstrip()
    return f"{head}\n{signature}" if signature else head


class _ChunkSink:
    """Collects chunks for one file and hands out stable ids."""

    def __init__(self, parsed_path: str, language: str):
        self.path = parsed_path
        self.language = language
        self.chunks: list[Chunk] = []
        self._ordinals: Counter[tuple[str, str]] = Counter()

    def next_ordinal(self, kind: str, qualified_name: str) -> int:
        """How many chunks of this kind and name came before: disambiguates overloads."""
        ordinal = self._ordinals[(kind, qualified_name)]
        self._ordinals[(kind, qualified_name)] += 1
        return ordinal

    def add(self, *, kind: str, name: str, qualified_name: str, signature: str, docstring: str,
            lines: list[Line], parent_id: str | None, part: int = 1, ordinal: int | None = None,
            header_signature: str | None = None) -> Chunk:
        if ordinal is None:
            ordinal = self.next_ordinal(kind, qualified_name)
        text = "\n".join([t for _, t in lines])
        header = make_header(self.path, kind, qualified_name,
                             signature if header_signature is None else header_signature)
        chunk = Chunk(
            id=chunk_id(self.path, kind, qualified_name, ordinal, part), parent_id=parent_id,
            path=self.path, language=self.language, kind=kind, name=name,
            qualified_name=qualified_name, signature=signature, docstring=docstring,
            start_line=lines[0][0] if lines else 1, end_line=lines[-1][0] if lines else 1,
            content_hash=content_hash(header, text), header=header, text=text, part=part)
        self.chunks.append(chunk)
        return chunk


def _size(lines: list[Line]) -> int:
    return non_whitespace_size("\n".join([t for _, t in lines]))


def _trim_blank(lines: list[Line]) -> list[Line]:
    start, end = 0, len(lines)
    while start < end and not lines[start][1].strip():
        start += 1
    while end > start and not lines[end - 1][1].strip():
        end -= 1
    return lines[start:end]


def split_lines(lines: list[Line], seams: dict[int, int] | Callable[[], dict[int, int]],
                budget: int) -> list[list[Line]]:
    """Cut `lines` into pieces of at most `budget`, at seams as shallow as possible.

    `seams` (or a function returning it) maps a line number to the depth of the statement
    starting there (1 = directly in the body). A segment still too large at one depth is cut at
    the next depth, and once no seams are left, between lines.
    """
    texts = [t for _, t in lines]
    if sum(map(len, texts)) <= budget:  # raw length bounds the size: the common case
        return [lines]
    weights = [len("".join(t.split())) for t in texts]  # non_whitespace_size of each line, inlined
    before = [0, *accumulate(weights)]  # before[i]: the size of lines[:i]
    if before[-1] <= budget:
        return [lines]
    if callable(seams):  # computing seams walks the tree: only for what must be split
        seams = seams()
    max_depth = max(seams.values(), default=0)
    pieces: list[list[Line]] = []

    def split(lo: int, hi: int, depth: int) -> None:
        cuts = [i for i in range(lo + 1, hi) if seams.get(lines[i][0], 99) <= depth]
        if not cuts and depth <= max_depth:
            split(lo, hi, depth + 1)
            return
        bounds = [lo] + (cuts if cuts else list(range(lo + 1, hi))) + [hi]
        start, size = lo, 0
        for a, b in zip(bounds, bounds[1:]):
            segment = before[b] - before[a]
            if segment > budget and b - a > 1:
                if a > start:
                    pieces.append(lines[start:a])
                split(a, b, depth + 1)
                start, size = b, 0
            elif size and size + segment > budget:
                pieces.append(lines[start:a])
                start, size = a, segment
            else:
                size += segment
        if hi > start:
            pieces.append(lines[start:hi])

    split(0, len(lines), 1)
    return pieces


def _own_lines(definition: ParsedDefinition, children: list[ParsedDefinition], all_lines: list[str]) -> list[Line]:
    """The definition's lines with each child definition collapsed to one signature line."""
    result: list[Line] = []
    line = definition.start_line
    for child in sorted(children, key=lambda c: c.start_line):
        if line < child.start_line:
            result.extend(zip(range(line, child.start_line), all_lines[line - 1:child.start_line - 1]))
        source_line = all_lines[child.start_line - 1] if child.start_line <= len(all_lines) else ""
        indent = source_line[: len(source_line) - len(source_line.lstrip())]
        result.append((child.start_line, f"{indent}{child.signature} …"))
        line = max(line, child.end_line + 1)
    if line <= definition.end_line:
        result.extend(zip(range(line, definition.end_line + 1), all_lines[line - 1:definition.end_line]))
    return result


def _seam_depths(parsed: ParsedFile, index: int) -> dict[int, int]:
    """Where statements of definition `index`'s body begin: line -> depth (walks the tree)."""
    return dict(parsed.seams(index))


def _outline(parsed: ParsedFile) -> list[str]:
    depth: dict[int, int] = {}
    lines: list[str] = []
    for i, d in enumerate(parsed.definitions):
        depth[i] = 0 if d.parent is None else depth[d.parent] + 1
        if len(lines) < OUTLINE_MAX_LINES:
            lines.append("  " * depth[i] + d.signature)
    return lines


def chunk_code(parsed: ParsedFile, budget: int) -> list[Chunk]:
    """Chunks of a file that tree-sitter parsed with a language spec."""
    all_lines = parsed.lines
    sink = _ChunkSink(parsed.path, parsed.language)
    imports = [imp.text for imp in parsed.imports]
    doc = [parsed.docstring[:400], ""] if parsed.docstring else []
    outline = _outline(parsed)
    file_text = "\n".join(doc + outline + ([""] if outline and imports else []) + imports)
    file_chunk = sink.add(kind="file", name=PurePosixPath(parsed.path).name, qualified_name=parsed.path,
                          signature="", docstring="", lines=[], parent_id=None)
    _finish_file_chunk(file_chunk, file_text, len(all_lines), parsed.language)
    file_chunk.docstring = parsed.docstring

    children: dict[int | None, list[ParsedDefinition]] = {}
    for d in parsed.definitions:
        children.setdefault(d.parent, []).append(d)
    ids: dict[int, str] = {}
    for i, d in enumerate(parsed.definitions):
        parent_id = ids[d.parent] if d.parent is not None else file_chunk.id
        own = _own_lines(d, children.get(i, []), all_lines)
        if d.end_byte - d.start_byte <= budget:  # bytes bound the size: no need to measure
            pieces = [own]
        else:
            pieces = split_lines(own, partial(_seam_depths, parsed, i), budget)
        ordinal = sink.next_ordinal(d.kind, d.qualified_name)
        first = None
        for part, piece in enumerate(pieces, start=1):
            chunk = sink.add(kind=d.kind, name=d.name, qualified_name=d.qualified_name,
                             signature=d.signature, docstring=d.docstring if part == 1 else "",
                             lines=_trim_blank(piece) or piece, parent_id=parent_id if first is None else first.id,
                             part=part, ordinal=ordinal,
                             header_signature=d.signature if part == 1 else
                             f"{d.signature} (part {part}/{len(pieces)})")
            first = first or chunk
        if len(pieces) == 1 and first is not None:  # a whole definition reports its whole span
            first.start_line, first.end_line = d.start_line, d.end_line
        if first is not None:
            first.name_line, first.name_column = d.name_line, d.name_column
        ids[i] = first.id if first else file_chunk.id

    _add_loose_blocks(parsed, all_lines, sink, file_chunk.id, budget)
    parsed.chunk_ids = ids
    return sink.chunks


def _finish_file_chunk(chunk: Chunk, text: str, line_count: int, language: str) -> None:
    """A file chunk spans the whole file; its text is an outline, not the code."""
    chunk.text = text
    chunk.start_line = 1
    chunk.end_line = max(1, line_count)
    chunk.signature = ""
    chunk.header = make_header(chunk.path, "file", f"{language}", "")
    chunk.content_hash = content_hash(chunk.header, text)


def _add_loose_blocks(parsed: ParsedFile, all_lines: list[str], sink: _ChunkSink, file_id: str,
                      budget: int) -> None:
    """Top-level statements outside definitions and imports, merged up to the budget.

    Only runs not separated by a definition are merged, so a block's line span stays honest.
    """
    line_count = len(all_lines)
    covered = [(d.start_line, d.end_line, True) for d in parsed.definitions if d.parent is None]
    import_lines = {imp.line for imp in parsed.imports}
    seams = dict(parsed.top_level_boundaries)
    seam_lines = sorted(seams)
    for i, line in enumerate(seam_lines):  # an import runs until the next top-level statement
        if line in import_lines:
            end = seam_lines[i + 1] - 1 if i + 1 < len(seam_lines) else line_count
            covered.append((line, end, False))
    covered.sort()
    runs: list[tuple[int, int, bool]] = []  # (first, last line, a definition stands before it)
    line, definition_since_last = 1, False
    for start, end, is_definition in covered:
        if start > line:
            runs.append((line, start - 1, definition_since_last))
            definition_since_last = False
        definition_since_last = definition_since_last or is_definition
        line = max(line, end + 1)
    if line <= line_count:
        runs.append((line, line_count, definition_since_last))
    merged: list[list[Line]] = []
    merged_size = 0
    for start, end, after_definition in runs:
        lines = _trim_blank(list(zip(range(start, end + 1), all_lines[start - 1:end])))
        if not lines:
            continue
        size = _size(lines)
        if merged and not after_definition and merged_size + size <= budget:
            merged[-1].extend(lines)
            merged_size += size
        else:
            merged.append(lines)
            merged_size = size
    for group in merged:
        for piece in split_lines(group, seams, budget):
            piece = _trim_blank(piece)
            if piece:  # named by its first line, so its id survives edits above it
                name = _first_words(piece)
                sink.add(kind="block", name=name, qualified_name=name, signature="", docstring="",
                         lines=piece, parent_id=file_id)


def _first_words(lines: list[Line], limit: int = 60) -> str:
    text = " ".join(lines[0][1].split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def chunk_text(path: str, language: str, text: str, budget: int, window_lines: int) -> list[Chunk]:
    """Fallback for files without a grammar: Markdown by headings, anything else by line windows."""
    sink = _ChunkSink(path, language)
    all_lines = source_lines(text)
    numbered = list(enumerate(all_lines, start=1))
    sections: list[tuple[str, list[Line]]] = []
    headings: list[str] = []
    if language == "markdown":
        sections, headings = _markdown_sections(numbered)
    else:
        for start in range(0, len(numbered), window_lines):
            window = numbered[start:start + window_lines]
            sections.append((f"lines {window[0][0]}-{window[-1][0]}", window))
    outline = headings or [t for _, t in numbered[:10]]
    file_chunk = sink.add(kind="file", name=PurePosixPath(path).name, qualified_name=path,
                          signature="", docstring="", lines=[], parent_id=None)
    _finish_file_chunk(file_chunk, "\n".join(outline), len(all_lines), language)
    kind = "section" if language == "markdown" else "block"
    for name, lines in sections:
        lines = _trim_blank(lines)
        if not lines:
            continue
        pieces = split_lines(lines, {}, budget)
        first = None
        for part, piece in enumerate(pieces, start=1):
            chunk = sink.add(kind=kind, name=name.split(" / ")[-1], qualified_name=name, signature="",
                             docstring="", lines=piece, part=part,
                             parent_id=file_chunk.id if first is None else first.id)
            first = first or chunk
    return sink.chunks


def _markdown_sections(numbered: list[Line]) -> tuple[list[tuple[str, list[Line]]], list[str]]:
    """Split Markdown at ATX headings outside code fences; names are heading paths."""
    sections: list[tuple[str, list[Line]]] = []
    headings: list[str] = []
    stack: list[tuple[int, str]] = []
    current_name = "preamble"
    current: list[Line] = []
    in_fence = False
    for n, text in numbered:
        stripped = text.lstrip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
        level = len(stripped) - len(stripped.lstrip("#"))
        if not in_fence and 1 <= level <= 6 and stripped[level:level + 1] in (" ", ""):
            if current:
                sections.append((current_name, current))
            title = stripped[level:].strip().strip("#").strip() or "(untitled)"
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            headings.append("  " * (level - 1) + title)
            current_name, current = " / ".join(t for _, t in stack), []
        current.append((n, text))
    if current:
        sections.append((current_name, current))
    return sections, headings
