"""Search over the team store: a keyword list from Milvus BM25 and a vector list from Milvus dense
search, over every live repository and branch asked for, fused with codesearch's weighted RRF and
ranked by the same ranking stage as a local search; callers and callees from the resolved edges
(team_relations.py).

Filters go to Milvus as a boolean expression; what an expression cannot say exactly (a path glob's
character classes, which rows are live) is checked on the candidates it returns.
"""

from __future__ import annotations

import fnmatch
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache, partial

from ..analysis.query_shape import embedding_text
from ..config import Settings
from ..embedding.base import Embedder
from ..filters import Filters, sql_globs
from ..model import Chunk
from ..search.collapse import collapse_ranked, indexed_traits
from ..search.fusion import weighted_rrf
from ..search.present import related_result, search_result, term_pattern
from ..search.query import Query
from ..search.ranking import RankingOptions, rank, template_shares
from ..search.relations import QUERY_DEPTH, parse_relation
from ..search.requests import (
    RelatedResult,
    RelationsAnswer,
    RelationsRequest,
    RelationTarget,
    SearchAnswer,
    SearchRequest,
    SearchResult,
)
from ..search.retrievers.keyword import COLUMN_WEIGHTS, searched_terms
from ..search.searcher import EXACT_CANDIDATES, fusion_weights, rank_relation, template_candidates
from ..vocabulary import NON_DEFINITION_KINDS, RETRIEVERS_OF_MODE
from .keyword_score import Collection, bm25, columns_of, phrases_held
from .milvus_store import (
    CHUNKS,
    LiveFile,
    MilvusStore,
    RepoState,
    is_live,
    literal,
    live_files,
    live_scope,
    row_uid,
)
from .stemming import porter
from .team_graph import GraphCache, graph_list
from .team_relations import MAX_CALL_SITES, Found, RelationReader, walk

OVERFETCH = 2  # candidates asked of Milvus per candidate kept: some fail the liveness or glob check
RESCORE_DEPTH = 5  # Milvus BM25 candidates scored by the local keyword score, per candidate kept
TERM_SEARCHES = 8  # a query's rarest terms searched alone as well, for more candidates ...
TERM_DEPTH = 1.0  # ... this many per candidate kept, each
MAX_SCOPED_BRANCHES = 8  # up to this many branches searched, the expression names each one's live generation
TEAM_RETRIEVERS = ("vector", "keyword", "graph")  # the graph runs last: the keyword list seeds it


@dataclass(frozen=True)
class Scope:
    """The repositories and branches one answer covers (None: all)."""

    repo: str | None = None
    branch: str | None = None

    def covers(self, state: RepoState) -> bool:
        return (self.repo is None or state.repo == self.repo) and (self.branch is None or state.branch == self.branch)


