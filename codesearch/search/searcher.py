"""A search: run the mode's retrievers, fuse their lists (weighted RRF), rank, then present.

A relation query ("who calls X") takes its own path: the call graph answers it, and the other
retrievers of the mode only add context after the answer.
"""

from __future__ import annotations

import difflib
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace

from ..analysis.messages import message_words
from ..config import Settings
from ..indexing.index import Index
from ..model import Chunk
from ..store.call_graph import CallGraph
from ..store.call_results import may_reach
from ..vocabulary import NON_DEFINITION_KINDS, RETRIEVERS_OF_MODE
from .budget import fit_budget
from .collapse import collapse_files, collapse_ranked, indexed_traits
from .file_ranking import PER_RETRIEVER, rank_files
from .fusion import weighted_rrf
from .grep import GrepFacts, grep
from .present import definition_of, impact_of, related_result, search_result, term_pattern
from .query import Query
from .ranking import Ranked, RankingOptions, rank, relation_answers_first, template_shares
from .reindex_cache import ReindexCache
from .relations import QUERY_DEPTH, Related, definitions_named, neighbours, parse_relation
from .requests import (
    DefinitionAnswer,
    DefinitionRequest,
    GrepAnswer,
    GrepRequest,
    ImpactAnswer,
    ImpactRequest,
    Reference,
    ReferencesAnswer,
    ReferencesRequest,
    RelationsAnswer,
    RelationsRequest,
    RelationTarget,
    SearchAnswer,
    SearchRequest,
    SymbolsAnswer,
    SymbolsRequest,
)
from .retrievers import RETRIEVERS
from .retrievers.retriever import Hits, Retriever, SearchContext
from .source import fill_text

SYMBOL_SEARCH_CHARS = 3  # a symbol query this long also asks the hybrid search (shorter: names only)
SYMBOL_SEARCH_RESULTS = 20  # at most this many symbols come from it (more costs time on every keystroke)
NEAR_NAMES = 5  # names suggested for a name that means nothing
NEAR_CANDIDATES = 200  # names sharing its longest word, among which those are chosen
# a report's fusion weights, as factors of the settings': a bug report or a commit message names
# the code it is about, so its words find the file better than its meaning does
# (docs/benchmarks/localization.md)
REPORT_WEIGHTS: dict[str, float] = {"keyword": 3.0}
EXACT_CANDIDATES = 20  # chunks read that hold the most of a query's exact phrases
TEMPLATE_CANDIDATES = 100  # of each retriever's list, chunks whose message templates are matched
MAX_CALL_SITES = 1000  # call sites read for the callers of a name defined in another repository
# retrievers run beside each other on these threads (the model, Chroma and SQLite release the GIL)
_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="retriever")


