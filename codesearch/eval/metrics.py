"""Retrieval metrics over file or span targets, as the benchmark README defines NDCG@10.

A result matches a target path when the paths are equal or one ends with '/' + the other; a
span target also needs the result's lines to overlap it (a file-level result matches on the path
alone). Results are deduplicated by path (first occurrence kept) before the top k is taken.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RelevantSpan:
    path: str
    start_line: int | None = None
    end_line: int | None = None

    @classmethod
    def parse(cls, raw: Any) -> RelevantSpan:
        if isinstance(raw, str):
            return cls(raw)
        return cls(raw["path"], raw.get("start_line"), raw.get("end_line"))


def paths_match(a: str, b: str) -> bool:
    a, b = a.strip("/"), b.strip("/")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def matches(result: dict, target: RelevantSpan) -> bool:
    if not paths_match(result["path"], target.path):
        return False
    if target.start_line is None or result.get("kind") == "file":
        return True
    start, end = result.get("start_line"), result.get("end_line")
    if start is None or end is None:
        return True
    target_end = target.end_line if target.end_line is not None else target.start_line
    return start <= target_end and end >= target.start_line


def dedupe_by_path(results: list[dict]) -> list[dict]:
    seen, out = set(), []
    for r in results:
        if r["path"] not in seen:
            seen.add(r["path"])
            out.append(r)
    return out


def target_ranks(results: list[dict], targets: list[RelevantSpan], k: int) -> list[int | None]:
    """1-based rank of the first top-k result matching each target; a position credited once."""
    top = dedupe_by_path(results)[:k]
    used: set[int] = set()
    ranks: list[int | None] = []
    for target in targets:
        rank = None
        for i, r in enumerate(top):
            if i not in used and matches(r, target):
                rank = i + 1
                used.add(i)
                break
        ranks.append(rank)
    return ranks


def ndcg_at(results: list[dict], targets: list[RelevantSpan], k: int = 10) -> float:
    if not targets:
        return 0.0
    ranks = target_ranks(results, targets, k)
    dcg = sum(1.0 / math.log2(r + 1) for r in ranks if r)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(targets))))
    return dcg / ideal


def mrr_at(results: list[dict], targets: list[RelevantSpan], k: int = 10) -> float:
    ranks = [r for r in target_ranks(results, targets, k) if r]
    return 1.0 / min(ranks) if ranks else 0.0


def precision_at(results: list[dict], targets: list[RelevantSpan], k: int = 5) -> float:
    top = dedupe_by_path(results)[:k]
    if not top:
        return 0.0
    return sum(1 for r in top if any(matches(r, t) for t in targets)) / k


def recall_at(results: list[dict], targets: list[RelevantSpan], k: int = 10) -> float:
    if not targets:
        return 0.0
    return sum(1 for r in target_ranks(results, targets, k) if r) / len(targets)


def score_query(results: list[dict], relevant: list[Any], secondary: list[Any]) -> dict[str, float]:
    targets = [RelevantSpan.parse(t) for t in [*relevant, *secondary]]
    return {"ndcg@10": ndcg_at(results, targets, 10), "mrr@10": mrr_at(results, targets, 10),
            "p@5": precision_at(results, targets, 5), "recall@10": recall_at(results, targets, 10)}


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
