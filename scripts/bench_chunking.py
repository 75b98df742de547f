#!/usr/bin/env python3
"""Walk, parse and chunk real repositories; print files/s, chunks/s and fallback shares.

Usage: scripts/bench_chunking.py --bench-dir ~/.cache/codesearch-bench [--repos-json ../shared/bench/repos.json]
       [--runs 5] [NAME ...]
Each repository's `benchmark_root` (or the whole checkout) is walked, read, parsed and chunked
in this process, `--runs` times; the figures are medians over the runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codesearch.config import Settings
from codesearch.eval.bench import DEFAULT_CHECKOUTS, SHARED_BENCH, MissingCheckout, benchmark_roots
from codesearch.ingest.extract import PARALLEL_MIN_FILES_WARM, SkipFile, extract_files
from codesearch.ingest.languages import spec_for_path
from codesearch.ingest.walker import RepoWalker, SourceFile


def run_once(root: Path, settings: Settings, workers: int) -> dict:
    files = chunks = 0
    by_language: Counter[str] = Counter()
    fallback: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    t0 = time.perf_counter()
    jobs = []
    for entry in RepoWalker(root, settings).walk():
        if isinstance(entry, SourceFile):
            jobs.append((entry.rel, entry.path, entry.language))
        else:
            skipped[entry.reason] += 1
    for result in extract_files(jobs, settings, workers):
        if isinstance(result, SkipFile):
            skipped[result.reason] += 1
            continue
        files += 1
        chunks += len(result.chunks)
        by_language[result.language] += 1
        if result.fell_back:
            fallback[result.language] += 1
    return {"seconds": time.perf_counter() - t0, "files": files, "chunks": chunks,
            "by_language": by_language, "fallback": fallback, "skipped": skipped}


def parse_seconds(root: Path, settings: Settings) -> float:
    """Baseline: tree-sitter's parse alone over the grammar-backed files, contents preloaded."""
    from codesearch.ingest.parsing import _parser
    items = []
    for entry in RepoWalker(root, settings).walk():
        spec = spec_for_path(entry.rel) if isinstance(entry, SourceFile) else None
        if spec is not None:
            assert isinstance(entry, SourceFile)
            items.append((spec.grammar, entry.path.read_bytes()))
    t0 = time.perf_counter()
    for grammar, data in items:
        _parser(grammar).parse(data)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench-dir", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--repos-json", type=Path, default=SHARED_BENCH / "repos.json")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--whole", action="store_true", help="walk whole checkouts, not benchmark_root")
    parser.add_argument("--workers", type=int, default=1,
                        help="extraction processes (0: one per core); the whole set is one job list")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    settings = Settings()
    try:
        roots = benchmark_roots(args.repos_json, args.bench_dir, args.names, args.whole)
    except MissingCheckout as exc:
        print(exc, file=sys.stderr)
        return 1

    # warm up: load every grammar and compile every query once, as a long-running indexer would;
    # with --workers, also start the worker pool (a daemon keeps it) and time that start
    for _, root in roots:
        run_once(root, settings, 1)
    pool_start = 0.0
    if args.workers != 1:
        t0 = time.perf_counter()
        for _, root in roots:
            run_once(root, settings, args.workers)
        pool_start = time.perf_counter() - t0
    totals, parse_only, parallel = [], [], []
    languages: Counter[str] = Counter()
    fallbacks: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    per_repo: dict[str, list[float]] = defaultdict(list)
    for run in range(args.runs):
        seconds = files = chunks = 0
        for name, root in roots:
            r = run_once(root, settings, 1)
            seconds += r["seconds"]
            files += r["files"]
            chunks += r["chunks"]
            per_repo[name].append(r["files"] / r["seconds"] if r["seconds"] else 0)
            if run == 0:
                languages.update(r["by_language"])
                fallbacks.update(r["fallback"])
                skipped.update(r["skipped"])
        totals.append((seconds, files, chunks))
        parse_only.append(sum(parse_seconds(root, settings) for _, root in roots))
        if args.workers != 1:
            parallel.append(sum(run_once(root, settings, args.workers)["seconds"] for _, root in roots))
    med_seconds = statistics.median(t[0] for t in totals)
    files, chunks = totals[0][1], totals[0][2]
    print(f"repositories: {len(roots)}  files: {files}  chunks: {chunks}  runs: {args.runs}")
    print(f"walk+read+parse+chunk, 1 process: median {med_seconds:.2f} s "
          f"-> {files / med_seconds:.0f} files/s, {chunks / med_seconds:.0f} chunks/s "
          f"(min..max {min(t[0] for t in totals):.2f}..{max(t[0] for t in totals):.2f} s)")
    med_parse = statistics.median(parse_only)
    print(f"tree-sitter parse alone, same files:  median {med_parse:.2f} s -> {files / med_parse:.0f} files/s")
    if parallel:
        med_par = statistics.median(parallel)
        print(f"walk+read+parse+chunk, {args.workers or 'all'} workers, pool running (used for "
              f">= {PARALLEL_MIN_FILES_WARM} files): median {med_par:.2f} s -> {files / med_par:.0f} files/s "
              f"(first pass, pool starting: {pool_start:.2f} s)")
    print("\nper repository, median files/s:")
    for name, rates in per_repo.items():
        print(f"  {name:<20} {statistics.median(rates):8.0f}")
    print("\nfiles per language (share chunked by line windows or headings, not by a grammar):")
    for language, count in languages.most_common():
        print(f"  {language:<12} {count:6d}   fallback {100 * fallbacks[language] / count:5.1f}%")
    if skipped:
        print("\nskipped:", ", ".join(f"{k}={v}" for k, v in skipped.most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
