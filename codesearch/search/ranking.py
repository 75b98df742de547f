"""The ranking stage after fusion. Every step can be switched off for ablation.

Scores coming in are fused RRF scores; each step multiplies or reorders them and records what
it did, so `--explain` can show it. The strengths were tuned on one half of the benchmark
repositories and checked on the other (scripts/bench_quality.py, docs/benchmarks.md, "Retrieval quality").
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import lru_cache

from ..analysis.content_class import CODE, is_secondary_path
from ..analysis.messages import best_coverage
from ..analysis.query_shape import code_words, mentions
from ..analysis.tokens import STOPWORDS, identifier_terms, split_identifier
from ..config import FILE_AGGREGATIONS
from ..model import Chunk
from ..vocabulary import DEFINITION_KINDS, TYPE_KINDS
from .class_weights import class_of, weigh_classes
from .query import Query

NAMED_FILE_BOOST = 1.5  # a file that a report's traceback or text names
# a name as code writes it in prose: `bats_pipe`, `withDisplay`, `res.send`, `Plug::Conn`, `$ZodType`
IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#|->)[A-Za-z_$][\w$]*)*")
QUALIFIER = re.compile(r"\.|::|#|->")
JOINED_WORDS = 3  # "price list" and "json object model" name price_list.py and JsonObjectModel


@dataclass
class RankingOptions:
    """Which steps run (the booleans: ablation switches them off) and how strong each one is."""

    symbol_boost: bool = True
    name_path_boost: bool = True
    test_penalty: bool = True
    parent_child_dedupe: bool = True
    file_diminishing: bool = True
    query_names: bool = True  # identifiers and names made of query words, in a query of words
    file_coherence: bool = True
    exact_text: bool = True  # chunks that hold the query's text word for word, first
    file_decay: float = 0.7
    test_factor: float = 0.5  # every class but code (search/class_weights.py)
    path_weight: float = 0.3  # per query word in the path (at most two count)
    name_weight: float = 0.15  # per query word in the definition's name (at most two count)
    prefix_chars: int = 3  # a query word and a path or name word match when one starts with the other, this long
    word_decay: float = 0.9  # each later query word counts this much of the one before it
    identifier_factor: float = 2.0
    joined_stem_factor: float = 1.6
    main_definition_factor: float = 1.3
    coherence_share: float = 0.2  # of the top score, given to the file with the most candidate score
    symbol_test_demotion: float = 1.5  # tiers a test's definition of the symbol drops
    symbol_stem_bonus: float = 0.5  # tiers a definition gains in the file named after it
    exact_min_share: float = 0.3  # of the query's exact phrases a chunk must hold to go up
    exact_min_phrases: int = 3  # and at least this many of them (all of them, of fewer)
    message_templates: bool = True  # chunks whose message template produced the pasted message, first
    template_min_share: float = 0.5  # of a pasted message that one template of a chunk must cover

    @classmethod
    def off(cls) -> RankingOptions:
        """Every step off: the fused order as it came."""
        return cls(**{f.name: False for f in fields(cls) if f.type in (bool, "bool")})

    @classmethod
    def asked(cls, requested: RankingOptions | None, ranking: bool) -> RankingOptions:
        """A search's options: the request's own, else every step or none as the setting
        `ranking` says."""
        return requested or (cls() if ranking else cls.off())

    def exact_least(self, phrases: int) -> float:
        """The share of a query's `phrases` exact phrases a chunk must hold to go up."""
        return max(self.exact_min_share, min(self.exact_min_phrases, phrases) / phrases)

    def exact_count(self, phrases: int) -> int:
        """How many of a query's `phrases` exact phrases a chunk must hold to go up (exact_least)."""
        return math.ceil(self.exact_least(phrases) * phrases - 1e-9)


@dataclass(slots=True)
class Ranked:
    chunk: Chunk
    score: float
    notes: list[str] = field(default_factory=list)
    signals: dict[str, float] = field(default_factory=dict)  # step -> what it saw (scripts/train_ranker.py)


