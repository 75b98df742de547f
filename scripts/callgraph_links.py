"""codesearch's side of the call-graph benchmark: every call site an index records and the
definitions it links that site to, read through the store's own classes (no SQL here).

A call site is (file, line, called name) in a caller chunk. Its links are the caller's call
edges to chunks of that name: "resolved" when the catalog holds the edge, "guess" when the call
was left to a name-only guess (answered from the name's first definitions), "none" when nothing
was linked. The catalog keeps no per-site guess flag that a read API returns, so the kind is told
apart by reading the resolved edges (`CallGraph.adjacency`, the edges table only) beside the
callees `CallGraph.calls` answers (edges and guesses together). Where the catalog records how an
edge was resolved (a fourth value of each `calls` row, named by `schema.RESOLUTIONS`), a site's
links carry that name too.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from codesearch.indexing.index import Index
from codesearch.store import schema
from codesearch.store.call_graph import CallGraph
from codesearch.store.schema import CALLS
from codesearch.vocabulary import NON_DEFINITION_KINDS

RESOLVED, GUESS, NONE = "resolved", "guess", "none"


@dataclass(frozen=True, order=True)
class CallSite:
    path: str  # relative to the indexed root, as the catalog holds it
    line: int  # 1-based
    name: str


@dataclass(frozen=True)
class Definition:
    id: str
    path: str
    name: str
    start_line: int
    end_line: int
    name_line: int


@dataclass(frozen=True)
class Links:
    kind: str  # RESOLVED, GUESS or NONE
    targets: frozenset[str]  # chunk ids
    how: str | None = None  # how a resolved edge was found, where the catalog says


@dataclass
class CallGraphView:
    """What the benchmark reads of one index: call sites, their links, the files' languages and
    the definitions an oracle's answer is mapped onto."""

    links: dict[CallSite, Links]
    languages: dict[str, str]  # path -> language
    definitions: dict[str, list[Definition]] = field(default_factory=dict)  # path -> by start line

    def definition_at(self, path: str, line: int, name: str, named: bool = False) -> str | None:
        """The chunk id of the definition that a type-aware tool places at `path:line`: the one
        named there (or, failing that, named `name`) innermost around that line; `named`: only
        one named `name` there (a parameter on a function's line is not the function)."""
        around = [d for d in self.definitions.get(path, ()) if d.start_line <= line <= d.end_line]
        if named:
            around = [d for d in around if d.name == name and d.name_line == line]
        for fits in (lambda d: d.name_line == line, lambda d: d.name == name):
            found = [d for d in around if fits(d)]
            if found:
                return min(found, key=lambda d: d.end_line - d.start_line).id
        return None


def read_call_graph(index: Index) -> CallGraphView:
    """Every call site of the index with its links (one pass over the catalog's parts)."""
    catalog = index.catalog
    records = catalog.files.records()
    languages = {path: r.language for path, r in records.items() if not r.skip_reason}
    bounds = catalog.files.chunk_bounds(sorted(languages))
    rids = [rid for spans in bounds.values() for _, _, rid in spans]
    spans = catalog.files.spans_by_rid(rids)
    path_of = {rid: path for path, rows in bounds.items() for _, _, rid in rows}
    definitions: dict[str, list[Definition]] = defaultdict(list)
    for rid, span in spans.items():
        if span.kind not in NON_DEFINITION_KINDS:
            definitions[path_of[rid]].append(Definition(span.id, path_of[rid], span.name, span.start_line,
                                                        span.end_line, span.name_line))
    rid_of = {span.id: rid for rid, span in spans.items()}
    caller_ids = [span.id for span in spans.values()]
    names = catalog.graph.called_names(caller_ids)
    lines = catalog.graph.call_lines(caller_ids, names)
    graph = CallGraph(catalog)
    callers = sorted({rid_of[caller] for caller, _ in lines})
    linked: dict[tuple[int, str], set[int]] = defaultdict(set)  # (caller, name) -> targets
    how_of: dict[tuple[int, int], str] = {}
    resolutions = getattr(schema, "RESOLUTIONS", None)
    for caller, target, *rest in graph.calls(callers, "callees"):
        span = spans[target]
        linked[(caller, span.name)].add(target)
        if span.name == "constructor" and "." in span.qualified_name:  # `new Foo()` linked to Foo's constructor
            linked[(caller, span.qualified_name.rsplit(".", 2)[-2])].add(target)
        if rest[1:] and resolutions is not None:
            how_of[(caller, target)] = str(resolutions[rest[1]])
    resolved = _resolved_pairs(graph, callers)
    links: dict[CallSite, Links] = {}
    for (caller_id, name), at in lines.items():
        caller = rid_of[caller_id]
        targets = linked.get((caller, name), set())
        stored = [t for t in targets if (caller, t) in resolved]
        kind = (RESOLVED if stored else GUESS) if targets else NONE
        how = how_of.get((caller, stored[0])) if stored else None
        site_links = Links(kind, frozenset(spans[t].id for t in targets), how)
        for line in at:
            site = CallSite(path_of[caller], line, name)
            if site not in links or links[site].kind == NONE:  # nested chunks: the one that links wins
                links[site] = site_links
    for found in definitions.values():
        found.sort(key=lambda d: d.start_line)
    return CallGraphView(links, languages, dict(definitions))


def _resolved_pairs(graph: CallGraph, callers: list[int]) -> set[tuple[int, int]]:
    """(caller, other end) of the resolved call edges touching these callers, either way round."""
    out: set[tuple[int, int]] = set()
    for start in range(0, len(callers), 5000):
        adjacency = graph.adjacency(np.array(callers[start:start + 5000], dtype=np.int64))
        calls = adjacency.kind == CALLS
        out.update(zip(adjacency.owner[calls].tolist(), adjacency.neighbour[calls].tolist()))
    return out

