"""Personalized PageRank over the call and import graph, from the definitions a query names and
the keyword retriever's best hits."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import ClassVar

from ...analysis.query_shape import symbol_names
from ...analysis.tokens import identifier_terms
from ...store.call_graph import CallGraph
from ...store.catalog import Catalog
from ..pagerank import personalized_pagerank
from ..query import Query
from .retriever import Hits

NAMED_SEED_WEIGHT = 2.0  # a definition the query names outweighs any retriever's top hit (1/rank)
MAX_NAMED_SEEDS = 64  # a word that names thousands of definitions in a monorepo ("Error") seeds the first 64
SEEDS_PER_LIST = 10
MAX_NAMED_WORDS = 250  # a long query names at most this many (distinct) words for a lookup


class GraphRetriever:
    name: ClassVar[str] = "graph"
    # the keyword list's best hits seed it (with the definitions the query names): seeded by the
    # vector list as well, it waited on the slowest retriever (docs/benchmarks.md, "Query latency")
    seeds_from: ClassVar[tuple[str, ...]] = ("keyword",)

    def __init__(self, catalog: Catalog, graph: CallGraph):
        self.catalog = catalog
        self.graph = graph

    def coverage(self) -> float | None:
        return None

    def named_definitions(self, query: Query) -> list[str]:
        """Definitions whose name is a word of the query (named_words), or a word joined as an
        identifier's whole term (joined_terms)."""
        words = named_words(query)
        return self.catalog.graph.ids_defining(words, joined_terms(words))

    def search(self, query: Query, limit: int, earlier: Mapping[str, Sequence[str]]) -> Hits:
        seeds = interleave([earlier[name][:SEEDS_PER_LIST] for name in self.seeds_from if name in earlier])
        named = self.named_definitions(query)[:MAX_NAMED_SEEDS]
        rids = self.graph.rids_of(list(dict.fromkeys(named + seeds)))
        personalization = seed_weights(named, seeds, rids.get)
        ranked_rids = personalized_pagerank(self.graph, personalization) if personalization else []
        if not ranked_rids:
            return Hits(note="no seed in the graph")
        ids = self.graph.ids_of([rid for rid, _ in ranked_rids])
        ranked = [(ids[rid], score) for rid, score in ranked_rids if rid in ids]
        if query.filters.active:
            allowed = self.catalog.files.ids_matching([n for n, _ in ranked], query.filters)
            ranked = [(n, s) for n, s in ranked if n in allowed]
        ranked = ranked[:limit]
        return Hits([n for n, _ in ranked], [s for _, s in ranked])


def named_words(query: Query) -> set[str]:
    """The words of a query that may name definitions; for a report, the identifiers it writes
    in code style (its prose would name `run`, `value`, `error`...)."""
    if query.shape:
        return set(symbol_names(query.shape)[:MAX_NAMED_WORDS])
    return set(sorted(set(re.findall(r"[A-Za-z_$][\w$]*", query.text)))[:MAX_NAMED_WORDS])


def joined_terms(words: Iterable[str]) -> set[str]:
    """Each word as one identifier's whole term (`http_exception` -> `httpexception`)."""
    return {terms[0] for terms in map(identifier_terms, words) if terms}


def seed_weights(named: Sequence[str], seeds: Sequence[str], rid_of: Callable[[str], int | None]
                 ) -> dict[int, float]:
    """PageRank's personalization: NAMED_SEED_WEIGHT for each definition the query names, 1/rank
    for each of a list's best hits; `rid_of`: a node's graph number (None: not in the graph)."""
    weights: dict[int, float] = {}
    for node, weight in [(n, NAMED_SEED_WEIGHT) for n in named] + [(n, 1.0 / r) for r, n in enumerate(seeds, 1)]:
        rid = rid_of(node)
        if rid is not None:
            weights[rid] = weights.get(rid, 0) + weight
    return weights


def interleave(lists: list[Sequence[str]]) -> list[str]:
    """First of each list, then second of each, ...; each id once."""
    out: list[str] = []
    seen: set[str] = set()
    for i in range(max((len(x) for x in lists), default=0)):
        for x in lists:
            if i < len(x) and x[i] not in seen:
                seen.add(x[i])
                out.append(x[i])
    return out
