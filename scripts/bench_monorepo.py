#!/usr/bin/env python3
"""A 100,000-file monorepo: indexing speed and memory, index size, no-change reindex, the
daemon's memory, watching, and query latency through the daemon.

usage: scripts/bench_monorepo.py [TREE] [--index-dir DIR] [--runs 3] [--rounds 3] [--embed-minutes 10]
                                 [--skip-index | --daemon-only] [--until-embedded]

TREE (default /tmp/mono/tree) is made by scripts/build_monorepo.py when missing. In order:
1. keyword + graph index from scratch, `codesearch index --no-vectors` as a child process (its
   extraction workers: one per core): seconds, files/s, and the peak of the summed RSS of every
   process of it, sampled every 0.2 s;
2. the catalog's size per table (SQLite's dbstat) against the bytes of the indexed files;
3. a no-change reindex, --runs times (whole process, and the indexer's own time);
4. keyword searches in this process, nothing else running (a first round, then --rounds: the
   median per question, and the p50 of all), then callers and callees of RELATION_NAMES alike;
5. a daemon on the index: its RSS once ready, how it watches (inotify or polling), keyword
   searches through the socket (--rounds over the generic questions), then, after it has embedded
   for --embed-minutes with nothing asked, hybrid searches over what is embedded so far, the
   embedding rate (vectors added over those minutes), and how long the whole semantic index
   would take at that rate; with --until-embedded, then the time it takes to embed everything.
   --daemon-only runs this step alone on an earlier run's index.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3  # Python's own: the catalog's pysqlite3 build has no dbstat
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

from benchlib import GENERIC_QUERIES, REPO_ROOT, percentile, wait_until_embedded

from codesearch.daemon.client import call, socket_path


def tree_rss(pid: int) -> int:
    """Summed VmRSS of `pid` and all its descendants, in bytes."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        stack += children.get(current, [])
        total += rss_of(current)
    return total


def rss_of(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run_measured(args: list[str]) -> tuple[float, int, str]:
    """(seconds, peak tree RSS in bytes, stdout) of a child process."""
    started = time.monotonic()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.2)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {err.strip()[-500:]}")
    return time.monotonic() - started, peak, out


def table_sizes(catalog: Path) -> tuple[list[tuple[str, int]], int]:
    db = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
        source = db.execute("SELECT SUM(size) FROM files WHERE skip_reason IS NULL").fetchone()[0]
    finally:
        db.close()
    return [(r[0], int(r[1])) for r in rows], int(source or 0)


def wait_until_ready(sock: Path, timeout: float = 1800) -> dict:
    """The daemon's status once it has caught up with the tree (its start-up reindex done, no
    change pending). Not CPU-idle: it embeds in the background from the start, for hours."""
    deadline = time.monotonic() + timeout
    while True:
        status = call(sock, "status")
        if status["ready"] and status["last_reindex"] and not status["pending_changes"]:
            return status
        if time.monotonic() > deadline:
            raise SystemExit(f"the daemon did not catch up in {timeout:.0f} s: {status}")
        time.sleep(0.5)


def timed_searches(sock: Path, mode: str, rounds: int) -> list[float]:
    """Milliseconds of each generic question through the socket, `rounds` times, every round
    counted (the daemon has read its pages already)."""
    asks = {query: partial(call, sock, "search", {"query": query, "limit": 10, "mode": mode})
            for query in GENERIC_QUERIES}
    return [t for per_ask in timed_in_rounds(asks, rounds, warm_up=False).values() for t in per_ask]


# names called all over the monorepo's languages, for callers and callees
RELATION_NAMES = ["parse", "Error", "get", "launch", "handleRequest", "serialize", "render_template", "ExecuteC",
                  "fmt"]


def in_process(tree: Path, index_dir: Path, rounds: int) -> None:
    """Keyword searches, then callers and callees, through the API in this process: what each
    costs without a socket or a daemon's background work beside it."""
    from codesearch.api.local import open_local
    from codesearch.config import load_settings
    from codesearch.search.requests import RelationsRequest, SearchRequest
    service = open_local(tree, load_settings(tree), str(index_dir))
    try:
        searches = {query: partial(service.search, SearchRequest.from_dict({"query": query, "limit": 10,
                                                                            "mode": "keyword"}))
                    for query in GENERIC_QUERIES}
        report_timings("keyword search in process", timed_in_rounds(searches, rounds))
        for direction in ("callers", "callees"):
            asks = {name: partial(service.relations, RelationsRequest(name=name, direction=direction, limit=50))
                    for name in RELATION_NAMES}
            report_timings(f"{direction} in process", timed_in_rounds(asks, rounds))
    finally:
        service.close()


def timed_in_rounds(asks: Mapping[str, Callable[[], object]], rounds: int,
                    warm_up: bool = True) -> dict[str, list[float]]:
    """Milliseconds of each ask in each of `rounds` rounds, after a first, not counted, that
    reads the pages (`warm_up`)."""
    times: dict[str, list[float]] = {label: [] for label in asks}
    for round_number in range(rounds + warm_up):
        for label, ask in asks.items():
            started = time.perf_counter()
            ask()
            if round_number or not warm_up:
                times[label].append((time.perf_counter() - started) * 1000)
    return times