class Searcher:
    """Answers queries over one Index; keeps the graph and the model warm between queries.
    Many threads may search at once: each reads through its own catalog connection."""

    def __init__(self, index: Index):
        self.index = index
        self.catalog = index.catalog
        self.settings = index.settings
        self.graph = CallGraph(index.catalog)
        self.grep_facts = GrepFacts(index.catalog)
        self._context = SearchContext(index, self.graph)
        self._retrievers: dict[str, Retriever] = {}
        self._vendored = ReindexCache(self.catalog, self._read_vendored_folders, frozenset[str]())

    def retriever(self, name: str) -> Retriever:
        found = self._retrievers.get(name)
        if found is None:
            found = self._retrievers[name] = RETRIEVERS[name](self._context)
        return found

    # --- search ---------------------------------------------------------------------------
    def search(self, request: SearchRequest, side_by_side: bool = True) -> SearchAnswer:
        """`side_by_side`: run independent retrievers at the same time, on the pool; a busy
        caller turns it off (other searches keep the cores busy already, and more threads only
        queue on the GIL)."""
        started = time.perf_counter()
        query = Query.parse(request.query, request.mode, request.filters)
        names = RETRIEVERS_OF_MODE[request.mode] if request.retrievers is None else request.retrievers
        candidates = max(self.settings.candidates, request.limit * 3)
        relation = self._related(query, candidates) if "graph" in names else None
        options = self._options(request)
        exact_text = bool(relation is None and query.phrases and "keyword" in names and options.exact_text)
        at_least = options.exact_count(len(query.phrases)) if exact_text else 0
        exact_future = _POOL.submit(self._exact_matches, query, at_least) if exact_text and side_by_side else None
        lists, scores, notes, timing, problems = self._retrieve(
            query, [n for n in names if not (relation and n == "graph")], candidates, side_by_side)
        files = None
        t = time.perf_counter()
        if relation is not None:
            direction, related = relation
            lists["graph"] = [r.id for r in related]
            notes["graph"] = f"{direction} of the named definitions"
            ranked = rank_relation(query, {r.id: r.depth for r in related}, lists, self.catalog.files.chunks_by_ids,
                                   self._options(request), self.vendored_folders(), self.settings)
        else:
            exact = (exact_future.result() if exact_future else
                     self._exact_matches(query, at_least) if exact_text else {})
            templates = (self._template_matches(query, lists, exact) if query.messages and "keyword" in names
                         and options.message_templates else {})
            ranked = self._rank(query, lists, options, exact, templates)
            if request.files and (request.file_ranking or self.settings.file_ranking) == PER_RETRIEVER:
                weights = fusion_weights(self.settings, lists, query.long)
                files = rank_files(query, lists, scores, ranked, weights, options, self.vendored_folders(), exact,
                                   templates)
        timing["rank"] = _ms(t)
        ranks = {name: {cid: i for i, cid in enumerate(ids, start=1)} for name, ids in lists.items()}
        pattern = term_pattern(query.terms)
        if files is not None:
            entries, traits = collapse_files(files, request.limit, self._traits, self._read_text)
        else:
            entries, traits = collapse_ranked(ranked, request.limit,
                                              self.settings.file_aggregation if request.files else None, self._traits,
                                              self._read_text)
        # only the shown chunks need text; a copy in doubt was read already (its chunk is this search's)
        self._read_text([r.chunk for (r, _), _ in entries if not r.chunk.text])
        results = tuple(search_result(r, ranks, pattern, request.context, request.explain, score=agg,
                                      content_class=traits[r.chunk.id][1] if r.chunk.id in traits else None,
                                      similar=similar)
                        for (r, agg), similar in entries)
        timing["total"] = _ms(started)
        shares = [s for s in (self.retriever(n).coverage() for n in names) if s is not None]
        partial = bool(shares) and min(shares) < 1
        answer = SearchAnswer(query=request.query, mode=request.mode, results=results,
                              timing_ms={k: round(v, 2) for k, v in timing.items()},
                              partial=True if partial else None,
                              embedded_share=round(min(shares), 4) if partial else None,
                              notes={k: v for k, v in notes.items() if v} if request.explain else None,
                              note="; ".join(problems) or None, truncated=True if request.truncated else None)
        return fit_budget(answer, request.max_tokens)

    def _retrieve(self, query: Query, names: list[str], limit: int, side_by_side: bool = True
                  ) -> tuple[dict[str, list[str]], dict[str, list[float]], dict[str, str], dict[str, float], list[str]]:
        """Run the retrievers: the independent ones side by side on the pool (or one after another
        here), and each that starts from others' lists once those are in. Returns each one's ids,
        their scores, its note, its time, and the problems met."""
        lists: dict[str, list[str]] = {}
        scores: dict[str, list[float]] = {}
        notes: dict[str, str] = {}
        timing: dict[str, float] = {}
        problems: list[str] = []

        def run(name: str) -> tuple[Hits, float]:
            t = time.perf_counter()
            hits = self.retriever(name).search(query, limit, lists)
            return hits, _ms(t)

        def record(name: str, result: tuple[Hits, float]) -> None:
            hits, timing[name] = result
            lists[name], scores[name], notes[name] = hits.ids, hits.scores, hits.note
            problems.extend([hits.problem] if hits.problem else [])

        # the independent retrievers run on the pool side by side; one that starts from others'
        # lists runs here as soon as those are in: the graph follows the keyword list without
        # waiting for the vector side
        independent = [n for n in names if not self.retriever(n).seeds_from]
        pending: dict[Future, str] = {_POOL.submit(run, n): n for n in independent} if side_by_side else {}
        waiting = [n for n in names if n not in pending.values()]
        while waiting or pending:
            ready = next((n for n in waiting if all(s in lists for s in self.retriever(n).seeds_from
                                                    if s in names)), None)
            if ready is not None:
                waiting.remove(ready)
                record(ready, run(ready))
                continue
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                record(pending.pop(future), future.result())
        return lists, scores, notes, timing, problems

    def _options(self, request: SearchRequest) -> RankingOptions:
        return RankingOptions.asked(request.ranking, self.settings.ranking)

    def _rank(self, query: Query, lists: dict[str, list[str]], options: RankingOptions,
              exact: dict[str, float] | None = None, templates: dict[str, float] | None = None) -> list[Ranked]:
        """`exact`: chunk id -> the share of the query's exact phrases it holds, for chunks that
        hold enough of them to go up (RankingOptions.exact_least); those no list found join the
        candidates. `templates`: chunk id -> the share of the pasted message its best template
        covers."""
        fused = weighted_rrf(lists, fusion_weights(self.settings, lists, query.long), k=self.settings.rrf_k)
        if exact:
            taken = {i for i, _ in fused}
            fused += [(i, 0.0) for i in exact if i not in taken]
        chunks = self.catalog.files.chunks_by_ids([i for i, _ in fused])
        return rank(query, [(chunks[i], score) for i, score in fused if i in chunks], options,
                    self.vendored_folders(), exact or {}, templates or {})

    def _exact_matches(self, query: Query, at_least: int) -> dict[str, float]:
        """Chunk id -> the share of the query's exact phrases its keyword index holds, for the
        EXACT_CANDIDATES that hold the most, among those holding the `at_least` phrases that go up
        (RankingOptions.exact_count)."""
        counts = self.catalog.keywords.phrase_counts(query.phrases, query.filters, EXACT_CANDIDATES, at_least)
        return {i: n / len(query.phrases) for i, n in counts}

    def _template_matches(self, query: Query, lists: dict[str, list[str]], exact: dict[str, float]
                          ) -> dict[str, float]:
        """Chunk id -> the share of the query's pasted message that one of its message templates
        produced, for the chunks whose templates hold the most of its words and those near the top
        of a retriever's list or holding its exact phrases: a message's words find the statement
        that writes it, its filled-in values do not stop it."""
        templates = self.catalog.keywords.templates(template_candidates(lists, exact))
        templates.update(self.catalog.keywords.templates_holding(message_words(query.messages), query.filters,
                                                                 TEMPLATE_CANDIDATES))
        return template_shares(query.messages, templates)

    def _traits(self, chunks: list[Chunk]) -> dict[str, tuple[int, int]]:
        """Chunk id -> (fingerprint, content class number) as indexed, a chunk of a folder that
        the index's structure calls vendored (indexing/vendored.py) of the class vendored."""
        traits = self.catalog.files.traits_by_ids([c.id for c in chunks])
        vendored = self.vendored_folders()
        return {c.id: indexed_traits(*traits[c.id], c.path, vendored) for c in chunks if c.id in traits}

    def _read_text(self, chunks: list[Chunk]) -> None:
        """Give chunks their lines as on disk: the catalog keeps no copy of the code."""
        fill_text(self.index.root, chunks)

    def vendored_folders(self) -> frozenset[str]:
        """Folders of code that is not the project's own (indexing/vendored.py), as the indexer
        last found them (it looks again when files come or go)."""
        return self._vendored.get()

    def _read_vendored_folders(self) -> frozenset[str]:
        return frozenset(json.loads(self.catalog.get_meta("vendored_folders") or "[]"))

    # --- relations ------------------------------------------------------------------------
    def _related(self, query: Query, limit: int) -> tuple[str, list[Related]] | None:
        """(direction, callers or callees) when the query asks for a relation of a known name."""
        parsed = parse_relation(query.text)
        if parsed is None:
            return None
        direction, name = parsed
        targets = definitions_named(self.catalog, name)
        if not targets:
            return None
        related = neighbours(self.graph, targets, direction, QUERY_DEPTH)
        if query.filters.active:
            allowed = self.catalog.files.ids_matching([r.id for r in related], query.filters)
            related = [r for r in related if r.id in allowed]
        return direction, related[:limit]

    def relations(self, request: RelationsRequest) -> RelationsAnswer:
        started = time.perf_counter()
        if request.id:
            targets = [request.id] if self.catalog.files.chunks_by_ids([request.id]) else []
        else:
            targets = definitions_named(self.catalog, request.name)
        graph = self.graph
        external = bool(request.across and not targets and request.name and request.direction == "callers")
        if external:  # defined in another repository: the callers are the call sites of its name
            found = self._callers_by_name(request.name, graph, request.depth)
        else:
            found = neighbours(graph, targets, request.direction, request.depth)
        if request.filters.active:
            allowed = self.catalog.files.ids_matching([r.id for r in found], request.filters)
            found = [r for r in found if r.id in allowed]
        if request.limit is not None:
            found = found[:request.limit]
        chunks = self.catalog.files.chunks_by_ids([r.id for r in found] + targets)
        fill_text(self.index.root, [chunks[r.id] for r in found if r.id in chunks])  # for the snippets
        label = request.name or (chunks[targets[0]].name if targets else request.id or "")
        direct = [r for r in found if r.depth == 1 and r.id in chunks]
        if external:
            short = re.split(r"\.|::", label)[-1]
            lines = self.catalog.graph.call_lines([r.id for r in direct], [short])
            sites = {r.id: tuple(lines.get((r.id, short), ())) for r in direct}
        else:
            sites = self._call_sites(targets, direct, chunks, request.direction)
        results = tuple(related_result(chunks[r.id], r.weight / r.depth, r.depth, label, sites.get(r.id),
                                       r.resolution) for r in found if r.id in chunks)
        found_targets = tuple(RelationTarget(chunks[t].path, chunks[t].start_line, chunks[t].qualified_name)
                              for t in targets if t in chunks)
        unresolved = None
        if request.across and targets and request.direction == "callees":
            unresolved = tuple(n for n in self.catalog.graph.called_names(targets)
                               if not self.catalog.graph.ids_with_qualified_names(n))
        return RelationsAnswer(
            name=label, direction=request.direction, targets=found_targets,
            results=results, timing_ms={"total": round(_ms(started), 2)},
            note=None if external else self._name_note(label, found_targets), unresolved=unresolved or None)

    def _callers_by_name(self, name: str, graph, depth: int) -> list[Related]:
        """Callers of a name this index does not define (a workspace's other repository does):
        the chunks whose calls name it, then their own callers here, `depth` hops in all."""
        short = re.split(r"\.|::", name)[-1]
        direct = list(dict.fromkeys(site.caller_id for site in self.catalog.graph.call_sites(short, MAX_CALL_SITES)))
        found = [Related(caller, 1.0, 1) for caller in direct]
        if depth > 1:
            seen = set(direct)
            found += [replace(r, depth=r.depth + 1) for r in neighbours(graph, direct, "callers", depth - 1)
                      if r.id not in seen]
        return found

    def _call_sites(self, targets: list[str], direct: list[Related], chunks: dict[str, Chunk],
                    direction: str) -> dict[str, tuple[int, ...]]:
        """Direct relation id -> the lines of its calls: where a caller calls the targets, or
        where the targets call a callee."""
        if not direct or not targets:
            return {}
        callers = direction == "callers"
        named = targets if callers else [r.id for r in direct]  # the callees
        names = sorted({chunks[c].name for c in named if c in chunks})
        sites = self.catalog.graph.call_line_hints([r.id for r in direct] if callers else targets, names)
        lines: dict[str, tuple[int, ...]] = {}
        for r in direct:
            found: set[int] = set()
            for t in targets:
                caller, callee = (r.id, t) if callers else (t, r.id)
                if caller in chunks and callee in chunks:
                    found.update(line for line, hint in sites.get((caller, chunks[callee].name), ())
                                 if may_reach(hint, chunks[caller].path, chunks[callee].path, chunks[callee].name_line))
            lines[r.id] = tuple(sorted(found))
        return lines

    def symbols(self, request: SymbolsRequest, retrievers: tuple[str, ...] | None = None) -> SymbolsAnswer:
        """Names that contain the query first, then the definitions a hybrid search ranks among
        those its keywords match (`retrievers`: the search's, when not the mode's)."""
        started = time.perf_counter()
        ids = self.catalog.graph.ids_defining_like(request.query.strip(), request.limit)
        if len(ids) < request.limit and len(request.query.strip()) >= SYMBOL_SEARCH_CHARS:
            seen = set(ids)
            fill = min(request.limit - len(ids), SYMBOL_SEARCH_RESULTS)
            answer = self.search(SearchRequest(query=request.query, limit=fill, retrievers=retrievers),
                                 side_by_side=False)
            # only what the typed words match: vectors alone find "something" for any text at all
            ids += [r.id for r in answer.results
                    if r.kind not in NON_DEFINITION_KINDS and r.id not in seen and r.sources.get("keyword")]
        chunks = self.catalog.files.chunks_by_ids(ids[:request.limit])
        return SymbolsAnswer(query=request.query, symbols=tuple(definition_of(chunks[i]) for i in ids if i in chunks),
                             timing_ms={"total": round(_ms(started), 2)})

    def grep(self, request: GrepRequest) -> GrepAnswer:
        """Exact text or a regex over the files (ripgrep), placed in chunks and ranked (search/grep.py)."""
        return grep(self.grep_facts, self.index.root, self.index.dir, request).answer()

    def grep_json(self, request: GrepRequest) -> Iterator[bytes]:
        """The same answer as its JSON text (UTF-8) in blocks, written without records: the
        search is done here, each block when it is asked for."""
        return grep(self.grep_facts, self.index.root, self.index.dir, request).json_blocks()

    def references(self, request: ReferencesRequest) -> ReferencesAnswer:
        """The recorded call sites of the name (its last part), with the column where it stands."""
        started = time.perf_counter()
        name = re.split(r"\.|::", request.name.strip())[-1]
        sites = self.catalog.graph.call_sites(name, request.limit)
        callers = self.catalog.files.chunks_by_ids(sorted({s.caller_id for s in sites}))
        fill_text(self.index.root, list(callers.values()))
        word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
        out = []
        for caller_id, path, line, reference, resolution in sites:
            caller = callers.get(caller_id)
            column = 1
            if caller is not None:
                lines = caller.text.split("\n")
                offset = line - caller.start_line
                m = word.search(lines[offset]) if 0 <= offset < len(lines) else None
                column = m.start() + 1 if m else 1
            out.append(Reference(path=path, line=line, column=column,
                                 caller=caller.qualified_name if caller else path, caller_id=caller_id,
                                 use="reference" if reference else "call", resolution=resolution))
        return ReferencesAnswer(name=request.name, references=tuple(out), timing_ms={"total": round(_ms(started), 2)})

    def impact(self, request: ImpactRequest) -> ImpactAnswer:
        """The transitive callers of `name`, `depth` hops out, grouped by file."""
        return impact_of(self.relations(replace(request, direction="callers")), request.depth)

    def definitions(self, request: DefinitionRequest) -> DefinitionAnswer:
        started = time.perf_counter()
        ids = definitions_named(self.catalog, request.name)
        chunks = self.catalog.files.chunks_by_ids(ids)
        near_dir = request.near.rsplit("/", 1)[0] if request.near and "/" in request.near else ""
        found = sorted((chunks[i] for i in ids if i in chunks),
                       key=lambda c: (c.path != request.near, (c.path.rsplit("/", 1)[0] if "/" in c.path else "")
                                      != near_dir if request.near else False,
                                      c.qualified_name != request.name, c.path, c.start_line))
        note = None if found else self._name_note(request.name, ())
        return DefinitionAnswer(name=request.name, definitions=tuple(definition_of(c) for c in found[:request.limit]),
                                timing_ms={"total": round(_ms(started), 2)}, note=note)

    def _near_names(self, name: str) -> list[str]:
        """Names like `name` (a typo, another case, a part of it): those sharing its longest
        word, closest spelling first."""
        words = sorted(re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name), key=len, reverse=True)
        candidates = self.catalog.graph.names_like(words[0] if words and len(words[0]) >= 3 else name, NEAR_CANDIDATES)
        close = difflib.get_close_matches(name, candidates, n=NEAR_NAMES, cutoff=0.5)
        return close or candidates[:NEAR_NAMES]

    def _name_note(self, name: str, targets: tuple[RelationTarget, ...]) -> str | None:
        """One line when a name means nothing (with near names) or several definitions."""
        if not targets:
            near = self._near_names(re.split(r"\.|::", name)[-1])
            return f"no definition named {name!r}" + (f"; near names: {', '.join(near)}" if near else "")
        if len({t.qualified_name for t in targets}) > 1:
            return (f"{name!r} names {len(targets)} definitions; the results cover them all "
                    "(ask with a qualified name to narrow)")
        return None


