#!/usr/bin/env python3
"""`codesearch merge` of 200 rows: in process (parse, fuse, answer; target under 1 ms) and as a
whole CLI process (Python's start, imports, stdin and stdout included).

usage: scripts/bench_merge.py [--rows 200] [--sources 4] [--runs 2000] [--cli-runs 30]

The rows are spread over the sources, best first, with a third of the ids shared between
sources (duplicates are merged), each with a title and a score as real lists carry. Prints the
median and p95 of each path, and of `python -c pass` for the interpreter's own start.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from benchlib import REPO_ROOT, percentile

from codesearch.search.merge import merge, parse_boosts, parse_lists


def make_lists(rows: int, sources: int) -> list[dict]:
    per = rows // sources
    out = []
    for s in range(sources):
        results = []
        for rank in range(per):
            shared = rank % 3 == 0  # a third of each list is also in the others
            rid = f"doc-{rank}" if shared else f"s{s}-doc-{rank}"
            results.append({"id": rid, "title": f"result {rank} of source {s}", "score": 1.0 / (rank + 1)})
        out.append({"source": f"source{s}", "results": results})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--sources", type=int, default=4)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--cli-runs", type=int, default=30)
    args = parser.parse_args()
    data = make_lists(args.rows, args.sources)
    text = json.dumps(data)
    boosts = "source0:1.2,source1:0.8"

    in_process = []
    for _ in range(args.runs):
        t = time.perf_counter()
        answer = merge(parse_lists(json.loads(text)), parse_boosts(boosts))
        json.dumps(answer)
        in_process.append((time.perf_counter() - t) * 1000)
    fuse_only = []
    lists = parse_lists(data)
    for _ in range(args.runs):
        t = time.perf_counter()
        merge(lists, parse_boosts(boosts))
        fuse_only.append((time.perf_counter() - t) * 1000)

    command = [sys.executable, "-m", "codesearch.cli", "merge", f"--boost-sources={boosts}"]
    whole, bare = [], []
    for _ in range(args.cli_runs):  # the two alternate, so drift in the machine's speed hits both
        t = time.perf_counter()
        done = subprocess.run(command, input=text, capture_output=True, text=True, cwd=REPO_ROOT, check=True)
        whole.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append((time.perf_counter() - t) * 1000)
    merged = json.loads(done.stdout)

    print(f"{args.rows} rows in {args.sources} sources -> {merged['count']} merged results")
    print(f"{'path':<52}{'median ms':>10}{'p95 ms':>9}{'runs':>6}")
    for label, times in (("in process: JSON text -> parse, fuse, answer as JSON", in_process),
                         ("in process: merge() of parsed lists", fuse_only),
                         ("whole CLI process: codesearch merge < rows.json", whole),
                         ("python -c pass (the interpreter's start)", bare)):
        print(f"{label:<52}{percentile(times, 0.5):>10.3f}{percentile(times, 0.95):>9.3f}{len(times):>6}")


if __name__ == "__main__":
    main()
