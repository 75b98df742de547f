#!/usr/bin/env python3
"""Retrieval quality on the shared benchmark: NDCG@10 per repository, per category, per language
and per half (codesearch/eval/bench.py HALVES: tune on one half, report the other), overall,
plus an ablation over retrievers (keyword, vector, graph, each pair, all three) with and without
the ranking stage, and one over the ranking steps (each switched off in turn).

Usage: scripts/bench_quality.py [--bench-dir ~/.cache/codesearch-bench]
           [--index-root ~/.cache/codesearch-bench-index] [--no-ablation] [--rule-ablation]
           [--ranking NAME=VALUE ...] [--set NAME=VALUE ...] [--budget-share F] [--json OUT] [NAME ...]
Each repository's `benchmark_root` (or whole checkout) is indexed into --index-root/NAME (kept
between runs: only changes are re-indexed), then every annotated query is run in this process.
The metric is the benchmark README's NDCG@10 (results deduplicated by path, then top 10).
--budget-share scales the keyword retriever's postings budget (search/retrievers/keyword.py) to
F times each repository's chunks: what the budget does in a monorepo (90,000 of 1.35 million
chunks: F = 0.067), measured on repositories it never reaches.
Other repositories of the same format (a held-out set) are measured with --repos-json,
--annotations and --bench-dir pointing at them; their half is shown as '-'.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections import defaultdict
from dataclasses import fields
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import write_results

from codesearch.config import load_settings
from codesearch.eval.bench import DEFAULT_CHECKOUTS, SHARED_BENCH, MissingCheckout, benchmark_roots, half_of
from codesearch.eval.metrics import mean, score_query
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.ranking import RankingOptions
from codesearch.search.requests import SearchRequest
from codesearch.search.retrievers import keyword as keyword_module
from codesearch.search.searcher import Searcher
from codesearch.vocabulary import FILE_RANKINGS

RETRIEVER_SETS = [("keyword",), ("vector",), ("graph",), ("keyword", "vector"), ("keyword", "graph"),
                  ("vector", "graph"), ("keyword", "vector", "graph")]
RANKING_STEPS = [f.name for f in fields(RankingOptions) if f.type in (bool, "bool")]


def label(retrievers: tuple[str, ...], ranking: bool) -> str:
    return "+".join(r[0].upper() for r in retrievers) + (" +rank" if ranking else "")


def ranking_options(pairs: list[str]) -> RankingOptions:
    """RankingOptions with NAME=VALUE strengths (or steps: true/false) changed."""
    options = RankingOptions()
    known = {f.name: f for f in fields(RankingOptions)}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in known:
            raise SystemExit(f"unknown ranking option {name!r}; known: {', '.join(known)}")
        current = getattr(options, name)
        setattr(options, name, value.lower() in ("1", "true", "yes", "on") if isinstance(current, bool)
                else type(current)(value))
    return options


def without(options: RankingOptions, step: str) -> RankingOptions:
    copy = RankingOptions(**{f.name: getattr(options, f.name) for f in fields(RankingOptions)})
    setattr(copy, step, False)
    return copy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench-dir", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--index-root", type=Path, default=Path.home() / ".cache/codesearch-bench-index")
    parser.add_argument("--annotations", type=Path, default=SHARED_BENCH / "annotations")
    parser.add_argument("--repos-json", type=Path, default=SHARED_BENCH / "repos.json")
    parser.add_argument("--no-ablation", action="store_true")
    parser.add_argument("--rule-ablation", action="store_true", help="each ranking step switched off in turn")
    parser.add_argument("--files", action="store_true",
                        help="rank files (--files) too, once per strategy (--files-by: fuse_first, per_retriever)")
    parser.add_argument("--json", type=Path, help="write all figures here, and each question's NDCG@10")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting for index and search, e.g. embed_quantize=false")
    parser.add_argument("--ranking", action="append", default=[], metavar="NAME=VALUE",
                        help="a ranking strength or step (search/ranking.py RankingOptions), e.g. word_decay=1")
    parser.add_argument("--retrievers", default="keyword,vector,graph",
                        help="retrievers of the headline configuration (default all three)")
    parser.add_argument("--budget-share", type=float, help="the keyword postings budget as a share of the chunks")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()

    try:
        roots = benchmark_roots(args.repos_json, args.bench_dir, args.names)
    except MissingCheckout as exc:
        print(exc, file=sys.stderr)
        return 1
    languages = {repo["name"]: repo.get("language", "?") for repo in json.loads(args.repos_json.read_text())}
    main_retrievers = tuple(args.retrievers.split(","))
    overrides = dict(item.split("=", 1) for item in args.set)
    headline = ranking_options(args.ranking)
    # (name, retrievers, ranking, file ranking strategy: None for chunks)
    configs: list[tuple[str, tuple[str, ...], RankingOptions, str | None]] = [
        ("default", main_retrievers, headline, None)]
    file_configs = [f"--files-by {strategy}" for strategy in FILE_RANKINGS] if args.files else []
    configs += [(name, main_retrievers, headline, name.split()[-1]) for name in file_configs]
    if not args.no_ablation:
        for retrievers, ranking in itertools.product(RETRIEVER_SETS, (False, True)):
            options = headline if ranking else RankingOptions.off()
            configs.append((label(retrievers, ranking), retrievers, options, None))
    if args.rule_ablation:
        configs += [(f"no {step}", main_retrievers, without(headline, step), None) for step in RANKING_STEPS]
    per_repo: dict[str, dict[str, float]] = defaultdict(dict)
    per_category: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    per_half_category: dict[str, list[float]] = defaultdict(list)  # (half, category) of the headline
    latencies: list[float] = []
    rank_ms: dict[str, list[float]] = defaultdict(list)  # the ranking step's time of each file configuration
    query_rows: list[dict] = []  # each question's NDCG@10 in the headline configuration, for --json
    query_counts: dict[str, int] = {}
    for name, root in roots:
        queries = json.loads((args.annotations / f"{name}.json").read_text())
        query_counts[name] = len(queries)
        settings = load_settings(None, overrides)
        index = Index(root, settings, args.index_root / name, create=True)
        t = time.monotonic()
        report = Indexer(index).run()
        print(f"[{name}] {report.summary()}", file=sys.stderr)
        searcher = Searcher(index)
        if args.budget_share is not None:
            keyword_module.POSTINGS_BUDGET = max(1, int(args.budget_share * index.catalog.files.chunk_count()))
        for config_name, retrievers, options, files in configs:
            scores = []
            for q in queries:
                request = SearchRequest(query=q["query"], limit=30, retrievers=retrievers, files=files is not None,
                                        file_ranking=files, ranking=options)
                answer = searcher.search(request)
                if config_name == "default":
                    latencies.append(answer.timing_ms["total"])
                if files is not None:
                    rank_ms[config_name].append(answer.timing_ms["rank"])
                results = [r.to_dict() for r in answer.results]
                ndcg = score_query(results, q["relevant"], q.get("secondary", []))["ndcg@10"]
                scores.append(ndcg)
                per_category[config_name][q["category"]].append(ndcg)
                if config_name == "default":
                    per_half_category[f"{half_of(name)} {q['category']}"].append(ndcg)
                    query_rows.append({"repo": name, "half": half_of(name), "category": q["category"],
                                       "query": q["query"], "ndcg@10": round(ndcg, 4)})
            per_repo[config_name][name] = mean(scores)
        print(f"[{name}] default NDCG@10 {per_repo['default'][name]:.3f} ({time.monotonic() - t:.0f}s)",
              file=sys.stderr)
        index.close()

    names = [name for name, _ in roots]
    halves = sorted({half_of(n) for n in names})

    def overall(config: str, half: str | None = None) -> float:
        return mean([v for n, v in per_repo[config].items() if half is None or half_of(n) == half])

    print(f"\nNDCG@10 per repository (default: hybrid K+V+G with ranking), {len(names)} repositories")
    for name in names:
        row = f"  {name:<20} {half_of(name)}  {languages.get(name, '?'):<11} {per_repo['default'][name]:.3f}"
        row += "".join(f"   {config} {per_repo[config][name]:.3f}" for config in file_configs)
        print(row)
    print("\nper category (mean over queries):")
    for category, values in sorted(per_category["default"].items()):
        by_half = "  ".join(f"half {h} {mean(per_half_category[f'{h} {category}']):.3f} "
                            f"({len(per_half_category[f'{h} {category}'])})" for h in halves)
        print(f"  {category:<14} {mean(values):.3f}  ({len(values)} queries)   {by_half}")
    print("\nper language (mean over repositories):")
    by_language: dict[str, list[float]] = defaultdict(list)
    for name in names:
        by_language[languages.get(name, "?")].append(per_repo["default"][name])
    for language, values in sorted(by_language.items()):
        print(f"  {language:<12} {mean(values):.3f}  ({len(values)})")
    print("\nper half (mean over its repositories): " + "  ".join(f"{h} {overall('default', h):.3f}" for h in halves))
    print(f"overall (mean over repositories): {overall('default'):.3f}")
    for config in file_configs:
        print(f"{config}: overall {overall(config):.3f}, " + "  ".join(f"{h} {overall(config, h):.3f}" for h in halves)
              + f"; ranking step p50 {sorted(rank_ms[config])[len(rank_ms[config]) // 2]:.2f} ms")
    if latencies:
        latencies.sort()
        print(f"query latency in process: p50 {latencies[len(latencies) // 2]:.1f} ms, "
              f"p95 {latencies[int(len(latencies) * 0.95)]:.1f} ms")
    if not args.no_ablation:
        print("\nablation (K keyword, V vector, G graph), mean NDCG@10 over repositories:")
        print(f"  {'retrievers':<12} {'no ranking':>11} {'ranking':>9}")
        for retrievers in RETRIEVER_SETS:
            print(f"  {label(retrievers, False):<12} {overall(label(retrievers, False)):>11.3f} "
                  f"{overall(label(retrievers, True)):>9.3f}")
    if args.rule_ablation:
        print("\nranking steps, each switched off (change against the default; per half):")
        for step in RANKING_STEPS:
            config = f"no {step}"
            cells = "  ".join(f"{h} {overall(config, h) - overall('default', h):+.3f}" for h in halves)
            print(f"  {step:<20} {overall(config):.3f} ({overall(config) - overall('default'):+.3f})  {cells}")
    if args.json:
        write_results(args.json, {
            "repositories": {n: {"language": languages.get(n, "?"), "half": half_of(n), "queries": query_counts[n]}
                             for n in names},
            "settings": overrides, "ranking": args.ranking, "retrievers": list(main_retrievers),
            "per_repo": per_repo,
            "per_category": {c: {k: mean(v) for k, v in cats.items()} for c, cats in per_category.items()},
            "per_half_category": {k: mean(v) for k, v in per_half_category.items()},
            "halves": {h: overall("default", h) for h in halves}, "overall": overall("default"),
            "files": {config: {"overall": overall(config), "halves": {h: overall(config, h) for h in halves}}
                      for config in file_configs},
            "latency_ms": {"p50": latencies[len(latencies) // 2], "p95": latencies[int(len(latencies) * 0.95)]}
            if latencies else None}, queries=query_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
