#!/usr/bin/env python3
"""Honest tuning of the ranking: tune on one half of the benchmark, report the other, then swap.

Usage: scripts/tune_ranking.py [--index-root ~/.cache/codesearch-bench-index] [--rounds 3]
Each repository's index must exist already (scripts/bench_quality.py builds them). Every query's
retriever lists are fetched once, in process, with the default settings; each candidate
configuration then only fuses and ranks them again (the lists do not depend on the ranking or on
the fusion weights), so a configuration costs a second or two over a half.

For each half (codesearch/eval/bench.py HALVES) the search starts from the shipped defaults and
moves one knob at a time through GRID (coordinate ascent, a move kept only if it gains more than
MIN_GAIN on that half), for --rounds rounds or until nothing moves. It prints the configuration
found, its NDCG@10 on the half it was tuned on and on the other half (per category), and the
shipped defaults on both halves: the held-out figures are the ones to trust.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codesearch.config import load_settings
from codesearch.eval.bench import DEFAULT_CHECKOUTS, HALVES, SHARED_BENCH, benchmark_roots
from codesearch.eval.metrics import mean, score_query
from codesearch.indexing.index import Index
from codesearch.search.ranking import RankingOptions
from codesearch.search.requests import SearchRequest
from codesearch.search.searcher import Searcher

# knob -> values tried (ranking strengths by name, fusion weights as "set:NAME")
GRID: dict[str, list[float]] = {
    "coherence_share": [0.0, 0.1, 0.2, 0.3],
    "identifier_factor": [1.0, 1.5, 2.0, 3.0],
    "symbol_test_demotion": [0.0, 1.5],
    "symbol_stem_bonus": [0.0, 0.5, 1.0],
    "joined_stem_factor": [1.0, 1.3, 1.6, 2.0],
    "main_definition_factor": [1.0, 1.3, 1.6],
    "prefix_chars": [0, 3, 4, 5],
    "word_decay": [1.0, 0.9, 0.8],
    "path_weight": [0.2, 0.3, 0.4],
    "name_weight": [0.0, 0.15, 0.3],
    "test_factor": [0.3, 0.5, 0.7],
    "set:weight_vector": [0.5, 0.6, 0.7],
    "set:weight_keyword": [0.2, 0.3, 0.4],
    "set:weight_graph": [0.05, 0.1, 0.2],
}
MIN_GAIN = 0.001
LIMIT = 30


class ReplayingSearcher(Searcher):
    """A Searcher whose retrievers run once per query (the first search records their lists,
    the next ones replay them)."""

    def __init__(self, index: Index):
        super().__init__(index)
        self.recorded: dict[tuple, tuple] = {}

    def _retrieve(self, query, names, limit, side_by_side=True):
        key = (query, tuple(names), limit)
        if key not in self.recorded:
            self.recorded[key] = super()._retrieve(query, names, limit, side_by_side=False)
        lists, notes, timing, problems = self.recorded[key]
        return {k: list(v) for k, v in lists.items()}, dict(notes), dict(timing), list(problems)


def evaluate(searchers: dict[str, ReplayingSearcher], queries: dict[str, list[dict]], config: dict,
             repos: tuple[str, ...]) -> tuple[float, dict[str, float]]:
    """Mean NDCG@10 over `repos` (each the mean of its queries) and per category (over queries)."""
    options = RankingOptions()
    settings_changes = {}
    for knob, value in config.items():
        if knob.startswith("set:"):
            settings_changes[knob[4:]] = value
        else:
            setattr(options, knob, type(getattr(options, knob))(value))
    per_repo: list = []
    per_category: dict = {}
    for name in repos:
        searcher = searchers[name]
        searcher.settings = replace(searcher.index.settings, **settings_changes)
        scores = []
        for q in queries[name]:
            answer = searcher.search(SearchRequest(query=q["query"], limit=LIMIT, ranking=options), side_by_side=False)
            ndcg = score_query([r.to_dict() for r in answer.results], q["relevant"], q.get("secondary", []))["ndcg@10"]
            scores.append(ndcg)
            per_category.setdefault(q["category"], []).append(ndcg)
        per_repo.append(mean(scores))
    return mean(per_repo), {k: mean(v) for k, v in sorted(per_category.items())}


def defaults(searcher: Searcher) -> dict:
    options = RankingOptions()
    out: dict = {k: getattr(options, k) for k in GRID if not k.startswith("set:")}
    out.update({k: getattr(searcher.index.settings, k[4:]) for k in GRID if k.startswith("set:")})
    return out


def tune(searchers, queries, start: dict, train: tuple[str, ...], rounds: int) -> tuple[dict, float]:
    config, best = dict(start), evaluate(searchers, queries, start, train)[0]
    for round_number in range(rounds):
        moved = False
        for knob, values in GRID.items():
            for value in values:
                if value == config[knob]:
                    continue
                score = evaluate(searchers, queries, {**config, knob: value}, train)[0]
                if score > best + MIN_GAIN:
                    best, config, moved = score, {**config, knob: value}, True
                    print(f"    round {round_number}: {knob} = {value} -> {best:.4f}", flush=True)
        if not moved:
            break
    return config, best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index-root", type=Path, default=Path.home() / ".cache/codesearch-bench-index")
    parser.add_argument("--bench-dir", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    started = time.monotonic()
    searchers: dict[str, ReplayingSearcher] = {}
    queries: dict[str, list[dict]] = {}
    for name, root in benchmark_roots(SHARED_BENCH / "repos.json", args.bench_dir):
        index_dir = args.index_root / name
        if not (index_dir / "catalog.sqlite3").exists():
            raise SystemExit(f"no index of {name} in {index_dir}: run scripts/bench_quality.py first")
        searchers[name] = ReplayingSearcher(Index(root, load_settings(root), index_dir))
        queries[name] = json.loads((SHARED_BENCH / "annotations" / f"{name}.json").read_text())
        for q in queries[name]:
            searchers[name].search(SearchRequest(query=q["query"], limit=LIMIT), side_by_side=False)
    print(f"retriever lists of {sum(map(len, queries.values()))} queries recorded in "
          f"{time.monotonic() - started:.0f} s", flush=True)
    shipped = defaults(next(iter(searchers.values())))
    for half, other in (("A", "B"), ("B", "A")):
        print(f"tuned on half {half} ({', '.join(HALVES[half])}):", flush=True)
        config, train_score = tune(searchers, queries, shipped, HALVES[half], args.rounds)
        held_out, categories = evaluate(searchers, queries, config, HALVES[other])
        print(f"  on {half} (tuned on): {train_score:.3f}   on {other} (held out): {held_out:.3f}   held out per "
              f"category: " + ", ".join(f"{k} {v:.3f}" for k, v in categories.items()))
        print(f"  configuration: {json.dumps(config)}")
    for half in ("A", "B"):
        score, categories = evaluate(searchers, queries, shipped, HALVES[half])
        per_category = ", ".join(f"{k} {v:.3f}" for k, v in categories.items())
        print(f"shipped defaults on {half}: {score:.3f} ({per_category})")
    print(f"time: {time.monotonic() - started:.0f} s; command: {' '.join(sys.argv)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
