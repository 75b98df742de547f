#!/usr/bin/env python3
"""Retrieval quality on the shared benchmark: NDCG@10 per repository, per category, overall,
plus an ablation over retrievers (keyword, vector, graph, each pair, all three) with and without
the ranking stage.

Usage: scripts/bench_quality.py [--bench-dir ~/.cache/codesearch-bench]
           [--index-root ~/.cache/codesearch-bench-index] [--no-ablation] [--json OUT] [NAME ...]
Each repository's `benchmark_root` (or whole checkout) is indexed into --index-root/NAME (kept
between runs: only changes are re-indexed), then every annotated query is run in this process.
The metric is the benchmark README's NDCG@10 (results deduplicated by path, then top 10).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codesearch.config import load_settings
from codesearch.eval.bench import DEFAULT_CHECKOUTS, SHARED_BENCH, MissingCheckout, benchmark_roots
from codesearch.eval.metrics import mean, score_query
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.ranking import RankingOptions
from codesearch.search.searcher import Searcher
from codesearch.search.types import SearchRequest

RETRIEVER_SETS = [("keyword",), ("vector",), ("graph",), ("keyword", "vector"), ("keyword", "graph"),
                  ("vector", "graph"), ("keyword", "vector", "graph")]


def label(retrievers: tuple[str, ...], ranking: bool) -> str:
    return "+".join(r[0].upper() for r in retrievers) + (" +rank" if ranking else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench-dir", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--index-root", type=Path, default=Path.home() / ".cache/codesearch-bench-index")
    parser.add_argument("--annotations", type=Path, default=SHARED_BENCH / "annotations")
    parser.add_argument("--repos-json", type=Path, default=SHARED_BENCH / "repos.json")
    parser.add_argument("--no-ablation", action="store_true")
    parser.add_argument("--files", action="store_true", help="rank files by aggregation (--files) too")
    parser.add_argument("--json", type=Path, help="write all figures here")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting for index and search, e.g. embed_quantize=false")
    parser.add_argument("--retrievers", default="keyword,vector,graph",
                        help="retrievers of the headline configuration (default all three)")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()

    try:
        roots = benchmark_roots(args.repos_json, args.bench_dir, args.names)
    except MissingCheckout as exc:
        print(exc, file=sys.stderr)
        return 1
    main_retrievers = tuple(args.retrievers.split(","))
    overrides = dict(item.split("=", 1) for item in args.set)
    configs: list[tuple[str, tuple[str, ...], bool, bool]] = [("default", main_retrievers, True, False)]
    if args.files:
        configs.append(("default --files", main_retrievers, True, True))
    if not args.no_ablation:
        for retrievers, ranking in itertools.product(RETRIEVER_SETS, (False, True)):
            configs.append((label(retrievers, ranking), retrievers, ranking, False))
    per_repo: dict[str, dict[str, float]] = defaultdict(dict)
    per_category: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    latencies: list[float] = []
    for name, root in roots:
        queries = json.loads((args.annotations / f"{name}.json").read_text())
        settings = load_settings(None, overrides)
        index = Index(root, settings, args.index_root / name, create=True)
        t = time.monotonic()
        report = Indexer(index).run()
        print(f"[{name}] {report.summary()}", file=sys.stderr)
        searcher = Searcher(index)
        for config_name, retrievers, ranking, files in configs:
            scores = []
            for q in queries:
                request = SearchRequest(query=q["query"], limit=30, retrievers=retrievers, files=files,
                                        ranking=RankingOptions() if ranking else RankingOptions.off())
                answer = searcher.search(request)
                if config_name == "default":
                    latencies.append(answer.timing_ms["total"])
                results = [r.to_dict() for r in answer.results]
                ndcg = score_query(results, q["relevant"], q.get("secondary", []))["ndcg@10"]
                scores.append(ndcg)
                per_category[config_name][q["category"]].append(ndcg)
            per_repo[config_name][name] = mean(scores)
        print(f"[{name}] default NDCG@10 {per_repo['default'][name]:.3f} ({time.monotonic() - t:.0f}s)",
              file=sys.stderr)
        index.close()

    names = [name for name, _ in roots]
    print(f"\nNDCG@10 per repository (default: hybrid K+V+G with ranking), {len(names)} repositories")
    for name in names:
        row = f"  {name:<20} {per_repo['default'][name]:.3f}"
        if args.files:
            row += f"   --files {per_repo['default --files'][name]:.3f}"
        print(row)
    print("\nper category (mean over queries):")
    for category, values in sorted(per_category["default"].items()):
        print(f"  {category:<14} {mean(values):.3f}  ({len(values)} queries)")
    print(f"\noverall (mean over repositories): {mean(list(per_repo['default'].values())):.3f}")
    if args.files:
        print(f"overall --files: {mean(list(per_repo['default --files'].values())):.3f}")
    if latencies:
        latencies.sort()
        print(f"query latency in process: p50 {latencies[len(latencies) // 2]:.1f} ms, "
              f"p95 {latencies[int(len(latencies) * 0.95)]:.1f} ms")
    if not args.no_ablation:
        print("\nablation (K keyword, V vector, G graph), mean NDCG@10 over repositories:")
        print(f"  {'retrievers':<12} {'no ranking':>11} {'ranking':>9}")
        for retrievers in RETRIEVER_SETS:
            off = mean(list(per_repo[label(retrievers, False)].values()))
            on = mean(list(per_repo[label(retrievers, True)].values()))
            print(f"  {label(retrievers, False):<12} {off:>11.3f} {on:>9.3f}")
    if args.json:
        args.json.write_text(json.dumps({"per_repo": per_repo, "per_category": {
            c: {k: mean(v) for k, v in cats.items()} for c, cats in per_category.items()}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