class TeamSearcher:
    """Answers searches and relations over a team store; keeps each branch's live file map
    until its state record names another generation."""

    def __init__(self, store: MilvusStore, settings: Settings, embedder: Embedder | None):
        self.store = store
        self.settings = settings
        self.embedder = embedder
        self._live: dict[tuple[str, str], tuple[int, dict[str, LiveFile]]] = {}
        self.graphs = GraphCache(store)
        self._terms: dict[tuple[str, str], tuple[int, Collection]] = {}  # keyword statistics per branch
        self._lock = threading.Lock()

    # --- what is live -----------------------------------------------------------------------
    def states(self, scope: Scope) -> list[RepoState]:
        return [s for s in self.store.states() if scope.covers(s) and s.live_gen > 0]

    def live(self, state: RepoState) -> dict[str, LiveFile]:
        key = (state.repo, state.branch)
        with self._lock:
            have = self._live.get(key)
        if have is None or have[0] != state.live_gen:
            files = live_files(self.store.file_rows(state.repo, state.branch, state.live_gen))
            have = (state.live_gen, files)
            with self._lock:
                self._live[key] = have
        return have[1]

    def visibility(self, states: list[RepoState]) -> Callable[[dict], bool]:
        """Whether a chunk's row (repo, branch, path, gen) is live in one of these branches (the
        branches' live file maps read once, here)."""
        maps = {(s.repo, s.branch): self.live(s) for s in states}
        return lambda row: is_live(row, maps.get((row["repo"], row["branch"])))

    @staticmethod
    def expression(states: list[RepoState], filters: Filters, scope: Scope | None = None) -> str:
        """The Milvus filter: the branches covered and the filters. Which rows are live is checked
        on the candidates (their generation against the live file map): an expression naming every
        branch's generation grew with the number of repositories, and so did each search's time."""
        parts = []
        if scope is not None and scope.repo is not None:
            parts.append(f"repo == {literal(scope.repo)}")
        if scope is not None and scope.branch is not None:
            parts.append(f"branch == {literal(scope.branch)}")
        if len(states) <= MAX_SCOPED_BRANCHES:  # a few: each branch's generations being written left out
            parts.append(live_scope(states))
        if filters.language:
            parts.append(f"language == {literal(filters.language)}")
        if filters.kind:
            parts.append(f"kind == {literal(filters.kind)}")
        if filters.path_glob:
            likes = [_like(g) for g in sql_globs(filters.path_glob)]
            if all(likes):
                parts.append("(" + " or ".join(f"path like {literal(x)}" for x in likes if x) + ")")
        return " and ".join(parts) or 'repo != ""'

    # --- search -----------------------------------------------------------------------------
    def search(self, request: SearchRequest, scope: Scope | None = None) -> SearchAnswer:
        """The local search's steps over the store: the retrievers' lists, weighted RRF, the exact
        phrases and message templates the candidates hold, the ranking stage, near-duplicates
        collapsed."""
        started = time.perf_counter()
        scope = scope or Scope()
        query = Query.parse(request.query, request.mode, request.filters)
        states = self.states(scope)
        names = [n for n in (request.retrievers or RETRIEVERS_OF_MODE[request.mode]) if n in TEAM_RETRIEVERS]
        candidates = max(self.settings.candidates, request.limit * 3)
        options = RankingOptions.asked(request.ranking, self.settings.ranking)
        timing: dict[str, float] = {}
        lists: dict[str, list[str]] = {}
        columns: dict[str, list[list[str]]] = {}  # keyword candidates' columns (keyword_score.columns_of)
        notes: list[str] = []
        if not states:
            notes.append("the team store holds no repository" + (f" named {scope.repo}" if scope.repo else "")
                         + (f" on branch {scope.branch}" if scope.branch else ""))
        relation = self._related(query, states, candidates) if "graph" in names and states else None
        if states:
            where = self.expression(states, query.filters, scope)
            visible = self.visibility(states)
            if "vector" in names:
                t = time.perf_counter()
                hits = [h for h in self._vector(query, where, candidates)
                        if visible(h) and _glob_ok(h["path"], query.filters)]
                lists["vector"] = [h["uid"] for h in hits][:candidates]
                timing["vector"] = _ms(t)
            if "keyword" in names:
                t = time.perf_counter()
                stems = [porter(term) for term in searched_terms(query)]
                collection = self.collection(states, stems)
                hits = [h for h in self._keyword_hits(stems, collection, where, candidates)
                        if visible(h) and _glob_ok(h["path"], query.filters)]
                columns = {h["uid"]: columns_of(h["keywords"]) for h in hits}
                lists["keyword"] = _keyword_order(stems, collection, columns)[:candidates]
                timing["keyword"] = _ms(t)
            if "graph" in names and relation is None:
                t = time.perf_counter()
                lists["graph"] = self._graph(query, states, lists.get("keyword", []), candidates)
                timing["graph"] = _ms(t)
        t = time.perf_counter()
        vendored = frozenset(f for s in states for f in s.vendored)
        if relation is not None:
            lists["graph"] = [f.row["uid"] for f in relation]
            rows: dict[str, dict] = {}
            ranked = rank_relation(query, {f.row["uid"]: f.depth for f in relation}, lists,
                                   partial(self._read_chunks, rows), options, vendored, self.settings)
        else:
            fused = weighted_rrf(lists, fusion_weights(self.settings, lists, query.long), k=self.settings.rrf_k)
            exact = self._exact(query, columns, options) if "keyword" in names else {}
            taken = {uid for uid, _ in fused}
            fused += [(uid, 0.0) for uid in exact if uid not in taken]  # as the local search: they join
            rows = self.store.chunks_by_uid([uid for uid, _ in fused])
            templates = self._templates(query, lists, exact, rows, options) if "keyword" in names else {}
            chunks = {uid: _chunk(row) for uid, row in rows.items()}
            ranked = rank(query, [(chunks[uid], score) for uid, score in fused if uid in chunks], options,
                          vendored, exact, templates)
        timing["rank"] = _ms(t)
        ranks = {name: {uid: i for i, uid in enumerate(ids, start=1)} for name, ids in lists.items()}
        pattern = term_pattern(query.terms)
        entries, traits = collapse_ranked(
            ranked, request.limit, self.settings.file_aggregation if request.files else None,
            lambda shown: {c.id: indexed_traits(rows[c.id]["fingerprint"], rows[c.id]["content_class"], c.path,
                                                vendored) for c in shown}, None)
        results = tuple(_placed(search_result(r, ranks, pattern, request.context, request.explain, score=agg,
                                              content_class=traits[r.chunk.id][1], similar=similar), rows)
                        for (r, agg), similar in entries)
        timing["total"] = _ms(started)
        writing = [s for s in states if s.writing_gen]
        return SearchAnswer(query=request.query, mode=request.mode, results=results,
                            timing_ms={k: round(v, 2) for k, v in timing.items()},
                            partial=True if writing else None, note="; ".join(notes) or None,
                            truncated=True if request.truncated else None)

    def _related(self, query: Query, states: list[RepoState], limit: int) -> list[Found] | None:
        """The callers or callees of a known name, when the query asks for a relation (as the
        local search answers it: two hops, nearest and heaviest first)."""
        parsed = parse_relation(query.text)
        if parsed is None:
            return None
        direction, name = parsed
        targets = self.definitions_named(states, name)
        if not targets:
            return None
        found = walk(RelationReader(self.store, states, self.live), targets, direction, QUERY_DEPTH)
        if query.filters.active:
            found = [f for f in found if _filters_ok(f.row, query.filters)]
        return found[:limit]

    def _read_chunks(self, rows: dict[str, dict], uids: list[str]) -> dict[str, Chunk]:
        """The chunks of these row keys, their rows kept in `rows` (the results are placed by them)."""
        rows.update(self.store.chunks_by_uid(uids))
        return {uid: _chunk(rows[uid]) for uid in uids if uid in rows}

    def _keyword_hits(self, stems: list[str], collection: Collection, where: str, limit: int) -> list[dict]:
        """Milvus BM25's candidates for the keyword list (the query's stemmed terms, `collection`:
        their statistics in the branches searched), with their keyword fields: RESCORE_DEPTH
        times as many as it keeps for the whole query, and TERM_DEPTH times as many for each of
        its TERM_SEARCHES rarest terms alone. Milvus weighs a term by its idf over the whole store: a term rare in
        the repository searched but common in others counted too little, and chunks that the
        local index ranks high on it fell below the deeper list."""
        if not stems:
            return []
        hits = self.store.keyword_search([" ".join(stems)], where, limit * RESCORE_DEPTH, keywords=True)
        holding = collection.holding
        rare = sorted((t for t in set(stems) if holding.get(t)), key=lambda t: (holding[t], t))[:TERM_SEARCHES]
        if len(set(stems)) > 1 and rare:
            hits += self.store.keyword_search(rare, where, max(1, round(limit * TERM_DEPTH)), keywords=True)
        first: dict[str, dict] = {}
        for hit in hits:
            first.setdefault(hit["uid"], hit)
        return list(first.values())

    def collection(self, states: list[RepoState], terms: list[str]) -> Collection:
        """bm25's statistics over the live chunks of these branches, for `terms`."""
        return Collection.joined([self.branch_terms(s) for s in states], terms)

    def branch_terms(self, state: RepoState) -> Collection:
        """One branch's keyword statistics, read from its live chunks once per live generation
        (counting a term's holders with TEXT_MATCH per query is slow on Milvus Lite)."""
        key = (state.repo, state.branch)
        with self._lock:
            have = self._terms.get(key)
        if have is None or have[0] != state.live_gen:
            live = self.live(state)
            rows = self.store.rows(CHUNKS, f"{MilvusStore.scope(state.repo, state.branch)} and "
                                   f"gen <= {state.live_gen}", ("path", "gen", "keywords"))
            have = (state.live_gen, Collection.of(r["keywords"] for r in rows if is_live(r, live)))
            with self._lock:
                self._terms[key] = have
        return have[1]

    def _exact(self, query: Query, columns: dict[str, list[list[str]]], options: RankingOptions
               ) -> dict[str, float]:
        """Uid -> the share of the query's exact phrases it holds, for the EXACT_CANDIDATES keyword
        candidates that hold the most, among those holding the share that goes up."""
        if not query.phrases or not options.exact_text:
            return {}
        at_least = options.exact_count(len(query.phrases))
        phrases = [[porter(t) for t in p.split()] for p in query.phrases]
        held = [(uid, n) for uid, cols in columns.items() if (n := phrases_held(phrases, cols)) >= at_least]
        held.sort(key=lambda pair: -pair[1])
        return {uid: n / len(phrases) for uid, n in held[:EXACT_CANDIDATES]}

    @staticmethod
    def _templates(query: Query, lists: dict[str, list[str]], exact: dict[str, float], rows: dict[str, dict],
                   options: RankingOptions) -> dict[str, float]:
        """Uid -> the share of the query's pasted message that one of its message templates covers,
        for the candidates near the top of a list or holding its exact phrases."""
        if not query.messages or not options.message_templates:
            return {}
        templates = {i: rows[i]["templates"] for i in template_candidates(lists, exact)
                     if i in rows and rows[i]["templates"]}
        return template_shares(query.messages, templates)

    def _vector(self, query: Query, where: str, limit: int) -> list[dict]:
        if self.embedder is None:
            return []
        vector = self.embedder.encode_query(embedding_text(query.shape) if query.shape else query.text)
        hits = self.store.vector_search(vector.tolist(), where, limit * OVERFETCH)
        minimum = self.settings.min_semantic_score
        return [h for h in hits if h["score"] >= minimum]

    def _graph(self, query: Query, states: list[RepoState], keyword: list[str], limit: int) -> list[str]:
        """Personalized PageRank from the definitions the query names and the keyword list's best hits."""
        branches = [self.graphs.of(state, self.live(state)) for state in states]
        ranked = graph_list(branches, query, keyword, limit * OVERFETCH)
        if not query.filters.active:
            return ranked[:limit]
        rows = self.store.chunks_by_uid(ranked)
        return [u for u in ranked if u in rows and _filters_ok(rows[u], query.filters)][:limit]

    # --- relations --------------------------------------------------------------------------
    def definitions_named(self, states: list[RepoState], name: str, filters: Filters | None = None) -> list[dict]:
        """Live definitions whose name or qualified name is `name`."""
        if not states:
            return []
        short = re.split(r"\.|::", name.strip())[-1]
        kinds = ", ".join(literal(k) for k in sorted(NON_DEFINITION_KINDS))
        where = (f"{self.expression(states, filters or Filters())} and kind not in [{kinds}] and "
                 f"(name == {literal(short)} or qualified_name == {literal(name.strip())})")
        visible = self.visibility(states)
        rows = [r for r in self.store.chunks_where(where, MAX_CALL_SITES) if visible(r)]
        if short != name.strip():  # a qualified name: those whose qualified name ends with it
            rows = [r for r in rows if r["qualified_name"].endswith(name.strip())] or rows
        return rows

    def relations(self, request: RelationsRequest, scope: Scope | None = None) -> RelationsAnswer:
        started = time.perf_counter()
        scope = scope or Scope()
        states = self.states(scope)
        targets = self.definitions_named(states, request.name)
        found = walk(RelationReader(self.store, states, self.live), targets, request.direction, request.depth)
        if request.filters.active:
            found = [f for f in found if _filters_ok(f.row, request.filters)]
        if request.limit is not None:
            found = found[:request.limit]
        results = tuple(_placed_related(related_result(_chunk(f.row), f.weight / f.depth, f.depth, request.name,
                                                       f.lines or None, f.how), f.row) for f in found)
        answer_targets = tuple(RelationTarget(t["path"], t["start_line"], t["qualified_name"], repo=t["repo"])
                               for t in targets)
        note = None if targets else f"no definition named {request.name!r} in the team store"
        return RelationsAnswer(name=request.name, direction=request.direction, targets=answer_targets,
                               results=results, timing_ms={"total": round(_ms(started), 2)}, note=note)