def _stem(word: str) -> str:
    for suffix in ("ing", "ers", "er", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[:-len(suffix)]
    return word


def rank(query: Query, fused: list[tuple[Chunk, float]], options: RankingOptions,
         vendored: frozenset[str] = frozenset(), exact: Mapping[str, float] = {},
         templates: Mapping[str, float] = {}) -> list[Ranked]:
    """`vendored`: folders of code that is not the project's own (indexing/vendored.py), penalized
    as tests are. `exact`: chunk id -> the share of the query's exact phrases it holds;
    `templates`: chunk id -> the share of the pasted message its best template covers
    (template_shares)."""
    items = [Ranked(chunk, score) for chunk, score in fused]
    if options.name_path_boost:
        _boost_names(query, items, options)
        if query.shape:
            _boost_named_files(query.shape.paths, items)
    if options.test_penalty:
        weigh_classes(query, items, options.test_factor, vendored)
    if options.query_names and not query.long and not query.symbol:  # a report's: _query_words
        _boost_identifiers(query.text, items, options.identifier_factor)
        _boost_joined_names(query.text, items, options.joined_stem_factor, options.main_definition_factor)
    if options.file_coherence:
        _file_coherence(items, options.coherence_share)
    if options.symbol_boost and query.symbol:  # last: its tiers must not be reordered
        _boost_symbol(query.text, items, options.symbol_test_demotion, options.symbol_stem_bonus)
    shares = _exact_shares(query, exact if options.exact_text else {},
                           templates if options.message_templates else {}, options)
    if shares:
        _boost_exact(items, shares, options.test_factor if options.test_penalty else 1.0, vendored)
    items.sort(key=lambda r: -r.score)
    if options.parent_child_dedupe:
        items = _dedupe_parent_child(items)
    if options.file_diminishing:
        _diminish_per_file(items, options.file_decay)
        items.sort(key=lambda r: -r.score)
    return items


def _file_stem(path: str) -> str:
    """The file's name up to its first dot: `Builders.common.kt` -> `Builders`."""
    return path.rsplit("/", 1)[-1].split(".", 1)[0]


@lru_cache(maxsize=65536)
def _loose(name: str) -> str:
    """A name without case and separators: `get_user`, `getUser` and `GetUser` are one."""
    return re.sub(r"[_$\-]", "", name).lower()


def _base_name(name: str) -> str:
    """A definition's name without template arguments: `formatter<T, Char>` -> `formatter`."""
    return name.split("<", 1)[0].strip()


def _identifier_shaped(word: str) -> bool:
    """Written as code is, not as prose: an inner underscore or a hump (`load_config`, `withDisplay`)."""
    return "_" in word.strip("_") or bool(re.search(r"[a-z][A-Z]|[A-Z][a-z]+[A-Z]", word))


def _boost_identifiers(query: str, items: list[Ranked], factor: float) -> None:
    """A query of words that writes a name as code does ("how bats_pipe chains commands",
    "res.send body encoding"): the definitions of that name, times `factor`."""
    names = set()
    for token in IDENTIFIER.findall(query):
        parts = QUALIFIER.split(token)
        if len(parts) > 1 or _identifier_shaped(parts[-1]):
            names.add(parts[-1])
    if not names or factor == 1.0:
        return
    for r in items:
        c = r.chunk
        if c.kind in DEFINITION_KINDS and c.part == 1 and c.name.lstrip("$") in names:
            r.score *= factor
            r.notes.append(f"named in the query x{factor:.2f}")
            r.signals["identifier"] = 1.0


def _joined_words(query: str) -> set[str]:
    """Runs of two to JOINED_WORDS query words written as one name ("price list" -> pricelist),
    not starting or ending with a stopword; a plural also without its `s`."""
    words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", query)]
    out = set()
    for n in range(2, JOINED_WORDS + 1):
        for i in range(len(words) - n + 1):
            run = words[i:i + n]
            if run[0] in STOPWORDS or run[-1] in STOPWORDS:
                continue
            joined = "".join(run)
            out.add(joined)
            if joined.endswith("s"):
                out.add(joined[:-1])
    return out


def _boost_joined_names(query: str, items: list[Ranked], stem_factor: float, main_factor: float) -> None:
    """Names spelled by the query's words: a file named by a run of them ("URL encoded form"
    -> URLEncodedForm.swift) times `stem_factor`; the definition a file is named after, when a
    query word or run names it ("Deferred and await" -> `interface Deferred` in Deferred.kt),
    times `main_factor`."""
    joined = _joined_words(query)
    named = {_loose(w) for w in re.findall(r"[A-Za-z][A-Za-z0-9_]*", query)
             if len(w) >= 3 and w.lower() not in STOPWORDS} | joined
    for r in items:
        c = r.chunk
        factor = 1.0
        stem = _loose(_file_stem(c.path))
        if c.kind in DEFINITION_KINDS and c.part == 1:
            name = _loose(_base_name(c.name))
            if name in named and name == stem:
                factor = main_factor
                r.signals["main_definition"] = 1.0
        if stem in joined:
            factor = max(factor, stem_factor)
            r.signals["joined_stem"] = 1.0
        if factor != 1.0:
            r.score *= factor
            r.notes.append(f"name spelled by the query x{factor:.2f}")


def _file_coherence(items: list[Ranked], share: float) -> None:
    """Several chunks of one file among the candidates say more than one: each file's best chunk
    gains `share` of the top score, scaled by the file's summed candidate score against the
    file with the most."""
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
        r.score += share * top * total[path] / most
        r.signals["coherence"] = total[path] / most


def _boost_symbol(query: str, items: list[Ranked], test_demotion: float, stem_bonus: float) -> None:
    """A bare name: its definitions first, in tiers that fused scores cannot reorder:
    qualified match > exact-case type > exact-case other > the same name in another case or
    with other separators (`get_user` for getUser) or a `$` in front. A test's definition drops
    `test_demotion` tiers; one in a file named after it (SqlMapper.cs among SqlMapper.*.cs)
    gains `stem_bonus`."""
    symbol = QUALIFIER.sub(".", re.sub(r"\(\)$", "", query.strip()))
    short = symbol.rsplit(".", 1)[-1]
    loose = _loose(short)
    gap = 2 * max((r.score for r in items), default=0.0) or 1.0
    for r in items:
        c = r.chunk
        if c.kind not in DEFINITION_KINDS or c.part != 1:
            continue
        base = _base_name(c.name)
        if base == short:
            qualified = symbol != short and (c.qualified_name == symbol or c.qualified_name.endswith("." + symbol))
            tier = 4.0 if qualified else 3.0 if c.kind in TYPE_KINDS else 2.0
            note = "defines the symbol"
        elif _loose(base) == loose:
            tier, note = 1.0, "defines the symbol (case differs)"
        else:
            continue
        if is_secondary_path(c.path):
            tier -= test_demotion
        if _loose(c.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]) == loose:
            tier += stem_bonus
        r.score += gap * tier
        r.notes.append(note)
        r.signals["symbol_tier"] = tier


