#!/usr/bin/env python3
"""Query latency: warm in-process p50/p95 per mode, and end to end through the CLI with and
without a daemon.

Usage: scripts/bench_latency.py REPO_DIR [--queries FILE.json] [--rounds 3] [--cli 20]
The repository is indexed first (vectors included; incremental if already indexed). Queries come
from a benchmark annotation file, or a built-in list of generic code questions.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.requests import SearchRequest
from codesearch.search.searcher import Searcher

GENERIC = ["error handling", "parse configuration file", "retry with backoff", "read from a socket",
           "how are tests run", "logging setup", "convert to json", "cache invalidation", "main entry point",
           "command line arguments", "http request", "thread pool", "string formatting", "Error", "Config"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cli_times(root: Path, queries: list[str], extra: list[str]) -> list[float]:
    """Wall time of whole `codesearch query` processes (the index dir comes from the environment)."""
    times = []
    for q in queries:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "codesearch.cli", "query", q, "--repo", str(root), "--json", *extra],
                       capture_output=True, check=True, cwd=Path(__file__).resolve().parents[1])
        times.append((time.perf_counter() - t) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--queries", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cli", type=int, default=20, help="CLI queries per variant")
    parser.add_argument("--index-dir", help="keep the index here instead of REPO_DIR/.codesearch")
    args = parser.parse_args()
    queries = [q["query"] for q in json.loads(args.queries.read_text())] if args.queries else GENERIC
    root = args.root.resolve()
    index = Index(root, load_settings(root), args.index_dir, create=True)
    report = Indexer(index).run()
    print(f"{root}: {report.summary()}")
    searcher = Searcher(index)
    searcher.search(SearchRequest(query="warm up"))  # model, graph
    for mode in ("hybrid", "keyword", "vector", "graph"):
        times = []
        for _ in range(args.rounds):
            for q in queries:
                times.append(searcher.search(SearchRequest(query=q, mode=mode)).timing_ms["total"])
        print(f"  in-process warm, {mode:<7} p50 {percentile(times, 0.5):6.1f} ms  "
              f"p95 {percentile(times, 0.95):6.1f} ms  ({len(times)} queries)")
    index.close()
    if args.index_dir:
        os.environ["CODESEARCH_INDEX_DIR"] = str(Path(args.index_dir).resolve())
    sample = (queries * 5)[:args.cli]
    cold = cli_times(root, sample[:5], ["--no-daemon"])
    print(f"  CLI, no daemon (cold process): p50 {statistics.median(cold):.0f} ms ({len(cold)} queries)")
    subprocess.run([sys.executable, "-m", "codesearch.cli", "daemon", "start", str(root)], check=True,
                   capture_output=True, cwd=Path(__file__).resolve().parents[1])
    try:
        time.sleep(2)  # let the daemon warm its model
        warm = cli_times(root, sample, [])
        print(f"  CLI through the daemon:        p50 {statistics.median(warm):.0f} ms  "
              f"p95 {percentile(warm, 0.95):.0f} ms ({len(warm)} queries)")
    finally:
        subprocess.run([sys.executable, "-m", "codesearch.cli", "daemon", "stop", str(root)], capture_output=True,
                       cwd=Path(__file__).resolve().parents[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