def fusion_weights(settings: Settings, lists: Iterable[str], report: bool = False) -> dict[str, float]:
    """Each list's fusion weight, the local and the team search's: the setting
    `weight_<retriever>`, else 1; for a report, times its factor in REPORT_WEIGHTS."""
    factors = REPORT_WEIGHTS if report else {}
    return {name: float(getattr(settings, f"weight_{name}", 1.0)) * factors.get(name, 1.0) for name in lists}


def rank_relation(query: Query, depth: dict[str, int], lists: dict[str, list[str]],
                  chunks_of: Callable[[list[str]], Mapping[str, Chunk]], asked: RankingOptions,
                  vendored: frozenset[str], settings: Settings) -> list[Ranked]:
    """A relation question's ranking, the local and the team search's: the callers (or callees;
    `depth`: each one's hops, in the walk's order) first, nearest hops first, each hop ordered by
    the fused ranks of all lists; then the other retrievers' results, ranked as usual, as
    context. `chunks_of`: the chunks of these ids, from the catalog or the store."""
    context_lists = {name: ids for name, ids in lists.items() if name != "graph"}
    context_fused = weighted_rrf(context_lists, fusion_weights(settings, context_lists, query.long),
                                 k=settings.rrf_k)
    fused = dict(weighted_rrf(lists, fusion_weights(settings, lists), k=settings.rrf_k))
    chunks = chunks_of(list(dict.fromkeys([i for i, _ in context_fused] + list(depth))))
    context = rank(query, [(chunks[i], score) for i, score in context_fused if i in chunks], asked, vendored)
    options = RankingOptions.off()
    options.test_penalty = asked.test_penalty
    answer = rank(query, [(chunks[i], fused[i]) for i in depth if i in chunks], options, vendored)
    return relation_answers_first(answer, context, depth, QUERY_DEPTH)


def template_candidates(lists: dict[str, list[str]], exact: Mapping[str, float]) -> list[str]:
    """The chunks whose message templates are matched against a pasted message: the first
    TEMPLATE_CANDIDATES of each retriever's list and those holding the query's exact phrases."""
    return list({i: None for found in lists.values() for i in found[:TEMPLATE_CANDIDATES]} | dict.fromkeys(exact))


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000
