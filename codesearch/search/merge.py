"""`codesearch merge`: ranked lists from several sources fused into one answer (DESIGN, "Many
repositories"), by the same fusion as the searcher's. Input is checked here, field by field, so
that every front-end gives the same one-line error."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..text import text_problem
from ..wire import json_depth
from .fusion import boost_problem, fuse

DEFAULT_K = 60.0
K_RANGE = (0.001, 1_000_000.0)  # each rank adds 1/(k + rank): k near 0 would overflow the first rank's share
MAX_INPUT_DEPTH = 32  # the lists, their results and the results' own fields nest at most this deep
TOO_DEEP = f"the input nests deeper than {MAX_INPUT_DEPTH} levels"
FIRST_RANK = 0  # the contract's ranks are 0-based positions in each list


class MergeInputError(ValueError):
    """The input or an option cannot be merged; the message names what and where."""


@dataclass(frozen=True)
class SourceList:
    source: str
    results: tuple[dict[str, Any], ...]


def parse_boosts(text: str | None) -> dict[str, float]:
    """`NAME:W,NAME:W` -> {NAME: W}; a weight is a finite number >= 0."""
    boosts: dict[str, float] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, colon, weight = part.rpartition(":")
        name = name.strip()
        if not colon or not name:
            raise MergeInputError(f"bad boost {part.strip()!r}: write NAME:WEIGHT, e.g. docs:1.2")
        try:
            value = float(weight)
        except ValueError:
            raise MergeInputError(f"bad boost {part.strip()!r}: {weight.strip()!r} is not a number") from None
        problem = boost_problem(value)
        if problem:
            raise MergeInputError(f"bad boost {part.strip()!r}: a boost {problem}")
        boosts[name] = value
    return boosts


def read_lists(text: str) -> list[SourceList]:
    """The JSON text of the input -> the source lists. NaN, Infinity and numbers past a float
    (which Python's json reads) are refused, as are nesting past MAX_INPUT_DEPTH and text that is
    not UTF-8 or holds a NUL (text.text_problem), so that the answer can be written as JSON too."""
    if not text.strip():
        raise MergeInputError("the input is empty: give a JSON array on stdin")
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise MergeInputError(f"the input is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:  # json's own limit, far deeper than ours
        raise MergeInputError(TOO_DEEP) from None
    if json_depth(data, MAX_INPUT_DEPTH) > MAX_INPUT_DEPTH:
        raise MergeInputError(TOO_DEEP)
    problem = _text_problem_in(data)
    if problem:
        raise MergeInputError(f"a string in the input {problem}")
    return parse_lists(data)


def _text_problem_in(data: Any) -> str | None:
    """The first problem of any string in the input, keys included (a lone surrogate from
    "\\ud800" or from bytes that were not UTF-8 could not be printed back), or None."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                return problem
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _refuse_constant(name: str) -> Any:
    raise MergeInputError(f"the input holds {name}, which is not a JSON number")


def _finite_float(text: str) -> float:
    """A JSON number as a float; one too large for it (1e999) would be written back as Infinity."""
    value = float(text)
    if not math.isfinite(value):
        raise MergeInputError(f"the input holds the number {text[:40]}, too large to read")
    return value


def parse_lists(data: Any) -> list[SourceList]:
    """The decoded JSON input -> the source lists; MergeInputError names the first problem."""
    if not isinstance(data, list):
        raise MergeInputError(f"the input must be a JSON array of {{\"source\", \"results\"}} objects, "
                              f"not {_json_type(data)}")
    lists: list[SourceList] = []
    seen: set[str] = set()
    for i, entry in enumerate(data):
        where = f"list {i}"
        if not isinstance(entry, dict):
            raise MergeInputError(f"{where} must be an object with \"source\" and \"results\", not {_json_type(entry)}")
        source = entry.get("source")
        if not isinstance(source, str) or not source.strip():
            raise MergeInputError(f"{where} needs a \"source\" name (a non-empty string)")
        if source in seen:
            raise MergeInputError(f"{where}: source {source!r} appears twice; give each source one list")
        seen.add(source)
        results = entry.get("results")
        if not isinstance(results, list):
            raise MergeInputError(f"{where} ({source}) needs \"results\": an array, best first")
        for j, result in enumerate(results):
            if not isinstance(result, dict):
                raise MergeInputError(f"{where} ({source}), result {j} must be an object, not {_json_type(result)}")
            rid = result.get("id")
            if isinstance(rid, bool) or not isinstance(rid, (str, int)):
                problem = "has no \"id\"" if rid is None else f"has an id that is {_json_type(rid)}"
                raise MergeInputError(f"{where} ({source}), result {j} {problem}; an id is a string or an integer")
        lists.append(SourceList(source, tuple(results)))
    return lists


def merge(lists: list[SourceList], boosts: Mapping[str, float] | None = None, k: float = DEFAULT_K,
          limit: int | None = None) -> dict[str, Any]:
    """The `merge` answer: each result's fields from its first occurrence, plus `source`,
    `fused_score`, `boosted_score` and its rank in every source, best first."""
    started = time.perf_counter()
    if not K_RANGE[0] <= k <= K_RANGE[1]:
        raise MergeInputError(f"--k must be a number from {K_RANGE[0]:g} to {K_RANGE[1]:,.0f}, not {k}")
    if limit is not None and limit < 1:
        raise MergeInputError(f"--limit must be at least 1, not {limit}")
    first: dict[str | int, dict[str, Any]] = {}  # 1 and "1" stay apart: they are not equal in Python
    ids: dict[str, list[str | int]] = {}
    for source_list in lists:
        keys = ids[source_list.source] = []
        for result in source_list.results:
            keys.append(result["id"])
            first.setdefault(result["id"], result)
    fused = fuse(ids, boosts=boosts, k=k, first_rank=FIRST_RANK)
    if limit is not None:
        fused = fused[:limit]
    merged = [{**first[entry.item], "source": entry.source, "fused_score": entry.fused,
               "boosted_score": entry.score,
               "sources": [{"source": name, "rank": rank, "rrf_score": share} for name, rank, share in entry.ranks]}
              for entry in fused]
    return {"merged_results": merged, "count": len(merged), "boosts": dict(boosts or {}),
            "timing_ms": round((time.perf_counter() - started) * 1000, 3)}


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)