def template_shares(messages: tuple[str, ...], templates: Mapping[str, str]) -> dict[str, float]:
    """Chunk id -> the most of one of the pasted `messages` (Query.messages) that one of its
    `templates` (the catalog's, RECORD-joined) covers, placeholders matching the values filled in."""
    out = {}
    for cid, text in templates.items():
        share = best_coverage(messages, text)
        if share:
            out[cid] = share
    return out


def _exact_shares(query: Query, exact: Mapping[str, float], templates: Mapping[str, float],
                  options: RankingOptions) -> dict[str, float]:
    """Chunk id -> the share of the query it holds as written: the larger of its share of the
    query's exact phrases (at least `exact_least` of them) and of the pasted message its best
    template covers (at least `template_min_share`)."""
    least = options.exact_least(len(query.phrases)) if query.phrases else 1.0
    out = {cid: share for cid, share in exact.items() if share >= least}
    for cid, share in templates.items():
        if share >= options.template_min_share and share > out.get(cid, 0.0):
            out[cid] = share
    return out


def _boost_exact(items: list[Ranked], shares: Mapping[str, float], test_factor: float,
                 vendored: frozenset[str]) -> None:
    """A pasted message or log line: the chunks that hold enough of it as written (`shares`,
    _exact_shares) go up by their share of twice the top score, above every other when they hold
    half or more (the statement that produces a message holds all its words but the values
    filled in); a test's or vendored chunk, which quotes messages to check them, by
    `test_factor` of it."""
    gap = 2 * max((r.score for r in items), default=0.0) or 1.0
    for r in items:
        share = shares.get(r.chunk.id, 0.0)
        if share:
            if class_of(r.chunk.path, r.chunk.language, vendored) != CODE:
                share *= test_factor
            r.score += gap * share
            r.notes.append(f"holds {share:.0%} of the query's text word for word")
            r.signals["exact"] = share


def _query_words(query: Query, decay: float) -> dict[str, float]:
    """The words to find in file, folder and definition names (identifiers split, stemmed), each
    with its weight: a question's words, the first counting 1 and each later one `decay` times
    the one before (the subject comes first); a report's identifiers and file names, each 1 (its
    prose would match names everywhere)."""
    if query.shape:
        return {_stem(w): 1.0 for w in sorted(code_words(query.shape))}
    out: dict[str, float] = {}
    for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", query.text):
        for t in identifier_terms(w):
            if t not in STOPWORDS and len(t) > 2:
                out.setdefault(_stem(t), decay ** len(out))
    return out