def _keyword_order(stems: list[str], collection: Collection, columns: dict[str, list[list[str]]]) -> list[str]:
    """The candidates in the local keyword list's order: FTS5's bm25 over the branches searched
    (keyword_score.py); Milvus's order breaks ties."""
    scores = {uid: bm25(stems, cols, COLUMN_WEIGHTS, collection) for uid, cols in columns.items()}
    return sorted(columns, key=lambda uid: -scores[uid])


def _chunk(row: dict) -> Chunk:
    """A store row as the ranking's Chunk; its id is the row's key (chunk ids repeat across
    repositories and branches), its parent's likewise."""
    parent = row_uid(row["repo"], row["branch"], row["gen"], row["parent_id"]) if row["parent_id"] else None
    return Chunk(id=row["uid"], parent_id=parent, path=row["path"], language=row["language"], kind=row["kind"],
                 name=row["name"], qualified_name=row["qualified_name"], signature=row["signature"],
                 docstring=row["docstring"], start_line=row["start_line"], end_line=row["end_line"],
                 content_hash=row["content_hash"], header="", text=row["text"], part=row["part"],
                 name_line=row["name_line"], name_column=row["name_column"])


def _placed(result: SearchResult, rows: dict[str, dict]) -> SearchResult:
    """A result as the store's row places it: the chunk's own id, its repository and branch (the
    near-duplicates' ids likewise)."""
    row = rows[result.id]
    similar = tuple(replace(s, id=rows[s.id]["chunk_id"]) for s in result.similar) if result.similar else None
    return replace(result, id=row["chunk_id"], repo=row["repo"], branch=row["branch"], similar=similar)


def _placed_related(result: RelatedResult, row: dict) -> RelatedResult:
    return replace(result, id=row["chunk_id"], repo=row["repo"], branch=row["branch"])


def _like(glob: str) -> str | None:
    """A SQLite GLOB as a Milvus `like` pattern where one says the same (a literal start, then `*`)."""
    head = glob[:-1] if glob.endswith("*") else glob
    if any(c in head for c in "*?[%_\\"):
        return None
    return head + "%" if glob.endswith("*") else head


def _glob_ok(path: str, filters: Filters) -> bool:
    if not filters.path_glob:
        return True
    return any(fnmatch.fnmatchcase(path, g) for g in _globs(filters.path_glob))


@lru_cache(maxsize=256)
def _globs(path_glob: str) -> tuple[str, ...]:
    """The path filter's globs, made once a filter, not once a candidate checked."""
    return sql_globs(path_glob)


def _filters_ok(row: dict, filters: Filters) -> bool:
    return ((not filters.language or row["language"] == filters.language)
            and (not filters.kind or row["kind"] == filters.kind) and _glob_ok(row["path"], filters))


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000
