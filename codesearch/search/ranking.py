"""The ranking stage after fusion. Every step can be switched off for ablation.

Scores coming in are fused RRF scores; each step multiplies or reorders them and records what
it did, so `--explain` can show it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache

from ..analysis.tokens import STOPWORDS, identifier_terms, looks_like_symbol, split_identifier
from ..model import Chunk
from ..vocabulary import DEFINITION_KINDS, TYPE_KINDS

# folders and file names of tests, examples, benchmarks and vendored code; `example` alone is
# left out on purpose (Java's com/example/... packages are real code)
TEST_PATH = re.compile(r"(^|/)(tests?|specs?|__tests__|testing|testdata|fixtures?|examples|samples|demos|"
                       r"benchmarks?|benches|vendor|third_party|node_modules|docs?)(/|$)|"
                       r"(^|/)(test_[^/]*|[^/]*_(test|spec)\.[a-z]+|[^/]*\.(test|spec)\.[a-z]+|conftest\.py)$",
                       re.IGNORECASE)
TEST_CLASS_FILE = re.compile(r"(^|/)[A-Z][A-Za-z0-9]*(Test|Tests|Spec|Specs)\.[a-z]+$")  # FooTest.java
TEST_WORDS = {"test", "tests", "testing", "spec", "specs", "example", "examples", "benchmark", "fixture",
              "fixtures", "mock", "mocks", "vendor", "demo", "sample", "doc", "docs"}


@dataclass
class RankingOptions:
    symbol_boost: bool = True
    name_path_boost: bool = True
    test_penalty: bool = True
    parent_child_dedupe: bool = True
    file_diminishing: bool = True
    file_decay: float = 0.7
    test_factor: float = 0.5
    file_coherence: float = 0.0
    identifier_boost: float = 1.0
    word_name_boost: float = 1.0
    prior_weight: float = 0.0
    symbol_test_demotion: float = 0.0
    test_words_factor: float = 1.0
    joined_name_boost: float = 1.0
    joined_stem_boost: float = 1.0
    joined_max: int = 3
    path_w: float = 0.3
    name_w: float = 0.15
    stem_w: float = 0.0
    prefix: int = 0
    symbol_stem_bonus: float = 0.0
    prior_cap: float = 2.0

    @classmethod
    def off(cls) -> RankingOptions:
        return cls(False, False, False, False, False)


@dataclass(slots=True)
class Ranked:
    chunk: Chunk
    score: float
    notes: list[str] = field(default_factory=list)


def _query_words(query: str) -> set[str]:
    words = set()
    for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", query):
        for t in identifier_terms(w):
            if t not in STOPWORDS and len(t) > 2:
                words.add(t)
    return words


def _stem(word: str) -> str:
    for suffix in ("ing", "ers", "er", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[:-len(suffix)]
    return word


def rank(query: str, fused: list[tuple[Chunk, float]], options: RankingOptions,
         priors: dict[str, float] | None = None) -> list[Ranked]:
    items = [Ranked(chunk, score) for chunk, score in fused]
    if priors and options.prior_weight:
        import math
        for r in items:
            p = priors.get(r.chunk.path, 1.0)
            f = min(options.prior_cap, max(1 / options.prior_cap, p ** options.prior_weight))
            r.score *= f
    if options.name_path_boost:
        _boost_names(query, items, options.path_w, options.name_w, options.stem_w, options.prefix)
    if options.test_penalty:
        _penalize_tests(query, items, options.test_factor, options.test_words_factor)
    if options.identifier_boost != 1.0 or options.word_name_boost != 1.0:
        _boost_named(query, items, options.identifier_boost, options.word_name_boost)
    if options.joined_name_boost != 1.0 or options.joined_stem_boost != 1.0:
        _boost_joined(query, items, options.joined_name_boost, options.joined_stem_boost, options.joined_max)
    if options.file_coherence:
        _file_coherence(items, options.file_coherence)
    if options.symbol_boost and looks_like_symbol(query):  # last: its tiers must not be reordered
        _boost_symbol(query, items, options.symbol_test_demotion, options.symbol_stem_bonus)
    items.sort(key=lambda r: -r.score)
    if options.parent_child_dedupe:
        items = _dedupe_parent_child(items)
    if options.file_diminishing:
        _diminish_per_file(items, options.file_decay)
        items.sort(key=lambda r: -r.score)
    return items


IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#|->)[A-Za-z_$][\w$]*)*")


def _identifier_shaped(word: str) -> bool:
    return "_" in word.strip("_") or bool(re.search(r"[a-z][A-Z]|[A-Z][a-z]+[A-Z]", word))


def _joined(query: str, longest: int) -> set[str]:
    words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", query)]
    out = set()
    for n in range(2, longest + 1):
        for i in range(len(words) - n + 1):
            gram = words[i:i + n]
            if gram[0] in STOPWORDS or gram[-1] in STOPWORDS:
                continue
            joined = "".join(gram)
            out.add(joined)
            if joined.endswith("s"):
                out.add(joined[:-1])
    return out


def _boost_joined(query: str, items: list[Ranked], name_factor: float, stem_factor: float, longest: int) -> None:
    if looks_like_symbol(query):
        return
    grams = _joined(query, longest)
    if not grams:
        return
    for r in items:
        c = r.chunk
        factor = 1.0
        if c.kind in DEFINITION_KINDS and c.part == 1 and _loose(c.name.split("<", 1)[0]) in grams:
            factor = name_factor
        if _loose(c.path.rsplit("/", 1)[-1].split(".", 1)[0]) in grams:
            factor = max(factor, stem_factor)
        if factor != 1.0:
            r.score *= factor
            r.notes.append(f"name made of query words x{factor:.2f}")


def _boost_named(query: str, items: list[Ranked], identifier: float, plain: float) -> None:
    if looks_like_symbol(query):
        return
    names: dict[str, float] = {}
    for token in IDENTIFIER.findall(query):
        parts = re.split(r"\.|::|#|->", token)
        last = parts[-1]
        shaped = len(parts) > 1 or _identifier_shaped(last)
        if shaped:
            names[last] = max(names.get(last, 1.0), identifier)
        elif len(last) >= 3 and last.lower() not in STOPWORDS:
            names[last] = max(names.get(last, 1.0), plain)
    if not names:
        return
    for r in items:
        c = r.chunk
        if c.kind in DEFINITION_KINDS and c.part == 1:
            factor = names.get(c.name.lstrip("$"))
            if factor and factor != 1.0:
                r.score *= factor
                r.notes.append(f"named in the query x{factor:.2f}")


def _file_coherence(items: list[Ranked], fraction: float) -> None:
    best: dict[str, Ranked] = {}
    total: dict[str, float] = defaultdict(float)
    for r in items:
        total[r.chunk.path] += r.score
        if r.chunk.path not in best or r.score > best[r.chunk.path].score:
            best[r.chunk.path] = r
    if not total:
        return
    top = max(r.score for r in items)
    most = max(total.values())
    for path, r in best.items():
        r.score += fraction * top * total[path] / most


def _loose(name: str) -> str:
    return re.sub(r"[_$\-]", "", name).lower()


def _boost_symbol(query: str, items: list[Ranked], test_demotion: float = 0.0, stem_bonus: float = 0.0) -> None:
    """A bare name: its definitions first, in tiers that fused scores cannot reorder:
    qualified match > exact-case type > exact-case other > same name in another case."""
    symbol = re.sub(r"(\.|::|#|->)", ".", re.sub(r"\(\)$", "", query.strip()))
    short = symbol.rsplit(".", 1)[-1]
    loose = _loose(short)
    gap = 2 * max((r.score for r in items), default=0.0) or 1.0
    for r in items:
        c = r.chunk
        if c.kind not in DEFINITION_KINDS or c.part != 1:
            continue
        base = c.name.split("<", 1)[0].strip()
        if base == short:
            qualified = symbol != short and (c.qualified_name == symbol or c.qualified_name.endswith("." + symbol))
            tier = 4.0 if qualified else 3.0 if c.kind in TYPE_KINDS else 2.0
            note = "defines the symbol"
        elif _loose(base) == loose:
            tier, note = 1.0, "defines the symbol (case differs)"
        else:
            continue
        if test_demotion and is_test_path(c.path):
            tier -= test_demotion
        if stem_bonus and _loose(c.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]) == loose:
            tier += stem_bonus
        r.score += gap * tier
        r.notes.append(note)


def _matches(words: set[str], terms: frozenset[str], prefix: int) -> int:
    n = 0
    for w in words:
        if w in terms:
            n += 1
        elif prefix and any(min(len(w), len(t)) >= prefix and (w.startswith(t) or t.startswith(w)) for t in terms):
            n += 1
    return n


def _boost_names(query: str, items: list[Ranked], path_w: float = 0.3, name_w: float = 0.15, stem_w: float = 0.0,
                 prefix: int = 0) -> None:
    """Query words in the file's or folder's name, or in the chunk's own name."""
    words = {_stem(w) for w in _query_words(query)}
    if not words:
        return
    for r in items:
        path_terms = _path_terms(r.chunk.path)
        name_terms = _name_terms(r.chunk.name) if r.chunk.kind in DEFINITION_KINDS else frozenset()
        in_path = _matches(words, path_terms, prefix)
        in_name = _matches(words, name_terms, prefix)
        in_stem = _matches(words, _stem_terms(r.chunk.path), prefix) if stem_w else 0
        if in_path or in_name:
            factor = 1.0 + path_w * min(in_path, 2) + name_w * min(in_name, 2) + stem_w * min(in_stem, 2)
            r.score *= factor
            r.notes.append(f"name/path match x{factor:.2f}")


