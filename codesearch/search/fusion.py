"""Reciprocal Rank Fusion, a pure function over ranked lists: the one piece of code that fuses the
retrievers' lists in a search, the repositories' lists in a workspace search, and the sources of
`codesearch merge`."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)
MAX_BOOST = 1_000_000.0  # a boost multiplies fused scores: past this it only risks overflowing them


def boost_problem(value: object) -> str | None:
    """Why `value` cannot be a boost (a finite number from 0 to MAX_BOOST), or None when it can:
    one rule for workspace files and `merge --boost-sources`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_BOOST:
        return f"must be a number from 0 to {MAX_BOOST:,.0f}"
    return None


@dataclass(slots=True)
class Fused(Generic[T]):
    """One item of the fused list: where it came from and how its score was made."""

    item: T
    source: str  # the first list that held it (lists in their given order)
    fused: float = 0.0  # sum over the lists that hold it of 1 / (k + rank): no weights, no boost
    score: float = 0.0  # what the output is sorted by: sum of w / (k + rank), times the boost of `source`
    ranks: list[tuple[str, int, float]] = field(default_factory=list)  # (list, rank, 1 / (k + rank))


def fuse(lists: Mapping[str, Sequence[T]], weights: Mapping[str, float] | None = None,
         boosts: Mapping[str, float] | None = None, k: float = 60.0, first_rank: int = 1) -> list[Fused[T]]:
    """score(d) = (sum over lists i holding d of w_i / (k + rank_i(d))) * boost[first list of d].

    `first_rank` numbers the top of each list (1 for the searcher's lists, 0 for `merge`, as its
    contract says). A list ranks an item once, at its best rank; a missing weight or boost counts
    as 1. Best first; ties keep the order in which items were first seen (list order, then rank),
    so the output does not depend on anything but the input.
    """
    if k < 0 or k + first_rank <= 0:
        raise ValueError(f"k must be >= 0{' and above 0 when ranks start at 0' if first_rank <= 0 else ''}")
    found: dict[T, Fused[T]] = {}
    for name, ranked in lists.items():
        weight = 1.0 if weights is None else float(weights.get(name, 1.0))
        seen: set[T] = set()
        for rank, item in enumerate(ranked, start=first_rank):
            if item in seen:
                continue
            seen.add(item)
            share = 1.0 / (k + rank)
            entry = found.get(item)
            if entry is None:
                entry = found[item] = Fused(item, name)
            entry.fused += share
            entry.score += weight * share
            entry.ranks.append((name, rank, share))
    if boosts:
        for entry in found.values():
            entry.score *= float(boosts.get(entry.source, 1.0))
    return sorted(found.values(), key=lambda entry: -entry.score)  # stable: ties stay first-seen


def weighted_rrf(lists: Mapping[str, Sequence[T]], weights: Mapping[str, float] | None = None,
                 k: float = 60.0) -> list[tuple[T, float]]:
    """The searcher's fusion: score(d) = sum over lists i of w_i / (k + rank_i(d)), ranks 1-based,
    as (item, score) pairs, best first."""
    return [(entry.item, entry.score) for entry in fuse(lists, weights, k=k)]
