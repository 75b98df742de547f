"""Weighted Reciprocal Rank Fusion, a pure function over ranked lists."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

T = TypeVar("T", bound=Hashable)


def weighted_rrf(lists: Mapping[str, Sequence[T]], weights: Mapping[str, float] | None = None,
                 k: float = 60.0) -> list[tuple[T, float]]:
    """score(d) = sum over lists i of w_i / (k + rank_i(d)), ranks 1-based.

    A list that lacks d adds nothing; a missing weight counts as 1. Returns (item, score),
    best first; ties keep the order in which items were first seen (list order, then rank).
    """
    if k < 0:
        raise ValueError("k must be >= 0")
    scores: dict[T, float] = {}
    for name, ranked in lists.items():
        weight = 1.0 if weights is None else float(weights.get(name, 1.0))
        seen: set[T] = set()
        for rank, item in enumerate(ranked, start=1):
            if item in seen:  # a list ranks an item once: its best rank
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))
