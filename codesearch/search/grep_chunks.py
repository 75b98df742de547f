"""Where each matching line stands: the innermost chunk that holds it (array lookups over each
file's chunk bounds), and what grep shows and ranks of that chunk, read from the catalog and kept
until the next reindex."""

from __future__ import annotations

import math
from json.encoder import encode_basestring  # json.dumps' own, in C
from typing import TYPE_CHECKING, NamedTuple

from ..store.catalog import Catalog
from ..store.files import ChunkSpan
from .reindex_cache import ReindexCache

if TYPE_CHECKING:
    import numpy as np

class ChunkFacts(NamedTuple):
    """What a group of matches shows and is ranked by: the chunk that holds its lines."""

    span: ChunkSpan | None  # None: no chunk holds the lines
    json: bytes  # as a match's `chunk` shows it
    rest: bytes  # `json`, then the rest of a match without context or reasons, up to the next one
    weight: float  # the summed weight of the calls and imports into it
    centrality: float  # log1p(weight) (math's: numpy's differs in the last bit)
    name_line: int  # where its name stands (0: unknown)
    name: str  # the chunk's name ("": no chunk)


def _chunk_facts(span: ChunkSpan | None, weight: float) -> ChunkFacts:
    json = b"null" if span is None else (
        f'{{"kind": {encode_basestring(span.kind)}, "name": {encode_basestring(span.name)}, "qualified_name": '
        f'{encode_basestring(span.qualified_name)}, "start_line": {span.start_line}, "end_line": {span.end_line}}}'
    ).encode()
    return ChunkFacts(span, json, json + b', "before": [], "after": []}, ', weight, math.log1p(weight),
                      span.name_line if span is not None else 0, span.name if span is not None else "")


NO_CHUNK = _chunk_facts(None, 0.0)


def _nothing_known() -> tuple[dict[str, np.ndarray], dict[int, ChunkFacts]]:
    """No file's chunk bounds and no chunk's facts yet (-1, no chunk, is always known)."""
    return {}, {-1: NO_CHUNK}


class GrepFacts:
    """What grep reads of the catalog for the files and chunks that matched (each file's chunk
    bounds; each chunk's span, its JSON, and its caller weight), kept between requests until the
    next reindex (the catalog's `last_index_time` changes). A common word matches half the files
    of a tree: reading their chunk bounds, and the spans and caller weights of the chunks that
    hold a match, took longer than ripgrep's whole search (docs/benchmarks.md, "grep against
    ripgrep (daemon)")."""

    MAX_CHUNKS = 200_000  # chunks whose span and weight are kept (about 300 bytes each)

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self._known: ReindexCache[tuple[dict[str, np.ndarray], dict[int, ChunkFacts]]] = ReindexCache(
            catalog, _nothing_known, _nothing_known())

    def _fresh(self) -> tuple[dict[str, np.ndarray], dict[int, ChunkFacts]]:
        known = self._known.get()
        return self._known.renew() if len(known[1]) > self.MAX_CHUNKS else known

    def bounds(self, paths: list[str]) -> list[np.ndarray]:
        """Each path's chunks as rows (start_line, end_line, rid), by start and then outermost
        first (an empty array for a file without chunks)."""
        import numpy as np
        known, _ = self._fresh()
        missing = [p for p in paths if p not in known]
        if missing:
            read = self.catalog.files.chunk_bounds(missing)
            for path in missing:
                rows = read.get(path)
                known[path] = np.array(rows, dtype=np.int64) if rows else np.empty((0, 3), dtype=np.int64)
        return [known[p] for p in paths]

    def chunks(self, rids: list[int]) -> list[ChunkFacts]:
        """Each chunk's facts (NO_CHUNK for -1, no chunk, and for a rowid the catalog no longer has)."""
        _, known = self._fresh()
        missing = sorted(set(rids).difference(known))
        if missing:
            spans = self.catalog.files.spans_by_rid(missing)
            weights = self.catalog.graph.caller_weights([s.id for s in spans.values()])
            for rid in missing:
                span = spans.get(rid)
                known[rid] = NO_CHUNK if span is None else _chunk_facts(span, weights.get(span.id, 0.0))
        return [*map(known.__getitem__, rids)]


def place(file_of: np.ndarray, lines: np.ndarray, bounds: list[np.ndarray], steps: int = 2) -> np.ndarray:
    """The rowid of the innermost chunk holding each hit (-1: none), for hits given as their file
    (a position in `bounds`) and line: the last chunk, in each file's order (by start, outermost
    first), that starts at or before the line and ends at or after it. All files at once:
    (file, line) pairs as one sorted key and a binary search for the last chunk starting before
    each line; a hit that chunk does not reach looks `steps` chunks further back (most land in a
    method or the class around it), and the few left over are found by `_place_exactly` among
    the chunks of their own files only (building its tables over every matched file's chunks
    cost more than the rest of the ranking)."""
    import numpy as np
    table, starts, ends = _keyed(bounds)
    if not len(table):
        return np.full(len(lines), -1, dtype=np.int64)
    wanted = (file_of << 32) | lines
    at = np.searchsorted(starts, wanted, side="right") - 1
    for _ in range(steps):
        short = (at >= 0) & (ends[np.maximum(at, 0)] < wanted)
        if not short.any():
            break
        at[short] -= 1
    found = np.where(at >= 0, table[np.maximum(at, 0), 2], -1)
    short = (at >= 0) & (ends[np.maximum(at, 0)] < wanted)
    if short.any():
        files, local = np.unique(file_of[short], return_inverse=True)
        found[short] = _place_exactly(local.astype(np.int64), lines[short], [bounds[f] for f in files.tolist()])
    return found


def _keyed(bounds: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The files' chunk rows as one table, with each chunk's start and end keyed by its file."""
    import numpy as np
    sizes = np.fromiter(map(len, bounds), dtype=np.int64, count=len(bounds))
    table = np.concatenate(bounds) if len(bounds) else np.empty((0, 3), dtype=np.int64)
    file_key = np.repeat(np.arange(len(bounds), dtype=np.int64), sizes) << 32
    return table, file_key | table[:, 0], file_key | table[:, 1]


def _place_exactly(file_of: np.ndarray, lines: np.ndarray, bounds: list[np.ndarray]) -> np.ndarray:
    """`place` without the short cut: after the binary search, a binary lifting over the chunk
    ends finds the nearest chunk before that still reaches the line."""
    import numpy as np
    table, starts, ends = _keyed(bounds)
    wanted = (file_of << 32) | lines
    at = np.searchsorted(starts, wanted, side="right") - 1
    # reach[k][i]: the furthest end among the chunks i-2^k+1 .. i (those before 0 count as none)
    reach = [ends]
    while (1 << len(reach)) <= len(ends):
        step = 1 << (len(reach) - 1)
        previous = reach[-1]
        reach.append(np.concatenate([previous[:step], np.maximum(previous[step:], previous[:-step])]))
    for k in range(len(reach) - 1, -1, -1):
        live = at >= 0
        short = np.zeros_like(live)
        short[live] = reach[k][at[live]] < wanted[live]
        at[short] -= 1 << k
    found = np.full(len(wanted), -1, dtype=np.int64)
    live = at >= 0
    found[live] = table[at[live], 2]
    return found
