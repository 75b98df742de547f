#!/usr/bin/env python3
"""Concurrent searches through the daemon's socket: 1 client against N, in one run.

Usage: scripts/bench_concurrency.py REPO_DIR [--index-dir DIR] [--clients 1,8] [--seconds 20]
           [--modes keyword,hybrid] [--checkout PATH ...]
The repository is indexed first (vectors included) and a daemon started for it. Each client is a
process of its own holding one connection (as an editor or an agent does) and sends searches
back to back, cycling through generic code questions, for --seconds per variant. Prints the
throughput (searches/s) and p50/p95 latency of each (mode, clients) variant, the speed-up of N
clients over 1, and how many cores the daemon kept busy meanwhile (its CPU time over the wall
time: 2.0 is all of a 2-core machine); errors are counted and reported. With --checkout, the daemon of each given
checkout of codesearch (e.g. an older commit's `git worktree`) is measured in turn, on the same
index, so variants are compared in one run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import socket
import sys
import time
from pathlib import Path

from benchlib import GENERIC_QUERIES, REPO_ROOT, codesearch, percentile, running_daemon, wait_until_embedded


def client(sock_path: str, mode: str, seconds: float, offset: int, start_at: float) -> tuple[list[float], int]:
    """Searches back to back over one connection until the time is up: (latencies ms, errors)."""
    latencies: list[float] = []
    errors = 0
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(sock_path)
        reader = conn.makefile("rb")
        time.sleep(max(0.0, start_at - time.time()))
        deadline = time.time() + seconds
        i = offset
        while time.time() < deadline:
            query = GENERIC_QUERIES[i % len(GENERIC_QUERIES)]
            i += 1
            message = {"jsonrpc": "2.0", "id": i, "method": "search", "params": {"query": query, "mode": mode}}
            t = time.perf_counter()
            conn.sendall(json.dumps(message).encode() + b"\n")
            reply = json.loads(reader.readline())
            latencies.append((time.perf_counter() - t) * 1000)
            if "error" in reply:
                errors += 1
    return latencies, errors


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process, all its threads (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_variant(sock: Path, mode: str, clients: int, seconds: float, daemon_pid: int) -> dict:
    start_at = time.time() + 0.5  # every client connected before the clock starts
    with multiprocessing.get_context("fork").Pool(clients) as pool:
        jobs = pool.starmap_async(client, [(str(sock), mode, seconds, 7 * k, start_at) for k in range(clients)])
        time.sleep(max(0.0, start_at - time.time()))
        cpu_before = cpu_seconds(daemon_pid)
        parts = jobs.get()
        cores = (cpu_seconds(daemon_pid) - cpu_before) / seconds
    latencies = [ms for part, _ in parts for ms in part]
    return {"mode": mode, "clients": clients, "searches": len(latencies), "per_second": len(latencies) / seconds,
            "p50": percentile(latencies, 0.5), "p95": percentile(latencies, 0.95),
            "errors": sum(errors for _, errors in parts), "cores": cores}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--index-dir", type=Path, help="keep the index here instead of REPO_DIR/.codesearch")
    parser.add_argument("--clients", default="1,8")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--modes", default="keyword,hybrid")
    parser.add_argument("--checkout", type=Path, action="append", help="measure this checkout's daemon (repeatable)")
    args = parser.parse_args()
    root = args.root.resolve()
    if args.index_dir:
        os.environ["CODESEARCH_INDEX_DIR"] = str(args.index_dir.resolve())
    print(codesearch("index", root, "-q", "--json").stdout.strip())
    counts = [int(n) for n in args.clients.split(",")]
    for checkout in args.checkout or [REPO_ROOT]:
        with running_daemon(root, checkout.resolve()) as sock:
            status = wait_until_embedded(sock)
            print(f"{root}: {status['files']} files, {status['chunks']} chunks, all embedded; "
                  f"daemon of {checkout} (pid {status['pid']})")
            for mode in args.modes.split(","):
                run_variant(sock, mode, 1, 2.0, status["pid"])  # warm the model, the graph and the caches
                rows = [run_variant(sock, mode, n, args.seconds, status["pid"]) for n in counts]
                base = rows[0]["per_second"]
                for row in rows:
                    print(f"  {mode:<8} {row['clients']:>2} clients: {row['per_second']:6.1f} searches/s "
                          f"({row['per_second'] / base:.2f}x)  p50 {row['p50']:6.1f} ms  p95 {row['p95']:6.1f} ms  "
                          f"daemon busy {row['cores']:.2f} cores  errors {row['errors']} of {row['searches']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