@lru_cache(maxsize=65536)
def _stem_terms(path: str) -> frozenset[str]:
    return frozenset(_stem(t) for t in split_identifier(path.rsplit("/", 1)[-1].split(".")[0]))


@lru_cache(maxsize=65536)
def _path_terms(path: str) -> frozenset[str]:
    return frozenset(_stem(t) for part in path.lower().split("/") for t in split_identifier(part.split(".")[0]))


@lru_cache(maxsize=65536)
def _name_terms(name: str) -> frozenset[str]:
    return frozenset(_stem(t) for t in split_identifier(name))


def _penalize_tests(query: str, items: list[Ranked], factor: float, asked: float = 1.0) -> None:
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", query)}
    if words & TEST_WORDS:
        factor = asked
        if factor == 1.0:
            return
    for r in items:
        if is_test_path(r.chunk.path):
            r.score *= factor
            r.notes.append(f"test/example/vendor path x{factor}")


@lru_cache(maxsize=65536)
def is_test_path(path: str) -> bool:
    """A test, example, benchmark, fixture, docs or vendored file, by its path."""
    return bool(TEST_PATH.search(path) or TEST_CLASS_FILE.search(path))


def _dedupe_parent_child(items: list[Ranked]) -> list[Ranked]:
    """Keep the better of a parent and its child; the other goes to the end, not away."""
    taken: set[str] = set()
    parents_of_taken: set[str] = set()
    kept, demoted = [], []
    for r in items:
        c = r.chunk
        if (c.parent_id and c.parent_id in taken) or c.id in parents_of_taken:
            r.notes.append("parent or child ranked higher")
            r.score *= 0.5
            demoted.append(r)
            continue
        kept.append(r)
        taken.add(c.id)
        if c.parent_id:
            parents_of_taken.add(c.parent_id)
    return kept + demoted


