"""The first answer in a repository whose index is not built yet: ripgrep over the query's words,
ranked by what a cheap look shows, while the index is built elsewhere.

ripgrep finds the lines holding any of the words in one run (with the repository's ignore files
and the access rule, as grep's), each file is scored by its words (rarer words among the matches
count more, a file holding more of the question's distinct words more again, a word in its name
or folder more still; tests, examples and documents later), and only the best few files are
parsed (tree-sitter, as the indexer would) to put each matching line in the definition that holds
it, so that the answer is the usual list of definitions. The answer says it is partial and why;
its results' `sources` name `grep` alone.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.content_class import aims_at_secondary, is_secondary_path
from ..analysis.tokens import query_terms
from ..config import Settings
from ..filters import Filters
from ..ingest.extract import SkipFile, extract_bytes
from ..ingest.languages import language_for_path, spec_for_path
from ..paths import read_inside
from .class_weights import classes_named
from .requests import GrepRequest, SearchAnswer, SearchRequest, SearchResult
from .ripgrep import run_rg_steadily

if TYPE_CHECKING:
    import numpy as np

    from ..indexing.index import Index
    from ..model import Chunk

SOURCE = "grep"  # what `sources` names: the one list these results come from
MAX_WORDS = 12  # the longest terms of a long question are looked for, no more
PARSED_FILES = 12  # the best files parsed for their definitions (more when the limit asks for more)
MAX_PARSED_FILES = 200
SATURATION = 1.2  # BM25's k1: a word's tenth line in a file adds little
NAME_WEIGHT = 1.5  # a word in a file's or a definition's own name
FOLDER_WEIGHT = 0.5  # a word in the name of the folder that holds the file
FILE_SHARE = 0.5  # how much of its file's score a definition carries
LATER = 0.5  # tests, examples, vendored code and documents, unless the question is about them
SAME_FILE_DECAY = 0.7  # each further definition of one file counts this much less
SNIPPET_LINES = 4
# suffixes cut from a term so that its other forms match too (`retries` finds `retry`), longest first
SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "ies", "ied", "ers", "er", "es", "ed", "ly", "s")
STEM_LEAST = 4  # a cut never leaves fewer letters than this
FORM_LETTERS = 2  # a stem this much longer than another that it starts with is a form of the same word
OWN_NAME = 3.0  # a name that is the word itself (`ZodObject` for `ZodObject`), against one that holds it


@dataclass(frozen=True)
class Word:
    """A term of the question and the regular expression that finds its forms in code."""

    term: str  # analysed as the keyword index does: lower case, identifiers split
    stem: str  # the term less its suffix: what a line must hold (any case)

    @property
    def pattern(self) -> str:
        """Two letters are looked for as a word of their own (`io`, `db`); longer stems anywhere,
        inside identifiers too (`config` in `parseConfig`)."""
        escaped = re.escape(self.stem)
        return rf"\b{escaped}\b" if len(self.stem) < 3 else escaped


def stem(term: str) -> str:
    """The term less its suffix, and less a doubled last letter that the suffix made
    (`mapping` -> `map`, as Porter's stemmer does)."""
    for suffix in SUFFIXES:
        if term.endswith(suffix) and len(term) - len(suffix) >= STEM_LEAST:
            cut = term[:-len(suffix)]
            doubled = cut[-1] == cut[-2] and cut[-1] not in "aeiouylsz"
            return cut[:-1] if doubled else cut
    return term


def query_words(query: str) -> list[Word]:
    """The question's terms as the keyword index analyses them (stopwords dropped, identifiers
    split), without an identifier's joined form that the question does not spell (`parseconfig`
    of `parse_config`), nor a term whose stem holds another's (`coroutine` beside `coroutines`'
    `coroutin`: every line holding it holds both); the MAX_WORDS longest of a long question."""
    folded = query.lower()
    terms = query_terms(query) or query_terms(query, drop_stopwords=False)
    words: dict[str, Word] = {}
    for term in terms:
        if term in folded or not term.isalpha():
            words.setdefault(stem(term), Word(term, stem(term)))
    stems = list(words)
    kept = [w for w in words.values()
            if not any(o != w.stem and w.stem.startswith(o) and len(w.stem) - len(o) <= FORM_LETTERS for o in stems)]
    chosen = sorted(kept, key=lambda w: -len(w.stem))[:MAX_WORDS]
    return [w for w in kept if w in chosen]


@dataclass
class _Matches:
    """The matches in the files kept: each one's file and line, and which words it holds."""

    files: list[str]
    file_of: np.ndarray
    lines: np.ndarray
    holds: np.ndarray  # words × matches, bool
    truncated: bool


def _find(root: Path, index_dir: Path, words: list[Word], filters: Filters) -> _Matches:
    """ripgrep's matches of any of the words (each match's own text, not its line: far less output,
    and no line to search again), kept to files in a language the index reads (and the
    filter's); each match holds the words whose stems its text holds (`HTTPException` holds
    `httpexception`, `http` and `exception`: the longest stems are tried first)."""
    import numpy as np
    patterns = [w.pattern for w in sorted(words, key=lambda w: -len(w.stem))]
    request = GrepRequest(pattern="|".join(patterns), ignore_case=True, filters=Filters(path_glob=filters.path_glob))
    hits, truncated = run_rg_steadily(root, index_dir, request, only_matching=True)
    wanted = filters.language
    languages = [language_for_path(path) for path in hits.files]
    hits = hits.keep_files(lambda f: languages[f] is not None and (wanted is None or languages[f] == wanted))
    kinds: dict[bytes, int] = {}  # each distinct matched text (any case) -> its column of `held`
    texts = [kinds.setdefault(text.lower(), len(kinds)) for text in hits.quoted]
    held = np.asarray([[w.stem.encode() in text for text in kinds] for w in words], dtype=bool).reshape(len(words), -1)
    return _Matches(hits.files, np.asarray(hits.file_of, dtype=np.int64), np.asarray(hits.lines, dtype=np.int64),
                    held[:, np.asarray(texts, dtype=np.int64)], truncated)


def _saturated(counts: np.ndarray) -> np.ndarray:
    return counts / (counts + SATURATION)


def _name_weights(words: list[Word], names: Sequence[str], weight: float) -> np.ndarray:
    """words × names: `weight` where the name holds the word's stem (any case), OWN_NAME times
    that where the name is the word (separators aside)."""
    import numpy as np
    folded = [name.lower().replace("_", "") for name in names]
    return np.asarray([[weight * (OWN_NAME if w.term == name else 1.0) if w.stem in name else 0.0 for name in folded]
                       for w in words], dtype=np.float64)


def _coverage(present: np.ndarray, rarity: np.ndarray) -> np.ndarray:
    """The share of the question's rarity that each column holds: a file or definition holding
    every word keeps its score, one holding the commonest word alone keeps a small part of it."""
    return (rarity @ present) / rarity.sum()


def _file_scores(matches: _Matches, words: list[Word], aimed_at_tests: bool
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each file's score, each word's rarity (the log of how many matched files there are for
    each that holds it), and each file's weight (LATER for tests, examples, vendored code and
    documents, unless the question is aimed at them; else 1)."""
    import numpy as np
    nfiles = len(matches.files)
    counts = np.stack([np.bincount(matches.file_of[h], minlength=nfiles) for h in matches.holds]) \
        if len(words) else np.zeros((0, nfiles))
    present = counts > 0
    rarity = np.log1p((nfiles + 1) / np.maximum(present.sum(axis=1), 1)) if nfiles else np.zeros(len(words))
    base = [p.rsplit("/", 1)[-1].split(".", 1)[0] for p in matches.files]
    folder = [p.rsplit("/", 2)[-2] if p.count("/") else "" for p in matches.files]
    in_names = np.maximum(_name_weights(words, base, NAME_WEIGHT), _name_weights(words, folder, FOLDER_WEIGHT))
    score = rarity @ (_saturated(counts) + in_names)
    score *= _coverage(present | (in_names > 0), rarity)
    weight = np.ones(nfiles)
    if not aimed_at_tests:
        later = [is_secondary_path(p) or spec_for_path(p) is None for p in matches.files]
        weight[np.asarray(later, dtype=bool)] = LATER
    return score * weight, rarity, weight


@dataclass
class _Found:
    chunk: Chunk
    score: float
    first_line: int  # the first matching line it holds
    words: list[str]


def _definitions(rel: str, data: bytes, lines: np.ndarray, holds: np.ndarray, words: list[Word],
                 rarity: np.ndarray, file_score: float, weight: float, settings: Settings) -> list[_Found]:
    """The file's chunks (as the indexer makes them) that hold its matching lines, each line in
    the innermost one, each scored by the words it holds and its name, times the file's weight,
    plus a share of the file's score."""
    import numpy as np
    extracted = extract_bytes(rel, data, language_for_path(rel) or "text", settings)
    if isinstance(extracted, SkipFile):
        return []  # the index leaves it out too (minified, binary, too deep)
    chunks = [c for c in extracted.chunks if c.kind != "file"] or extracted.chunks
    spans = np.asarray([(c.start_line, c.end_line) for c in chunks], dtype=np.int64)
    width = np.where((spans[:, 0][None, :] <= lines[:, None]) & (lines[:, None] <= spans[:, 1][None, :]),
                     spans[:, 1] - spans[:, 0], np.iinfo(np.int64).max)
    innermost = width.argmin(axis=1)
    placed = width[np.arange(len(lines)), innermost] != np.iinfo(np.int64).max
    found = []
    for c in np.unique(innermost[placed]).tolist():
        mine = placed & (innermost == c)
        counts = holds[:, mine].sum(axis=1)
        named = _name_weights(words, [chunks[c].name], NAME_WEIGHT)[:, 0]
        score = float(rarity @ (_saturated(counts) + named)) * float(_coverage((counts > 0) | (named > 0), rarity))
        found.append(_Found(chunks[c], score * weight + FILE_SHARE * file_score, int(lines[mine].min()),
                            [w.term for w, n in zip(words, counts.tolist()) if n]))
    return found


def _snippet(text_lines: list[str], found: _Found, context: int) -> tuple[str, int]:
    """A few of the file's lines from just before the definition's first match, inside it."""
    chunk = found.chunk
    start = max(chunk.start_line, found.first_line - 1)
    end = min(chunk.end_line, start + SNIPPET_LINES + 2 * context - 1)
    return "\n".join(text_lines[start - 1:end]), start


def _result(found: _Found, rank: int, text_lines: list[str], context: int, explain: bool) -> SearchResult:
    c = found.chunk
    snippet, snippet_line = _snippet(text_lines, found, context)
    notes = (f"ripgrep: holds {', '.join(found.words)}",) if explain else None
    return SearchResult(path=c.path, start_line=c.start_line, end_line=c.end_line, kind=c.kind, name=c.name,
                        qualified_name=c.qualified_name, language=c.language, score=round(found.score, 6),
                        sources={SOURCE: rank}, snippet=snippet, snippet_line=snippet_line, signature=c.signature,
                        id=c.id, explain=notes, name_line=c.name_line or None, name_column=c.name_column or None)


def early_answer(root: Path, index_dir: Path, settings: Settings, request: SearchRequest, building: str
                 ) -> SearchAnswer:
    """The request answered from ripgrep alone; `building` says what the index is doing meanwhile
    (the answer's note starts with it)."""
    import numpy as np

    from .budget import fit_budget
    started = time.perf_counter()
    words = query_words(request.query)
    note = f"{building}; meanwhile this answer comes from ripgrep over the words " \
           f"{', '.join(w.term for w in words) or '(none)'}"
    if not words:
        return SearchAnswer(query=request.query, mode=request.mode, results=(), timing_ms={"total": 0.0},
                            partial=True, embedded_share=0.0, note=note, truncated=request.truncated or None)
    matches = _find(root, index_dir, words, request.filters)
    timing = {"rg": (time.perf_counter() - started) * 1000}
    aimed = bool(classes_named(request.query)) or aims_at_secondary(request.filters.path_glob or "")
    file_score, rarity, weight = _file_scores(matches, words, aimed)
    parse_started = time.perf_counter()
    best = np.argsort(-file_score, kind="stable")[:min(max(PARSED_FILES, request.limit), MAX_PARSED_FILES)]
    found: list[tuple[_Found, list[str]]] = []
    for f in best.tolist():
        rel = matches.files[f]
        data = read_inside(root, rel, settings.max_file_bytes)
        if data is None:
            continue
        mine = matches.file_of == f
        text_lines = data.decode("utf-8", errors="replace").split("\n")
        defined = _definitions(rel, data, matches.lines[mine], matches.holds[:, mine], words, rarity,
                               float(file_score[f]), float(weight[f]), settings)
        if request.filters.kind:
            defined = [d for d in defined if d.chunk.kind == request.filters.kind]
        defined.sort(key=lambda d: -d.score)
        if request.files:
            defined = [_Found(d.chunk, float(file_score[f]), d.first_line, d.words) for d in defined[:1]]
        for k, d in enumerate(defined):
            d.score *= SAME_FILE_DECAY ** k
            found.append((d, text_lines))
    timing["parse"] = (time.perf_counter() - parse_started) * 1000
    found.sort(key=lambda item: -item[0].score)
    results = tuple(_result(d, rank, text_lines, request.context, request.explain)
                    for rank, (d, text_lines) in enumerate(found[:request.limit], 1))
    if matches.truncated:
        note += "; the words matched too many lines, and only the first were read"
    timing["total"] = (time.perf_counter() - started) * 1000
    answer = SearchAnswer(query=request.query, mode=request.mode, results=results,
                          timing_ms={k: round(v, 2) for k, v in timing.items()}, partial=True, embedded_share=0.0,
                          note=note, truncated=request.truncated or None)
    return fit_budget(answer, request.max_tokens)


def first_index_unfinished(index: Index) -> bool:
    """Whether the index has never finished a run (a first index being built): its keyword index
    and graph then hold only the files written so far. A catalog an older codesearch wrote is not
    one: searching it says it must be indexed again."""
    return not index.catalog.outdated and index.catalog.get_meta("last_index_time") is None
