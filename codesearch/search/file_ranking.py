"""`--files` ranked per retriever: each retriever's chunk list is made a list of files first, the
file lists are fused by the same weighted RRF as chunk lists, then the ranking stage's steps weigh
each file through its best chunk (the words of its path and name, its content class, the files a
report names, the query's exact text).

Fused first (the other strategy, `fuse_first`: ranking.aggregate_files over the ranked chunks),
one file's chunks take several of a list's ranks and a retriever that finds many chunks of one
file speaks for it many times. Per retriever, each list says once how good a file is: the keyword
and vector lists by a decayed sum of the file's chunk scores (BM25, cosine similarity: several
chunks that match say more than one, the best counting most), the graph list by the file's best
chunk (max-passage). Which of the two strategies is the default, and these choices, are measured
on the file-level benchmarks (docs/benchmarks/localization.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..vocabulary import FILE_RANKINGS
from .fusion import weighted_rrf
from .query import Query
from .ranking import Ranked, RankingOptions, file_score, rank

FUSE_FIRST, PER_RETRIEVER = FILE_RANKINGS
MAX_PASSAGE = "max_p"  # ranking.file_score's aggregations: a file's best chunk
DECAYED_SUM = "weighted_top"  # its best chunks, each later one weighing `decay` times the one before
# how each retriever's chunks make its file list: (aggregation, decay of each later chunk's score)
AGGREGATION_OF: dict[str, tuple[str, float]] = {
    "keyword": (DECAYED_SUM, 0.5),
    "vector": (DECAYED_SUM, 0.5),
    "graph": (MAX_PASSAGE, 0.0),
}
# RRF's k for file lists: a file list is shorter than a chunk list, so its first ranks must
# weigh further apart than k = 60 lets them (there, a small repository's files hardly differ)
FILE_RRF_K = 5


def file_list(ids: Sequence[str], scores: Sequence[float], path_of: Mapping[str, str],
              aggregation: str, decay: float) -> list[str]:
    """One retriever's files, best first. MAX_PASSAGE: in the order of their best chunk;
    DECAYED_SUM: by ranking.file_score of their chunks' scores. A list without scores (or fewer
    than ids) counts 1 / rank for each."""
    by_file: dict[str, list[float]] = {}
    for position, cid in enumerate(ids):
        path = path_of.get(cid)
        if path is not None:
            by_file.setdefault(path, []).append(scores[position] if len(scores) == len(ids) else 1 / (position + 1))
    if aggregation == MAX_PASSAGE:
        return list(by_file)
    total = {path: file_score(sorted(found, reverse=True), aggregation, decay=decay) for path, found in by_file.items()}
    return sorted(by_file, key=lambda path: -total[path])  # stable: ties keep the order of their best chunk


def rank_files(query: Query, lists: Mapping[str, Sequence[str]], scores: Mapping[str, Sequence[float]],
               ranked: Sequence[Ranked], weights: Mapping[str, float], options: RankingOptions,
               vendored: frozenset[str] = frozenset(), exact: Mapping[str, float] = {},
               templates: Mapping[str, float] = {}) -> list[tuple[Ranked, float]]:
    """One entry per file: (its best chunk as `ranked` has it, the file's score), best first.

    `ranked`: the chunk ranking of the same search (every chunk of the lists, and those that
    hold the query's exact text); `exact` and `templates`: chunk id -> share, as `rank` takes
    them, credited to the chunk's file."""
    best: dict[str, Ranked] = {}
    for r in ranked:
        if r.chunk.path not in best or r.score > best[r.chunk.path].score:
            best[r.chunk.path] = r
    path_of = {r.chunk.id: r.chunk.path for r in ranked}
    file_lists = {name: file_list(ids, scores.get(name, ()), path_of, *AGGREGATION_OF.get(name, (MAX_PASSAGE, 0.0)))
                  for name, ids in lists.items()}
    fused = dict(weighted_rrf(file_lists, weights, k=FILE_RRF_K))
    for path in best:  # files only the exact text found come in last, as such chunks do
        fused.setdefault(path, 0.0)
    representative = {path: best[path].chunk.id for path in fused}
    file_options = replace(options, file_coherence=False, parent_child_dedupe=False, file_diminishing=False)
    files = rank(query, [(best[path].chunk, score) for path, score in fused.items()], file_options, vendored,
                 _by_file(exact, path_of, representative), _by_file(templates, path_of, representative))
    return [(best[r.chunk.path], r.score) for r in files]


def _by_file(shares: Mapping[str, float], path_of: Mapping[str, str], representative: Mapping[str, str]
             ) -> dict[str, float]:
    """Chunk id -> share made file -> share, keyed by each file's representative chunk: the most
    that one of the file's chunks holds."""
    out: dict[str, float] = {}
    for cid, share in shares.items():
        path = path_of.get(cid)
        if path is not None and path in representative:
            key = representative[path]
            out[key] = max(out.get(key, 0.0), share)
    return out