def _diminish_per_file(items: list[Ranked], decay: float) -> None:
    seen: dict[str, int] = defaultdict(int)
    for r in items:
        n = seen[r.chunk.path]
        if n:
            r.score *= decay ** n
            r.notes.append(f"chunk {n + 1} of its file x{decay ** n:.2f}")
        seen[r.chunk.path] += 1


# --- file aggregation ----------------------------------------------------------------------
AGGREGATIONS = ("max_p", "top_m_sum", "top_m_avg", "rrf_per_doc", "weighted_top")


def aggregate_files(items: list[Ranked], method: str = "weighted_top", m: int = 3, k: int = 60,
                    decay: float = 0.5, top_l: int = 5) -> list[tuple[Ranked, float]]:
    """One entry per file: (its best chunk, the file's aggregate score), best first."""
    if method not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {method!r}; choose from {', '.join(AGGREGATIONS)}")
    by_file: dict[str, list[tuple[int, Ranked]]] = defaultdict(list)
    for position, r in enumerate(items, start=1):
        by_file[r.chunk.path].append((position, r))
    out = []
    for entries in by_file.values():
        scores = sorted((r.score for _, r in entries), reverse=True)
        if method == "max_p":
            agg = scores[0]
        elif method == "top_m_sum":
            agg = sum(scores[:m])
        elif method == "top_m_avg":
            agg = sum(scores[:m]) / min(m, len(scores))
        elif method == "rrf_per_doc":
            agg = sum(1.0 / (k + pos) for pos, _ in entries)
        else:
            agg = sum(s * decay ** i for i, s in enumerate(scores[:top_l]))
        best = max(entries, key=lambda e: e[1].score)[1]
        out.append((best, agg))
    out.sort(key=lambda pair: -pair[1])
    return out
