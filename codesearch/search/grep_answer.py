"""A grep's answer, written either as the contract's records or straight as its JSON text, from
pre-encoded pieces (each line's head made while ripgrep ran, each chunk's once for all its lines)
instead of records turned into dicts."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring  # json.dumps' own, in C
from operator import attrgetter, itemgetter
from typing import TypeVar

from .grep_chunks import ChunkFacts
from .requests import MAX_GREP_MATCHES, ChunkRef, GrepAnswer, GrepFile, GrepMatch, GrepRequest
from .rg_output import MatchedLines

T = TypeVar("T")

JSON_BLOCK_PIECES = 2048  # pieces of an answer's JSON joined into one written block: about 300 KB


@dataclass(slots=True)
class GrepResult:
    """One search's lines placed in their chunks and put in answer order, written either as the
    contract's records or straight as their JSON text (the same text, joined from pieces encoded
    once: each line's head while ripgrep ran, each chunk's when it was first read)."""

    request: GrepRequest
    hits: MatchedLines
    shown: list[int]  # the hits in the answer, in its order (at most `limit`)
    group_of: list[int]  # each hit's group: the chunk that holds it, in its file
    chunks: list[ChunkFacts]  # each group's chunk
    notes: list[list[str]] | None  # each group's reasons, when asked to explain
    files: list[tuple[int, int]]  # (file, matching lines), every file, in the answer's order
    truncated: bool  # the engine's read stopped at MAX_GREP_MATCHES
    timing_ms: dict[str, float]

    @property
    def total(self) -> int:
        return len(self.hits)

    @property
    def note(self) -> str | None:
        notes = []
        if self.truncated:
            notes.append(f"stopped reading at {MAX_GREP_MATCHES:,} matching lines")
        elif self.total > len(self.shown):
            notes.append(f"{self.total - len(self.shown):,} more matching lines than `limit` shows")
        if self.hits.changed:
            notes.append(f"{self.hits.changed:,} files left out: their folders changed while they were searched")
        return "; ".join(notes) or None

    def answer(self) -> GrepAnswer:
        hits, names, texts = self.hits, self.hits.files, self.hits.texts()
        refs = [None if (s := c.span) is None else ChunkRef(kind=s.kind, name=s.name, qualified_name=s.qualified_name,
                                                             start_line=s.start_line, end_line=s.end_line)
                for c in self.chunks]
        no_lines: tuple[str, ...] = ()
        matches = tuple(GrepMatch(
            path=names[hits.file_of[i]], line=hits.lines[i], column=hits.columns[i], text=texts[i],
            chunk=refs[self.group_of[i]],
            before=tuple(hits.before[i]) if hits.before is not None else no_lines,
            after=tuple(hits.after[i]) if hits.after is not None else no_lines,
            explain=tuple(self.notes[self.group_of[i]]) if self.notes is not None else None) for i in self.shown)
        return GrepAnswer(pattern=self.request.pattern, matches=matches,
                          files=tuple(GrepFile(names[f], count) for f, count in self.files), total=self.total,
                          truncated=self.truncated or self.total > len(self.shown), timing_ms=self.timing_ms,
                          note=self.note)

    def json(self) -> bytes:
        """`json.dumps(self.answer().to_dict(), ensure_ascii=False)` in UTF-8, without the records."""
        return b"".join(self.json_blocks())

    def json_blocks(self) -> Iterator[bytes]:
        """The same text in blocks of JSON_BLOCK_PIECES pieces, made as they are written: each
        shown line's head and its chunk's rest (chunk, context, reasons; it also ends the line and
        separates it from the next; ", " is cut from the last). Joined whole, a large answer
        first paid for fresh pages before its first byte left; a block at a time reuses the same
        memory and the socket starts sending at once (docs/benchmarks.md, "grep against ripgrep")."""
        hits = self.hits
        explain = [b""] * len(self.chunks) if self.notes is None else [
            f', "explain": {_strings(notes)}'.encode() for notes in self.notes]
        if hits.before is None or hits.after is None:
            rests = [*map(attrgetter("rest"), self.chunks)] if self.notes is None else [
                b"".join((chunk.json, b', "before": [], "after": []', why, b"}, "))
                for chunk, why in zip(self.chunks, explain)]
            pieces = [b""] * (2 * len(self.shown))  # each head, then its group's rest: filled by slices
            pieces[0::2] = _pick(hits.heads, self.shown)
            pieces[1::2] = _pick(rests, _pick(self.group_of, self.shown))
        else:
            chunks = [*map(attrgetter("json"), self.chunks)]
            before, after, group_of = hits.before, hits.after, self.group_of
            pieces = [piece for i in self.shown for piece in (hits.heads[i], chunks[group_of[i]], (
                f', "before": {_strings(before[i])}, "after": {_strings(after[i])}'.encode() + explain[group_of[i]]
                + b"}, "))]
        if pieces:
            pieces[-1] = pieces[-1][:-2]
        yield f'{{"pattern": {encode_basestring(self.request.pattern)}, "matches": ['.encode()
        step = JSON_BLOCK_PIECES
        for start in range(0, len(pieces), step):
            yield b"".join(pieces[start:start + step])
        names = [encode_basestring(p) for p in hits.files]
        files = ", ".join(f'{{"path": {names[f]}, "count": {count}}}' for f, count in self.files)
        truncated = "true" if self.truncated or self.total > len(self.shown) else "false"
        note = "" if self.note is None else f', "note": {encode_basestring(self.note)}'
        yield (f'], "files": [{files}], "total": {self.total}, "truncated": {truncated}, '
               f'"timing_ms": {json.dumps(self.timing_ms)}{note}}}').encode()


def _pick(items: Sequence[T], at: Sequence[int]) -> Sequence[T]:
    """items[i] for each i of `at`, in one C call (itemgetter; a 1-tuple for one)."""
    if len(at) == 1:
        return (items[at[0]],)
    return itemgetter(*at)(items) if at else ()


def _strings(items: list[str]) -> str:
    return f'[{", ".join(map(encode_basestring, items))}]'