def _matched(words: dict[str, float], heads: dict[str, list[str]], terms: frozenset[str], prefix: int) -> float:
    """The summed weight of the words found in `terms`, whole or (`prefix` characters at least)
    as a prefix either way: lockfile ~ lock, config ~ configuration. `heads`: the words by their
    first `prefix` characters (a word and a term can only match if those agree)."""
    found = set(words.keys() & terms)
    if prefix:
        for term in terms:
            if len(term) >= prefix:
                found.update(w for w in heads.get(term[:prefix], ()) if w.startswith(term) or term.startswith(w))
    return sum(words[w] for w in found)


def _boost_names(query: Query, items: list[Ranked], options: RankingOptions) -> None:
    """Query words in the file's or folder's name, or in the chunk's own name."""
    words = _query_words(query, options.word_decay)
    if not words:
        return
    prefix = options.prefix_chars
    heads: dict[str, list[str]] = defaultdict(list)
    for word in words:
        if prefix and len(word) >= prefix:
            heads[word[:prefix]].append(word)
    matched: dict[frozenset[str], float] = {}  # many chunks share a path: each set of terms is matched once

    def weight(terms: frozenset[str]) -> float:
        found = matched.get(terms)
        if found is None:
            found = matched[terms] = _matched(words, heads, terms, prefix)
        return found

    names = options.name_weight != 0
    for r in items:
        in_path = weight(_path_terms(r.chunk.path))
        in_name = weight(_name_terms(r.chunk.name)) if names and r.chunk.kind in DEFINITION_KINDS else 0.0
        if in_path or in_name:
            factor = 1.0 + options.path_weight * min(in_path, 2) + options.name_weight * min(in_name, 2)
            r.score *= factor
            r.signals["path_words"], r.signals["name_words"] = min(in_path, 2), min(in_name, 2)
            r.notes.append(f"name/path match x{factor:.2f}")


def _boost_named_files(named: tuple[str, ...], items: list[Ranked]) -> None:
    """A report's own pointers: the files its traceback or text names."""
    if not named:
        return
    for r in items:
        if mentions(r.chunk.path, named):
            r.score *= NAMED_FILE_BOOST
            r.notes.append(f"file named by the report x{NAMED_FILE_BOOST}")
            r.signals["named_file"] = 1.0


@lru_cache(maxsize=65536)
def _path_terms(path: str) -> frozenset[str]:
    return frozenset(_stem(t) for part in path.lower().split("/") for t in split_identifier(part.split(".")[0]))


@lru_cache(maxsize=65536)
def _name_terms(name: str) -> frozenset[str]:
    return frozenset(_stem(t) for t in split_identifier(name))


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
            r.signals["parent_child"] = 1.0
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
            r.signals["file_position"] = n
        seen[r.chunk.path] += 1


# --- file aggregation ----------------------------------------------------------------------
AGGREGATIONS = FILE_AGGREGATIONS  # the setting `file_aggregation` takes one of these


def file_score(scores: Sequence[float], method: str, m: int = 3, decay: float = 0.5, top_l: int = 5) -> float:
    """A file's score from its chunks' scores, best first, by an aggregation other than
    `rrf_per_doc` (which reads ranks): `max_p` the best, `top_m_sum`/`top_m_avg` the best m,
    `weighted_top` the best top_l, each `decay` times the weight of the one before."""
    if method == "max_p":
        return scores[0]
    if method == "top_m_sum":
        return sum(scores[:m])
    if method == "top_m_avg":
        return sum(scores[:m]) / min(m, len(scores))
    return sum(s * decay ** i for i, s in enumerate(scores[:top_l]))


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
        if method == "rrf_per_doc":
            agg = sum(1.0 / (k + pos) for pos, _ in entries)
        else:
            agg = file_score(sorted((r.score for _, r in entries), reverse=True), method, m, decay, top_l)
        best = max(entries, key=lambda e: e[1].score)[1]
        out.append((best, agg))
    out.sort(key=lambda pair: -pair[1])
    return out


def relation_answers_first(answer: list[Ranked], context: list[Ranked], depth: dict[str, int],
                           max_depth: int) -> list[Ranked]:
    """A relation question's answers (`depth`: hops from what it names) above every other result,
    nearer hops first and each tier in its ranked order, then the rest of the search as context."""
    gap = 2 * max((r.score for r in context + answer), default=0.0)
    for r in answer:
        r.score += gap * (max_depth + 1 - depth[r.chunk.id])
        r.notes.append(f"answers the relation ({depth[r.chunk.id]} hop)")
    answer.sort(key=lambda r: -r.score)
    taken = {r.chunk.id for r in answer}
    return answer + [r for r in context if r.chunk.id not in taken]
