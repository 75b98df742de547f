#!/usr/bin/env python3
"""This checkout's search through the daemon's socket against another checkout's (an older
commit, for a "no slower than before" check), in one run: each side's daemon serves its own index
of the same repository, and every request goes to both in turns (which side goes first alternates),
so that the machine's load, however noisy, weighs on both alike.

Usage: scripts/bench_socket_ab.py REPO_DIR --other-checkout DIR [--work DIR] [--runs 12]
                                  [--mode hybrid --mode graph]
--other-checkout: another checkout of codesearch (for example `git worktree add /tmp/base REV`),
run with this checkout's interpreter and its code on PYTHONPATH. Each side indexes REPO_DIR into
WORK/this and WORK/other with its own code (vectors included; an index already there is brought up
to date), then its daemon is started, waited for and warmed with each question once. Prints, per
mode, both sides' p50 and p95 in ms over the --runs rounds of the generic questions, and the ratio
of the p50s (this / other).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchlib import GENERIC_QUERIES, REPO_ROOT, percentile, wait_until_idle

from codesearch.daemon.client import call, socket_path


def run_cli(checkout: Path, *args: object) -> subprocess.CompletedProcess:
    """`codesearch ARGS` with the code of `checkout`."""
    env = dict(os.environ, PYTHONPATH=str(checkout), HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "codesearch.cli", *map(str, args)], cwd=checkout, env=env,
                          capture_output=True, text=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--other-checkout", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/codesearch-socket-ab"))
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--mode", action="append", choices=("keyword", "hybrid", "vector", "graph"))
    args = parser.parse_args()
    modes = args.mode or ["hybrid", "graph"]
    root = args.root.resolve()
    sides = {"this": REPO_ROOT, "other": args.other_checkout.resolve()}
    indexes = {side: args.work.resolve() / side for side in sides}
    for side, checkout in sides.items():
        started = time.monotonic()
        done = run_cli(checkout, "index", root, "--index-dir", indexes[side], "--no-daemon", "-q")
        if done.returncode != 0:
            raise SystemExit(f"{side}: index failed: {done.stderr.strip()[-300:]}")
        print(f"{side} ({checkout}): indexed in {time.monotonic() - started:.0f} s", flush=True)
    socks = {side: socket_path(root, str(indexes[side])) for side in sides}
    times: dict[tuple[str, str], list[float]] = {(side, mode): [] for side in sides for mode in modes}
    try:
        for side, checkout in sides.items():
            done = run_cli(checkout, "daemon", "start", root, "--index-dir", indexes[side])
            if done.returncode != 0:
                raise SystemExit(f"{side}: daemon start failed: {done.stderr.strip()[-300:]}")
            wait_until_idle(call(socks[side], "health")["pid"])
            for query in GENERIC_QUERIES:
                for mode in modes:
                    call(socks[side], "search", {"query": query, "mode": mode, "limit": 10})
        load_before = os.getloadavg()[0]
        for round_number in range(args.runs):
            for i, query in enumerate(GENERIC_QUERIES):
                order = list(sides) if (round_number + i) % 2 == 0 else list(sides)[::-1]
                for mode in modes:
                    for side in order:
                        started = time.perf_counter()
                        answer = call(socks[side], "search", {"query": query, "mode": mode, "limit": 10})
                        times[side, mode].append((time.perf_counter() - started) * 1000)
                        if "results" not in answer:
                            raise SystemExit(f"{side}: no results for {query!r}: {answer}")
        load_after = os.getloadavg()[0]
    finally:
        for side, checkout in sides.items():
            run_cli(checkout, "daemon", "stop", root, "--index-dir", indexes[side])
    print(f"{root}: {args.runs} rounds of {len(GENERIC_QUERIES)} questions; load average {load_before:.1f} "
          f"before, {load_after:.1f} after")
    print(f"{'mode':<8}{'this p50':>10}{'other p50':>11}{'ratio':>8}{'this p95':>10}{'other p95':>11}")
    for mode in modes:
        this, other = times["this", mode], times["other", mode]
        print(f"{mode:<8}{statistics.median(this):>10.1f}{statistics.median(other):>11.1f}"
              f"{statistics.median(this) / statistics.median(other):>8.3f}{percentile(this, 0.95):>10.1f}"
              f"{percentile(other, 0.95):>11.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