def report_timings(what: str, times: dict[str, list[float]]) -> None:
    every = [t for per_ask in times.values() for t in per_ask]
    slowest = max(times, key=lambda label: statistics.median(times[label]))
    print(f"{what}: p50 {percentile(every, 0.5):.1f} ms, p95 {percentile(every, 0.95):.1f} ms "
          f"(slowest {slowest!r}: median {statistics.median(times[slowest]):.0f} ms)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", nargs="?", type=Path, default=Path("/tmp/mono/tree"))
    parser.add_argument("--index-dir", type=Path, default=Path("/tmp/mono/index"))
    parser.add_argument("--files", type=int, default=100_000, help="size of a tree made here")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--embed-minutes", type=float, default=10.0)
    parser.add_argument("--skip-index", action="store_true", help="keep the index of an earlier run")
    parser.add_argument("--until-embedded", action="store_true",
                        help="after step 5, wait until the daemon has embedded everything, and time it")
    parser.add_argument("--daemon-only", action="store_true",
                        help="step 5 alone, on the index of an earlier run (e.g. settings compared in turn)")
    args = parser.parse_args()
    if not args.tree.is_dir():
        subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "build_monorepo.py"), str(args.tree),
                        "--files", str(args.files)], check=True)
    cli = [sys.executable, "-m", "codesearch.cli"]
    where = ["--index-dir", str(args.index_dir)]
    env_note = f"load average {os.getloadavg()[0]:.1f} at start"

    if args.daemon_only:
        return measure_daemon(args, cli, where)
    if not args.skip_index:
        shutil.rmtree(args.index_dir, ignore_errors=True)
        seconds, peak, out = run_measured(cli + ["index", str(args.tree), *where, "--no-vectors", "--no-daemon",
                                                 "-q", "--json"])
        report = json.loads(out)
        files = report["added"]
        print(f"keyword + graph index: {files:,} files, {report['chunks_written']:,} chunks in {seconds:.0f} s "
              f"= {files / seconds:.0f} files/s; peak RSS of all its processes {peak / 1e6:.0f} MB ({env_note})")

    tables, source = table_sizes(args.index_dir / "catalog.sqlite3")
    total = sum(size for _, size in tables)
    print(f"catalog: {total / 1e6:.0f} MB for {source / 1e6:.0f} MB of indexed files = {total / source:.2f}x")
    for name, size in tables[:12]:
        print(f"  {name:<28}{size / 1e6:>9.1f} MB {size / source:>6.2f}x")

    nochange = []
    for _ in range(args.runs):
        seconds, _, out = run_measured(cli + ["index", str(args.tree), *where, "--no-vectors", "--no-daemon",
                                              "-q", "--json"])
        nochange.append((seconds, json.loads(out)["seconds"]))
    print(f"no-change reindex: median {statistics.median(s for s, _ in nochange):.2f} s as a process, "
          f"{statistics.median(s for _, s in nochange):.2f} s in the indexer ({args.runs} runs)")

    in_process(args.tree, args.index_dir, args.rounds)
    return measure_daemon(args, cli, where)


def time_the_rest_of_embedding(sock: Path, vectors: int) -> None:
    """Nothing asked (but its status every 15 s) until the daemon has a vector for every chunk
    that gets one; its progress every 5 minutes, then the whole time and rate."""
    started = time.monotonic()
    shown = [0.0]

    def show(status: dict) -> None:
        minutes = (time.monotonic() - started) / 60
        if minutes >= shown[0] + 5:
            shown[0] = minutes
            print(f"  {minutes:5.1f} min: {status['vectors'] - vectors:,} more vectors, "
                  f"{status['embedding']['chunks_without_vectors']:,} chunks left", flush=True)

    added = wait_until_embedded(sock, timeout=24 * 3600, interval=15, progress=show)["vectors"] - vectors
    seconds = time.monotonic() - started
    print(f"embedded the rest: {added:,} vectors in {seconds / 60:.1f} min = {added / seconds:.0f} chunks/s")


def measure_daemon(args: argparse.Namespace, cli: list[str], where: list[str]) -> int:
    """Step 5: a daemon on the index, searched through its socket while it embeds."""
    subprocess.run(cli + ["daemon", "start", str(args.tree), *where], check=True, cwd=REPO_ROOT,
                   capture_output=True)
    sock = socket_path(args.tree, str(args.index_dir))
    try:
        status = wait_until_ready(sock)
        pid = status["pid"]
        print(f"daemon: RSS {rss_of(pid) / 1e6:.0f} MB once ready; watching: {status['watcher']} "
              f"{status.get('watcher_note') or ''}".rstrip())
        keyword = timed_searches(sock, "keyword", args.rounds)
        print(f"keyword search through the socket: p50 {percentile(keyword, 0.5):.1f} ms, "
              f"p95 {percentile(keyword, 0.95):.1f} ms ({len(keyword)} searches)")
        before = call(sock, "status")["vectors"]
        time.sleep(args.embed_minutes * 60)
        status = call(sock, "status")
        hybrid = timed_searches(sock, "hybrid", args.rounds)
        rate = (status["vectors"] - before) / (args.embed_minutes * 60)  # over the quiet minutes
        print(f"after {args.embed_minutes:g} min: {status['vectors']:,} of {status['chunks']:,} chunks embedded "
              f"({rate:.0f} chunks/s over those minutes, nothing else asked meanwhile; the daemon's "
              f"last slices: {status['embedding']['rate_per_second']:.0f}); daemon RSS {rss_of(pid) / 1e6:.0f} MB")
        print(f"hybrid search through the socket: p50 {percentile(hybrid, 0.5):.1f} ms, "
              f"p95 {percentile(hybrid, 0.95):.1f} ms ({len(hybrid)} searches, on the part embedded so far)")
        left = status["embedding"]["chunks_without_vectors"]
        if rate:
            print(f"the whole semantic index at that rate: {left / rate / 3600:.1f} more hours "
                  f"({left:,} chunks without a vector)")
        if args.until_embedded:
            time_the_rest_of_embedding(sock, status["vectors"])
    finally:
        subprocess.run(cli + ["daemon", "stop", str(args.tree), *where], cwd=REPO_ROOT, capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
