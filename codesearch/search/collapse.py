"""Near-duplicate results collapsed into the best-ranked one: translations of one documentation
page, a function copied into several platform files, generated tables of several versions. The
others are listed with the one kept (`similar`), not shown as results of their own.

Two chunks are near-duplicates when both have a fingerprint (analysis/fingerprint.py), they are
of the same content class, and
- documents: their fingerprints differ in at most DOCUMENT_BITS bits (translations keep a page's
  code, links and names; different pages of one site share their boilerplate, and lie further
  apart);
- code: they are of the same kind (a function and a method count as one: a module-level wrapper
  that repeats a method's signature and docstring), definitions of the same name (a method copied
  into another class keeps its name, not its qualified name), and either their fingerprints differ
  in at most CODE_BITS bits, or in at most CANDIDATE_BITS and their texts resemble each other: the
  runs of SHINGLE words they share are COPY_RESEMBLANCE of the runs either has (w-shingling). The
  fingerprint is of a chunk's set of words: a copy whose receiver was renamed on every line
  (`Route` of `App` and of `Group`) lies as far away as two functions of one vocabulary written
  differently, which only the order of the words tells apart. The texts are read only for the
  pairs that the fingerprints leave in doubt (scripts/bench_near_duplicates.py measures the bounds).
Two chunks of one file over nearly the same lines (SAME_LINES of the longer one: a method and the
part of its class that holds little else) are one result too, fingerprinted or not.
Only the candidates that could be shown are compared: WINDOW times the results asked for, each
against the at most `limit` kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from ..analysis.content_class import CLASS_NUMBERS, DOCUMENTATION, VENDORED
from ..analysis.fingerprint import WORD, distance
from ..indexing.vendored import in_folders
from ..model import Chunk
from ..vocabulary import DEFINITION_KINDS
from .ranking import Ranked, aggregate_files

DOCUMENT_BITS = 5
CODE_BITS = 3
CANDIDATE_BITS = 15  # past this, texts are not compared
COPY_RESEMBLANCE = 0.7
SHINGLE = 3
CALLABLE_KINDS = frozenset({"function", "method"})
SAME_LINES = 0.9
WINDOW = 3  # candidates compared: this many times the results asked for
_DOCUMENT = CLASS_NUMBERS[DOCUMENTATION]
_VENDORED = CLASS_NUMBERS[VENDORED]

Entry = TypeVar("Entry")
Traits = tuple[int, int]  # fingerprint (0: none), content class number
Shown = tuple[Ranked, float | None]  # a ranked chunk, its file's aggregated score when files are asked for
TextReader = Callable[[list[Chunk]], None]  # gives chunks their text as it is on disk


class Resemblance:
    """The w-shingling resemblance of two chunks' texts, each chunk's runs of words made once;
    `read` gives a chunk without text its text (None: chunks come with it)."""

    def __init__(self, read: TextReader | None) -> None:
        self._read = read
        self._shingles: dict[str, frozenset[tuple[str, ...]]] = {}

    def __call__(self, a: Chunk, b: Chunk) -> float:
        unread = [c for c in (a, b) if c.id not in self._shingles and not c.text]
        if unread and self._read is not None:
            self._read(unread)  # together: two copies in one file are read once
        sa, sb = self._of(a), self._of(b)
        return len(sa & sb) / len(sa | sb) if sa and sb else 0.0

    def _of(self, chunk: Chunk) -> frozenset[tuple[str, ...]]:
        found = self._shingles.get(chunk.id)
        if found is None:
            words = WORD.findall(chunk.text)
            found = frozenset(tuple(words[i:i + SHINGLE]) for i in range(len(words) - SHINGLE + 1))
            self._shingles[chunk.id] = found
        return found


def indexed_traits(fingerprint: int, content_class: int, path: str, vendored: frozenset[str]) -> Traits:
    """A chunk's traits as indexed, a chunk of a folder that the index's structure calls vendored
    (indexing/vendored.py) of the class vendored."""
    return fingerprint, _VENDORED if in_folders(path, vendored) else content_class


def collapse_ranked(ranked: list[Ranked], limit: int, file_aggregation: str | None,
                    traits_of: Callable[[list[Chunk]], dict[str, Traits]], read: TextReader | None
                    ) -> tuple[list[tuple[Shown, list[Chunk]]], dict[str, Traits]]:
    """The `limit` results shown of a ranked list, each with its near-duplicates, and the traits
    read: among the first WINDOW times `limit` chunks, or files (`file_aggregation`: how a file's
    chunks make its score; None: chunks are shown). `read`: gives chunks their text (None: they
    come with it)."""
    pool: list[Shown]
    if file_aggregation is not None:
        pool = list(aggregate_files(ranked, file_aggregation))
    else:
        pool = [(r, None) for r in ranked]
    return _collapse_pool(pool, limit, traits_of, read)


def collapse_files(files: list[tuple[Ranked, float]], limit: int,
                   traits_of: Callable[[list[Chunk]], dict[str, Traits]], read: TextReader | None
                   ) -> tuple[list[tuple[Shown, list[Chunk]]], dict[str, Traits]]:
    """The `limit` files shown of a ranked file list (each file's best chunk and its score, as
    search/file_ranking.py makes it), each with its near-duplicates, and the traits read."""
    return _collapse_pool(list(files), limit, traits_of, read)


def _collapse_pool(pool: list[Shown], limit: int, traits_of: Callable[[list[Chunk]], dict[str, Traits]],
                   read: TextReader | None) -> tuple[list[tuple[Shown, list[Chunk]]], dict[str, Traits]]:
    """Among the first WINDOW times `limit` entries of `pool`."""
    pool = pool[:limit * WINDOW]
    traits = traits_of([r.chunk for r, _ in pool])
    return collapse(pool, lambda entry: entry[0].chunk, traits, limit, Resemblance(read)), traits


def near_duplicates(a: Chunk, a_traits: Traits, b: Chunk, b_traits: Traits,
                    resemblance: Callable[[Chunk, Chunk], float]) -> bool:
    """Whether two chunks are copies or translations of one another, or show nearly the same
    lines of one file (the module's rule)."""
    if same_lines(a, b):
        return True
    (a_print, a_class), (b_print, b_class) = a_traits, b_traits
    if not a_print or not b_print or a_class != b_class:
        return False
    bits = distance(a_print, b_print)
    if a_class == _DOCUMENT:
        return bits <= DOCUMENT_BITS
    if not same_kind(a.kind, b.kind) or (a.kind in DEFINITION_KINDS and a.name != b.name):
        return False
    return bits <= CODE_BITS or (bits <= CANDIDATE_BITS and resemblance(a, b) >= COPY_RESEMBLANCE)


def same_kind(a: str, b: str) -> bool:
    """Kinds a copy may change between: a method copied out as a function, and back."""
    return a == b or (a in CALLABLE_KINDS and b in CALLABLE_KINDS)


def same_lines(a: Chunk, b: Chunk) -> bool:
    """Two chunks of one file whose common lines are SAME_LINES of the longer one's."""
    if a.path != b.path:
        return False
    common = min(a.end_line, b.end_line) - max(a.start_line, b.start_line) + 1
    return common >= SAME_LINES * max(a.end_line - a.start_line + 1, b.end_line - b.start_line + 1)


def collapse(entries: Sequence[Entry], chunk_of: Callable[[Entry], Chunk], traits: Mapping[str, Traits],
             limit: int, resemblance: Callable[[Chunk, Chunk], float]) -> list[tuple[Entry, list[Chunk]]]:
    """The first `limit` entries that are no near-duplicate of a better one, each with the chunks
    of the entries collapsed into it, best first. `traits`: by chunk id (missing: never
    collapsed)."""
    kept: list[tuple[Entry, list[Chunk]]] = []
    for entry in entries:
        chunk = chunk_of(entry)
        mine = traits.get(chunk.id)
        if mine is not None:
            host = next((similar for other, similar in kept
                         if (theirs := traits.get(chunk_of(other).id)) is not None
                         and near_duplicates(chunk_of(other), theirs, chunk, mine, resemblance)), None)
            if host is not None:
                host.append(chunk)
                continue
        if len(kept) < limit:  # past it, entries only join those kept
            kept.append((entry, []))
    return kept
