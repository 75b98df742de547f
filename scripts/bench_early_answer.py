#!/usr/bin/env python3
"""The first answer in a repository without an index (search/early_answer: ripgrep over the
question's words, ranked by what a cheap parse of the best files shows), scored alone, in this
process, on the benchmark's questions: whether a relevant file is in the top ten, at the top, and
the reciprocal rank of the first. The four repositories its rules were tuned on (the tree of
scripts/bench_first_query.py --combine) are reported apart from the others, which are held out.

    .venv/bin/python scripts/bench_early_answer.py [--annotations DIR] [--repos-json FILE] [--json OUT] [NAME ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import write_results

from codesearch.config import load_settings
from codesearch.eval.bench import DEFAULT_CHECKOUTS, SHARED_BENCH, benchmark_roots
from codesearch.eval.metrics import paths_match
from codesearch.eval.runner import load_queries
from codesearch.search.early_answer import early_answer
from codesearch.search.requests import SearchRequest

TUNED_ON = ("kotlinx-coroutines", "cats", "alamofire", "zod")
LIMIT = 10


def first_relevant(paths: list[str], relevant: list) -> int | None:
    """1-based rank of the first result whose file is a relevant one."""
    wanted = [r if isinstance(r, str) else r["path"] for r in relevant]
    for rank, path in enumerate(dict.fromkeys(paths), start=1):
        if any(paths_match(path, w) for w in wanted):
            return rank
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--annotations", type=Path, default=SHARED_BENCH / "annotations")
    parser.add_argument("--repos-json", type=Path, default=SHARED_BENCH / "repos.json")
    parser.add_argument("--bench-dir", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--json", type=Path, help="write the figures and every question's rank here")
    args = parser.parse_args(argv)
    groups: dict[str, list[int | None]] = {"tuned on": [], "held out": []}
    per_repo: dict[str, dict[str, float]] = {}
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="early-answer-") as scratch:
        for name, root in benchmark_roots(args.repos_json, args.bench_dir, args.names or None):
            settings = load_settings(root)
            ranks = []
            for q in load_queries(args.annotations / f"{name}.json"):
                request = SearchRequest(query=q["query"], limit=LIMIT)
                answer = early_answer(root, Path(scratch) / name, settings, request, "benchmark")
                ranks.append(first_relevant([r.path for r in answer.results][:LIMIT], q["relevant"]))
                rows.append({"repo": name, "query": q["query"], "rank": ranks[-1]})
            groups["tuned on" if name in TUNED_ON else "held out"] += ranks
            per_repo[name] = _figures(ranks)
            print(f"{name:<20} {len(ranks):>3} questions  hit@10 {_hit(ranks):.3f}  MRR {_mrr(ranks):.3f}", flush=True)
    print(f"{'group':<20} {'n':>5} {'hit@10':>7} {'top':>6} {'MRR':>6}")
    for group, ranks in groups.items():
        if ranks:
            print(f"{group:<20} {len(ranks):>5} {_hit(ranks):>7.3f} {_top(ranks):>6.3f} {_mrr(ranks):>6.3f}")
    if args.json:
        write_results(args.json, {"tuned_on": list(TUNED_ON), "per_repo": per_repo,
                                  "groups": {group.replace(" ", "_"): _figures(ranks)
                                             for group, ranks in groups.items() if ranks}}, questions=rows)
    return 0


def _figures(ranks: list[int | None]) -> dict[str, float]:
    return {"questions": len(ranks), "hit@10": _hit(ranks), "top": _top(ranks), "mrr": _mrr(ranks)}


def _hit(ranks: list[int | None]) -> float:
    return float(statistics.mean(r is not None for r in ranks))


def _top(ranks: list[int | None]) -> float:
    return float(statistics.mean(r == 1 for r in ranks))


def _mrr(ranks: list[int | None]) -> float:
    return float(statistics.mean(1 / r if r else 0.0 for r in ranks))


if __name__ == "__main__":
    sys.exit(main())
