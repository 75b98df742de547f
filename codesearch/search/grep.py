"""Exact and regex search: ripgrep finds the lines (search/ripgrep.py), the index says where they
stand (search/grep_chunks.py), and the groups are ranked here: the matched name's own definition
first, then code that much else calls, then the rest, with tests, examples and vendored code last
(unless the search is aimed at them). Arrays, not loops over the lines: a common word matches
80,000 lines of a 30,000-file tree.
"""

from __future__ import annotations

import time
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.content_class import aims_at_secondary, is_secondary_path
from ..gc_pause import paused_gc
from ..ingest.languages import language_for_path
from .grep_answer import GrepResult
from .grep_chunks import ChunkFacts, GrepFacts, place
from .requests import GrepRequest
from .rg_output import MatchedLines
from .ripgrep import run_rg_steadily

if TYPE_CHECKING:
    import numpy as np
    import re2


def name_pattern(request: GrepRequest) -> re2._Regexp | None:
    """The pattern on RE2, a linear-time engine of ripgrep's dialect, to tell whether a
    definition's own name matches it (None where RE2 reads it differently: then no definition
    is ranked first). Python's `re` backtracks: `([a-z_]+)*\\(` on a long snake_case name held
    the daemon's GIL for minutes."""
    import re2
    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    options.case_sensitive = not request.ignore_case
    options.literal = request.fixed and not request.word
    text = re2.escape(request.pattern) if request.fixed and request.word else request.pattern
    if request.word:
        text = rf"(?:^|\W)(?:{text})(?:\W|$)"
    try:
        return re2.compile(text, options)
    except re2.error:
        return None


def aimed_at_tests(request: GrepRequest) -> bool:
    """A search restricted to tests, examples or vendored code does not push them down."""
    return any(aims_at_secondary(a) for a in [*(request.paths or ()), request.filters.path_glob or ""])



def grep(facts: GrepFacts, root: Path, index_dir: Path, request: GrepRequest) -> GrepResult:
    with paused_gc():
        started = time.perf_counter()
        hits, truncated = run_rg_steadily(root, index_dir, request)
        timing = {"rg": (time.perf_counter() - started) * 1000}
        if request.filters.language:
            language = request.filters.language
            hits = hits.keep(lambda path: language_for_path(path) == language)
        t = time.perf_counter()
        result = _arrange(facts, hits, request, truncated, timing)
        timing["structure"] = (time.perf_counter() - t) * 1000
        timing["total"] = (time.perf_counter() - started) * 1000
        result.timing_ms = {k: round(v, 2) for k, v in timing.items()}
        return result


def _arrange(facts: GrepFacts, hits: MatchedLines, request: GrepRequest, truncated: bool,
             timing: dict[str, float]) -> GrepResult:
    """Group the hits by the chunk that holds them and put the groups in answer order (see
    `_rank`); the hits of a group stay in line order. Arrays, not a loop over the lines."""
    import numpy as np
    if not len(hits):
        return GrepResult(request, hits, [], [], [], [] if request.explain else None, [], truncated, timing)
    file_of = np.asarray(hits.file_of, dtype=np.int64)
    lines = np.asarray(hits.lines, dtype=np.int64)
    rids = place(file_of, lines, facts.bounds(hits.files))
    _, first, group_of, sizes = np.unique((file_of << 40) | (rids + 1), return_index=True, return_inverse=True,
                                          return_counts=True)
    group_file, group_rid = file_of[first], rids[first].tolist()
    chunks = facts.chunks(group_rid)
    by_path = np.empty(len(hits.files), dtype=np.int64)
    by_path[sorted(range(len(hits.files)), key=hits.files.__getitem__)] = np.arange(len(hits.files))
    first_line = lines[first]
    notes: list[list[str]] | None = [[] for _ in chunks] if request.explain else None
    if request.sort == "rank":
        tier, centrality = _rank(hits.files, lines, request, chunks, group_of, group_file, notes)
        order = np.lexsort((first_line, by_path[group_file], -sizes, -centrality, tier))
    else:
        order = np.lexsort((first_line, by_path[group_file]))
    place_of = np.empty(len(order), dtype=np.int64)
    place_of[order] = np.arange(len(order))
    shown = np.argsort(place_of[group_of], kind="stable")[:request.limit]
    counts = np.bincount(file_of, minlength=len(hits.files))
    in_order, first_place = np.unique(group_file[order], return_index=True)  # each file where it first shows
    files = [(f, int(counts[f])) for f in in_order[np.argsort(first_place)].tolist()]
    return GrepResult(request, hits, shown.tolist(), group_of.tolist(), chunks, notes, files, truncated, timing)


def _rank(files: list[str], lines: np.ndarray, request: GrepRequest, chunks: list[ChunkFacts],
          group_of: np.ndarray, group_file: np.ndarray, notes: list[list[str]] | None) -> tuple[np.ndarray, np.ndarray]:
    """Each group's tier and centrality. Tier 0: the line that names a definition whose name the
    pattern matches; tier 2: tests, examples and vendored code; then centrality (log of the
    weight of calls and imports into the chunk), then how many lines match in it."""
    import numpy as np
    centrality = np.fromiter(map(attrgetter("centrality"), chunks), dtype=np.float64, count=len(chunks))
    name_line = np.fromiter(map(attrgetter("name_line"), chunks), dtype=np.int64, count=len(chunks))
    on_name = np.bincount(group_of, weights=lines == name_line[group_of], minlength=len(chunks)) > 0
    tier = np.ones(len(chunks), dtype=np.int64)
    pattern = name_pattern(request)
    if pattern is not None:
        named = np.flatnonzero(on_name)  # groups with a line on their chunk's name (so never NO_CHUNK)
        names = [chunks[g].name for g in named.tolist()]
        defined = {name for name in set(names) if pattern.search(name)}  # each name tried once
        tier[named[np.fromiter(map(defined.__contains__, names), dtype=bool, count=len(names))]] = 0
    if not aimed_at_tests(request):
        tests = np.asarray([is_secondary_path(p) for p in files], dtype=bool)
        tier[(tier == 1) & tests[group_file]] = 2
    if notes is not None:
        for g, chunk in enumerate(chunks):
            if chunk.span is None:
                continue
            if tier[g] == 0:
                notes[g].append(f"defines {chunk.span.qualified_name or chunk.span.name}")
            if centrality[g]:
                notes[g].append(f"called or imported with weight {chunk.weight:g}")
        for g in np.flatnonzero(tier == 2).tolist():
            notes[g].append("test, example or vendored path: later")
    return tier, centrality
