#!/usr/bin/env python3
"""A workspace of three repositories against one repository of the same total size, each served
by a warm daemon: search latency (target: the workspace at most 1.5x) and the daemon's memory
(target: serving three at most 1.3x serving one).

usage: scripts/bench_workspace.py [NAME ...] [--sub src] [--rounds 3] [--mode hybrid] [--keep DIR]

NAMEs are benchmark checkouts under ~/.cache/codesearch-bench (default: flask click requests);
--sub takes only that folder of each (default: src; "" for the whole checkout). In a temp folder,
each is copied twice: as a repository of its own (ws/NAME) and as a folder of one combined
repository (single/NAME), so both sides hold the same files. All four indexes are built with
vectors, then:
1. a workspace daemon serves ws/* and a daemon serves single/, both warm (every chunk embedded,
   the graph loaded); the generic questions are asked of each through its socket, the two taking
   turns query by query; p50/p95 of each;
2. RSS of both daemons after the queries, then of a daemon serving ws/NAME (the first) alone,
   after the same queries.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchlib import GENERIC_QUERIES, REPO_ROOT, codesearch, percentile, wait_until_embedded

from codesearch.daemon.client import call
from codesearch.eval.bench import DEFAULT_CHECKOUTS


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def start(*args: str) -> int:
    started = codesearch("daemon", "start", *args, "--json", "--timeout", "1800")
    return int(json.loads(started.stdout)["pid"])


def ask_all(sock: Path, queries: list[str], mode: str) -> list[float]:
    times = []
    for q in queries:
        t = time.perf_counter()
        call(sock, "search", {"query": q, "mode": mode, "limit": 10})
        times.append((time.perf_counter() - t) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=["flask", "click", "requests"])
    parser.add_argument("--sub", default="src")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mode", default="hybrid")
    parser.add_argument("--keep", help="build (or reuse) the trees and indexes here instead of a temp folder")
    args = parser.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="csws-"))
    os.environ["CODESEARCH_WORKSPACE_DIR"] = str(base / "state")  # the workspace daemon's files, here
    ws_roots = [base / "ws" / n for n in args.names]
    single = base / "single"
    for name, root in zip(args.names, ws_roots, strict=True):
        source = DEFAULT_CHECKOUTS / name / args.sub if args.sub else DEFAULT_CHECKOUTS / name
        for dest in (root, single / name):
            if not dest.exists():
                shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".git", ".codesearch"))
    for root in (*ws_roots, single):
        t = time.perf_counter()
        codesearch("index", root, "-q")
        stats = codesearch("stats", "--repo", root, "--json", "--fast").stdout
        print(f"indexed {root.relative_to(base)} in {time.perf_counter() - t:.0f} s: {stats.strip()[:90]}...",
              flush=True)

    from codesearch.daemon.client import socket_path
    from codesearch.workspace import workspace_of_paths
    ws_sock = workspace_of_paths(ws_roots).state_dir() / "daemon.sock"
    single_sock = socket_path(single, None)
    queries = GENERIC_QUERIES
    try:
        ws_pid = start(*map(str, ws_roots))
        single_pid = start(str(single))
        for sock in (ws_sock, single_sock):
            wait_until_embedded(sock)
            ask_all(sock, queries, args.mode)  # warm: the graph, the caches
        times: dict[str, list[float]] = {"workspace of 3": [], "one repository": []}
        for _ in range(args.rounds):
            for q in queries:  # turns query by query
                times["workspace of 3"] += ask_all(ws_sock, [q], args.mode)
                times["one repository"] += ask_all(single_sock, [q], args.mode)
        rss = {"workspace of 3": rss_mb(ws_pid), "one repository (same files)": rss_mb(single_pid)}
    finally:
        codesearch("daemon", "stop", *map(str, ws_roots), check=False)
        codesearch("daemon", "stop", str(single), check=False)
    try:
        alone_pid = start(str(ws_roots[0]))
        alone_sock = socket_path(ws_roots[0], None)
        wait_until_embedded(alone_sock)
        ask_all(alone_sock, queries * args.rounds, args.mode)
        rss[f"one repository ({args.names[0]} alone)"] = rss_mb(alone_pid)
    finally:
        codesearch("daemon", "stop", str(ws_roots[0]), check=False)

    print(f"\n{args.mode} search through the socket, warm daemons, {len(queries)} questions x {args.rounds} rounds")
    print(f"{'served':<20}{'p50 ms':>9}{'p95 ms':>9}{'n':>6}")
    for label, values in times.items():
        print(f"{label:<20}{percentile(values, 0.5):>9.1f}{percentile(values, 0.95):>9.1f}{len(values):>6}")
    ratio = percentile(times["workspace of 3"], 0.5) / percentile(times["one repository"], 0.5)
    print(f"workspace / one repository, p50: {ratio:.2f}x")
    print(f"\n{'daemon':<40}{'RSS MB':>9}")
    for label, value in rss.items():
        print(f"{label:<40}{value:>9.0f}")
    ws = rss["workspace of 3"]
    print(f"workspace of 3 / one repository of the same files: {ws / rss['one repository (same files)']:.2f}x; "
          f"/ {args.names[0]} alone: {ws / rss[f'one repository ({args.names[0]} alone)']:.2f}x")
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO_ROOT))
    main()
