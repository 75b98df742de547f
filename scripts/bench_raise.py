#!/usr/bin/env python3
"""The raise-site benchmark (scripts/build_raise_bench.py): does a pasted error message land on
the statement that produces it?

Each case's query runs through codesearch (hybrid, the bench index of scripts/bench_quality.py
in --index-root/NAME, the same settings) and through ripgrep (`rg -F` over the benchmark root on
the message's longest fixed run, the text between its placeholders; matching lines in path
order, the first one rank 1). A result is right when it lies in the case's file and overlaps the
statement's lines (the truth chunk holds them). Reported: Acc@1 and Acc@5, per language, per
benchmark half (codesearch/eval/bench.py HALVES) and overall (mean over cases), and the search's
latency in process.

Usage: scripts/bench_raise.py [--cases ~/.cache/codesearch-bench/raise-cases.json]
           [--bench-dir ~/.cache/codesearch-bench] [--index-root ~/.cache/codesearch-bench-index]
           [--mode hybrid] [--ranking NAME=VALUE ...] [--no-rg] [--json OUT] [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import write_results

from codesearch.config import load_settings
from codesearch.eval.bench import DEFAULT_CHECKOUTS, SHARED_BENCH, benchmark_roots
from codesearch.eval.metrics import mean
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.ranking import RankingOptions
from codesearch.search.requests import SearchRequest
from codesearch.search.ripgrep import rg_binary
from codesearch.search.searcher import Searcher

DEFAULT_CASES = DEFAULT_CHECKOUTS / "raise-cases.json"
DEPTH = 10  # results read per query (Acc@k for k up to this)
MISSED = 0  # the rank recorded when the truth is not among them
# what --json keeps of each case: where its statement is, the query, and each tool's rank
CASE_FIELDS = ("repo", "half", "language", "path", "line", "end_line", "query", "rank", "rg_rank")


def rank_of(places: list[tuple[str, int, int]], case: dict) -> int:
    """1-based rank of the first (path, first line, last line) over the case's statement, else MISSED."""
    for i, (path, start, end) in enumerate(places[:DEPTH], start=1):
        if path == case["path"] and start <= case["end_line"] and end >= case["line"]:
            return i
    return MISSED


def rg_places(root: Path, fixed: str) -> list[tuple[str, int, int]]:
    """ripgrep's matching lines for a fixed string, in path order, as (path, line, line)."""
    out = subprocess.run([rg_binary(), "--no-config", "--fixed-strings", "--line-number", "--no-heading",
                          "--with-filename", "--sort", "path", "--max-count", str(DEPTH), "--", fixed, "."],
                         cwd=root, capture_output=True, text=True, errors="replace").stdout
    places = []
    for line in out.split("\n"):
        path, _, rest = line.partition(":")
        number, _, _ = rest.partition(":")
        if number.isdigit():
            places.append((path.removeprefix("./"), int(number), int(number)))
            if len(places) >= DEPTH:
                break
    return places


def accuracy(ranks: list[int], k: int) -> float:
    return mean([1.0 if 0 < r <= k else 0.0 for r in ranks])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument("--bench-dir", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--index-root", type=Path, default=Path.home() / ".cache/codesearch-bench-index")
    parser.add_argument("--repos-json", type=Path, default=SHARED_BENCH / "repos.json")
    parser.add_argument("--mode", default="hybrid")
    parser.add_argument("--ranking", action="append", default=[], metavar="NAME=VALUE",
                        help="a ranking strength or step (search/ranking.py RankingOptions), e.g. exact_text=false")
    parser.add_argument("--no-rg", action="store_true", help="leave ripgrep's figures out")
    parser.add_argument("--json", type=Path, help="write the figures and every case's ranks here")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()

    ranking = RankingOptions()
    for pair in args.ranking:
        key, _, value = pair.partition("=")
        current = getattr(ranking, key)
        setattr(ranking, key, value.lower() in ("1", "true", "yes", "on") if isinstance(current, bool)
                else type(current)(value))
    cases = json.loads(args.cases.read_text())
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for case in cases:
        if not args.names or case["repo"] in args.names:
            by_repo[case["repo"]].append(case)
    latencies: list[float] = []
    for name, root in benchmark_roots(args.repos_json, args.bench_dir, sorted(by_repo)):
        index = Index(root, load_settings(None, {}), args.index_root / name, create=True)
        Indexer(index).run()
        searcher = Searcher(index)
        for case in by_repo[name]:
            answer = searcher.search(SearchRequest(query=case["query"], mode=args.mode, limit=DEPTH,
                                                           ranking=ranking))
            latencies.append(answer.timing_ms["total"])
            case["rank"] = rank_of([(r.path, r.start_line, r.end_line) for r in answer.results], case)
            case["top"] = [f"{r.path}:{r.start_line}-{r.end_line}" for r in answer.results[:3]]
            if not args.no_rg:
                case["rg_rank"] = rank_of(rg_places(root, case["fixed"]), case)
        index.close()
        print(f"[{name}] Acc@1 {accuracy([c['rank'] for c in by_repo[name]], 1):.3f}", file=sys.stderr)

    done = [c for cs in by_repo.values() for c in cs]
    tools = ["rank"] + ([] if args.no_rg else ["rg_rank"])
    groups: dict[str, list[dict]] = defaultdict(list)
    for case in done:
        groups[f"language {case['language']}"].append(case)
        groups[f"half {case['half']}"].append(case)
    groups["overall"] = done
    figures = {group: {"cases": len(members), **{f"{tool}_acc@{k}": accuracy([c[tool] for c in members], k)
                                                  for tool in tools for k in (1, 5)}}
               for group, members in sorted(groups.items())}
    print(f"\n{'':<22} {'cases':>5}  {'Acc@1':>6} {'Acc@5':>6}" + ("   rg Acc@1  rg Acc@5" if not args.no_rg else ""))
    for group, f in figures.items():
        row = f"{group:<22} {f['cases']:>5}  {f['rank_acc@1']:>6.3f} {f['rank_acc@5']:>6.3f}"
        if not args.no_rg:
            row += f"   {f['rg_rank_acc@1']:>8.3f}  {f['rg_rank_acc@5']:>8.3f}"
        print(row)
    latencies.sort()
    p50 = latencies[len(latencies) // 2] if latencies else 0.0
    print(f"search latency in process: p50 {p50:.1f} ms")
    if args.json:
        write_results(args.json, {"figures": figures, "latency_ms_p50": p50},
                      cases=[{key: case[key] for key in CASE_FIELDS if key in case} for case in done])
    return 0


if __name__ == "__main__":
    sys.exit(main())
