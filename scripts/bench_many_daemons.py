#!/usr/bin/env python3
"""Daemons that do not pile up: one query in each of many repositories, as an evaluation script
asks them, and what stays resident afterwards.

Usage: scripts/bench_many_daemons.py [--repos 30] [--samples python,go,...] [--cap 8] [--quiet-minutes 0.25]
                                     [--wakes 5] [--code DIR] [--json OUT]

Each of --repos folders is a copy of one of the sample repositories (taken in turn), with the index
of that sample made once beforehand (`codesearch index`, vectors included), so that each query
starts an on-demand daemon (setting auto_daemon) that only reconciles. One query is asked in each
folder, one after another, through the CLI (`query WORDS --json`); after each, the daemons that run
(the registry, `daemon list`) and their resident memory (VmRSS) are read. Then, after the quiet
time (setting daemon_dormant_minutes, short here), the daemons left and their memory again. Last,
--wakes of them are asked a query once more: the first query wakes a dormant daemon, the one
5 s later finds it awake. `--code DIR`: run another checkout of codesearch (a baseline), with the
same settings (a version without dormancy or a cap ignores them).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import shown_path

REPO_ROOT = Path(__file__).resolve().parents[1]
QUERY = "parse the configuration and report errors"
SAMPLES = ("python", "go", "javascript", "rust", "java", "ruby")


def rss_mb(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


def family_rss_mb(pid: int) -> float:
    """The daemon's resident memory with its children's (its embedding process while one runs)."""
    total = rss_mb(pid) or 0.0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids = (task / "children").read_text().split()
        except OSError:
            continue
        total += sum(rss_mb(int(kid)) or 0.0 for kid in kids)
    return total


class Bench:
    def __init__(self, code: Path, work: Path, cap: int, quiet_minutes: float):
        self.work = work
        self.runtime = work / "runtime"
        self.runtime.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_")}
        env.update(PYTHONPATH=str(code), HF_HUB_OFFLINE="1", CODESEARCH_RUNTIME_DIR=str(self.runtime),
                   CODESEARCH_AUTO_DAEMON="1", CODESEARCH_MAX_AUTO_DAEMONS=str(cap),
                   CODESEARCH_DAEMON_DORMANT_MINUTES=str(quiet_minutes))
        self.env = env

    def cli(self, *args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "codesearch.cli", *args], cwd=cwd or self.work, env=self.env,
                              capture_output=True, text=True, timeout=timeout)

    def daemons(self) -> list[dict]:
        done = self.cli("daemon", "list", "--json")
        return json.loads(done.stdout)["daemons"] if done.returncode == 0 else []

    def query(self, repo: Path) -> tuple[float, bool]:
        """The query's wall time through the CLI, and whether its answer was partial (no vectors)."""
        began = time.perf_counter()
        done = self.cli("query", QUERY, "--json", cwd=repo)
        seconds = time.perf_counter() - began
        if done.returncode != 0 or not json.loads(done.stdout)["results"]:
            raise SystemExit(f"the query in {repo} failed: {done.stderr.strip()}")
        return seconds, bool(json.loads(done.stdout).get("partial"))

    def resident(self) -> dict[int, float]:
        """Resident MB of each daemon that runs (with its children), by pid."""
        return {d["pid"]: family_rss_mb(d["pid"]) for d in self.daemons()}

    def stop_all(self, repos: list[Path]) -> None:
        for repo in repos:
            self.cli("daemon", "stop", str(repo), timeout=120)


def seeded(bench: Bench, samples: list[str]) -> dict[str, Path]:
    """Each sample copied once and indexed with vectors (the seeds the folders are copied from)."""
    seeds = {}
    for name in samples:
        seed = bench.work / "seeds" / name
        shutil.copytree(REPO_ROOT / "sample_repos" / name, seed, ignore=shutil.ignore_patterns(".codesearch"))
        done = bench.cli("index", str(seed), "-q", "--no-daemon")
        if done.returncode != 0:
            raise SystemExit(f"indexing {seed} failed: {done.stderr.strip()}")
        seeds[name] = seed
    return seeds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=int, default=30)
    parser.add_argument("--samples", default=",".join(SAMPLES))
    parser.add_argument("--cap", type=int, default=8, help="the setting max_auto_daemons")
    parser.add_argument("--quiet-minutes", type=float, default=0.25, help="the setting daemon_dormant_minutes")
    parser.add_argument("--wakes", type=int, default=5)
    parser.add_argument("--code", type=Path, default=REPO_ROOT, help="the codesearch checkout to run")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="csmany-"))
    bench = Bench(args.code.resolve(), work, args.cap, args.quiet_minutes)
    repos: list[Path] = []
    load_before = os.getloadavg()[1]
    try:
        seeds = seeded(bench, args.samples.split(","))
        names = list(seeds)
        for i in range(args.repos):
            repo = work / f"r{i:02d}"
            shutil.copytree(seeds[names[i % len(names)]], repo,
                            ignore=shutil.ignore_patterns("daemon.*", "write.lock", "start.lock"))
            repos.append(repo)
        first_query, most_daemons, most_mb = [], 0, 0.0
        for repo in repos:
            first_query.append(bench.query(repo)[0])
            resident = bench.resident()
            most_daemons = max(most_daemons, len(resident))
            most_mb = max(most_mb, sum(resident.values()))
        after_queries = bench.resident()
        # the quiet time, then as long again for the daemons to finish what they were doing
        deadline = time.monotonic() + args.quiet_minutes * 60 * 2 + 120
        time.sleep(args.quiet_minutes * 60 + 5)
        while time.monotonic() < deadline and not all(d.get("dormant") for d in bench.daemons()):
            time.sleep(2)
        after_quiet = bench.resident()
        dormant = sum(1 for d in bench.daemons() if d.get("dormant"))
        woken = [Path(d["root"]) for d in bench.daemons()][:args.wakes]
        wake, awake = [], []
        for repo in woken:
            wake.append(bench.query(repo))
            time.sleep(5)  # the woken daemon's background start (the vector store's check) over
            awake.append(bench.query(repo)[0])
        figures = {
            "code": shown_path(args.code), "repos": args.repos, "cap": args.cap, "quiet_minutes": args.quiet_minutes,
            "first_query_p50_s": round(statistics.median(first_query), 2),
            "most_daemons_at_once": most_daemons, "most_resident_mb": round(most_mb),
            "daemons_after_queries": len(after_queries),
            "resident_mb_after_queries": round(sum(after_queries.values())),
            "daemons_after_quiet": len(after_quiet), "dormant_after_quiet": dormant,
            "resident_mb_after_quiet": round(sum(after_quiet.values())),
            "largest_daemon_mb_after_quiet": round(max(after_quiet.values(), default=0.0), 1),
            "waking_query_s": [round(s, 2) for s, _ in wake], "waking_answers_partial": sum(p for _, p in wake),
            "awake_query_s": [round(s, 2) for s in awake],
            "load_average_5min": [round(load_before, 1), round(os.getloadavg()[1], 1)],  # at the start, at the end
        }
        print(json.dumps(figures, indent=2))
        if args.json:
            args.json.write_text(json.dumps(figures, indent=2) + "\n")
    finally:
        bench.stop_all(repos)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
