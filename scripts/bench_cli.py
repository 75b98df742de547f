#!/usr/bin/env python3
"""A whole `codesearch query --json` process against a warm daemon, as a user or a script runs
it, against the interpreter's own start (`python -c pass`) in the same run.

Usage: scripts/bench_cli.py REPO_DIR [--index-dir DIR] [--runs 30] [--mode keyword --mode hybrid]
                            [--baseline CODESEARCH_EXECUTABLE] [--variant 'LABEL=COMMAND' ...]
A daemon of this checkout serves REPO_DIR (its index in --index-dir, else where the environment
says; it should be embedded for hybrid) and is waited for until idle. Then, round by round, each
variant runs once, so that drift in the machine's speed hits them alike:
  floor          `python -c pass` with this checkout's interpreter and site-packages
  codesearch     this checkout's console script (.venv/bin/codesearch), one query per mode
  baseline       with --baseline: another codesearch executable (e.g. main's .venv/bin/codesearch)
                 asking the same daemon, and its interpreter's `-c pass`
  --variant      any other command, the query appended (e.g. this checkout's code under another
                 install: 'finder=env PYTHONPATH=. /work/main/.venv/bin/python -m codesearch.cli
                 query --repo R --json --mode keyword')
Prints p50/p95 per variant, the load average before and after, and the commands.

Then, through the same daemon, each query as a request on its socket (the search alone, warm:
what an editor or agent that keeps a connection pays, without a process start) in each mode,
against `rg` as a process searching the query's longest word (case-insensitive, the repository's
ignore rules) over the same tree, its output read whole: taking turns, --runs rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from benchlib import GENERIC_QUERIES, REPO_ROOT, print_percentiles, running_daemon, wait_until_idle

from codesearch.daemon.client import call


def timed(command: list[str], check_json: bool) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0 or (check_json and "results" not in json.loads(done.stdout)):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-500:]}")
    return elapsed


def interpreter_of(executable: Path) -> str:
    """The interpreter a console script runs (its #! line)."""
    first = executable.read_text(errors="replace").splitlines()[0]
    return first[2:].strip() if first.startswith("#!") else sys.executable


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--index-dir", help="the index of REPO_DIR (default: REPO_DIR/.codesearch)")
    parser.add_argument("--runs", type=int, default=30, help="rounds (each variant once a round)")
    parser.add_argument("--mode", action="append", choices=("keyword", "hybrid", "vector", "graph"))
    parser.add_argument("--baseline", type=Path, help="another codesearch executable to compare with")
    parser.add_argument("--variant", action="append", default=[], metavar="LABEL=COMMAND",
                        help="another command to time, the query appended")
    args = parser.parse_args()
    modes = args.mode or ["keyword", "hybrid"]
    root = args.root.resolve()
    here = REPO_ROOT / ".venv" / "bin" / "codesearch"
    index = ["--index-dir", str(Path(args.index_dir).resolve())] if args.index_dir else []
    variants: dict[str, tuple[list[str], str | None]] = {"floor: python -c pass": ([interpreter_of(here), "-c",
                                                                                    "pass"], None)}
    executables = {"codesearch": here} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    if args.baseline:
        variants["baseline floor: python -c pass"] = ([interpreter_of(args.baseline.resolve()), "-c", "pass"], None)
    for label, executable in executables.items():
        for mode in modes:
            variants[f"{label} query --json --mode {mode}"] = ([str(executable), "query", "--repo", str(root), *index,
                                                                "--json", "--mode", mode], mode)
    for extra in args.variant:
        label, _, command = extra.partition("=")
        variants[label] = (shlex.split(command), "custom")
    with running_daemon(root, index_dir=args.index_dir) as sock:
        pid = call(sock, "health")["pid"]
        print(f"{root}: daemon pid {pid} idle after {wait_until_idle(pid):.1f} s; "
              f"{call(sock, 'status')['files']} files", flush=True)
        for command, mode in variants.values():  # warm the page cache and the daemon's first queries
            if mode:
                timed([*command, GENERIC_QUERIES[0]], check_json=True)
        load_before = os.getloadavg()[0]
        times: dict[str, list[float]] = {label: [] for label in variants}
        for i in range(args.runs):
            query = GENERIC_QUERIES[i % len(GENERIC_QUERIES)]
            for label, (command, mode) in variants.items():
                times[label].append(timed([*command, query] if mode else command, check_json=mode is not None))
        load_after = os.getloadavg()[0]
        socket_times = socket_rounds(sock, root, modes, args.runs)
        load_end = os.getloadavg()[0]
    print_percentiles(f"whole process, {args.runs} runs each", times)
    print(f"load average: {load_before:.1f} before, {load_after:.1f} after")
    for label, (command, mode) in variants.items():
        print(f"  {label}: {' '.join(command)}{' QUERY' if mode else ''}")
    print_percentiles(f"through the socket, warm, against rg over the same tree, {args.runs} runs each", socket_times)
    print(f"load average: {load_after:.1f} before, {load_end:.1f} after; rg: {RG} --no-config -n -i WORD {root}")
    return 0


RG = str(REPO_ROOT / ".venv" / "bin" / "rg")


def socket_rounds(sock: Path, root: Path, modes: list[str], runs: int) -> dict[str, list[float]]:
    """Each mode's search request on the daemon's socket and `rg WORD` as a process, in turns."""
    out: dict[str, list[float]] = {f"search --mode {mode} (socket)": [] for mode in modes}
    fresh = "search --mode hybrid, a query never asked before (socket)"
    out[fresh] = []
    out["rg WORD (process, output read whole)"] = []
    for i in range(runs):
        query = GENERIC_QUERIES[i % len(GENERIC_QUERIES)]
        asks = [(f"search --mode {mode} (socket)", query, mode) for mode in modes]
        if "hybrid" in modes:  # its vector not among the daemon's recent ones: embedded on the way
            asks.append((fresh, f"{query} (round {i})", "hybrid"))
        for label, text, mode in asks:
            started = time.perf_counter()
            answer = call(sock, "search", {"query": text, "mode": mode, "limit": 10})
            out[label].append((time.perf_counter() - started) * 1000)
            if "results" not in answer:
                raise SystemExit(f"no results for {text!r}: {answer}")
        word = max(query.split(), key=len)
        started = time.perf_counter()
        subprocess.run([RG, "--no-config", "-n", "-i", word, str(root)], capture_output=True)
        out["rg WORD (process, output read whole)"].append((time.perf_counter() - started) * 1000)
    return out


if __name__ == "__main__":
    sys.exit(main())
