"""First run to first answer: `codesearch query` in a copy of a repository that has no index.

Each run copies the tree afresh (untimed), then times whole CLI processes, as a user meets them:
- first: the query that finds no index, builds the keyword index and graph (progress on stderr),
  answers partially and starts a daemon;
- second: the next query, at once, through that daemon (the model may still be loading: partial);
- warm: a query once the daemon's model is loaded (the steady state; vectors still being made).
The daemon is stopped after each run. Medians over --runs; the machine is shared, so take several.

    .venv/bin/python scripts/bench_first_query.py ~/.cache/codesearch-bench/kotlinx-coroutines --runs 5
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

REPO_ROOT = Path(__file__).resolve().parents[1]
QUERIES = ("cancel a coroutine when its parent fails", "retry with exponential backoff", "parse configuration file")
WARM_WAIT_SECONDS = 120.0


def environment(runtime: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_")}
    env.update(CODESEARCH_AUTO_DAEMON="1", CODESEARCH_RUNTIME_DIR=str(runtime), HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", PYTHONPATH=str(REPO_ROOT))
    return env


def timed_query(tree: Path, env: dict[str, str], text: str) -> tuple[float, dict]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "codesearch.cli", "query", text, "--json"], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"query failed ({done.returncode}): {done.stderr.strip()}")
    return seconds, json.loads(done.stdout)


def daemon_status(tree: Path, env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-m", "codesearch.cli", "daemon", "status", str(tree), "--json"],
                          env=env, capture_output=True, text=True, timeout=60)
    return json.loads(done.stdout) if done.returncode == 0 else {}


def one_run(source: Path, scratch: Path) -> dict[str, float]:
    tree = scratch / "repo"
    shutil.copytree(source, tree, ignore=shutil.ignore_patterns(".git", ".codesearch"), symlinks=True)
    runtime = scratch / "runtime"
    runtime.mkdir()
    env = environment(runtime)
    try:
        first, answer = timed_query(tree, env, QUERIES[0])
        assert answer["results"] and answer.get("partial"), answer.get("note")
        second, _ = timed_query(tree, env, QUERIES[1])
        deadline = time.monotonic() + WARM_WAIT_SECONDS
        while not daemon_status(tree, env).get("model_ready") and time.monotonic() < deadline:
            time.sleep(0.5)
        warm = statistics.median(timed_query(tree, env, q)[0] for q in QUERIES)
        status = daemon_status(tree, env)
        return {"first": first, "second": second, "warm": warm, "files": status.get("files", 0),
                "chunks": status.get("chunks", 0)}
    finally:
        subprocess.run([sys.executable, "-m", "codesearch.cli", "daemon", "stop", str(tree)], env=env,
                       capture_output=True, timeout=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    runs = []
    for i in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="cs-first-") as scratch:
            result = one_run(args.repo.expanduser().resolve(), Path(scratch))
        runs.append(result)
        print(f"run {i + 1}: first {result['first']:.2f} s, second {result['second']:.3f} s, "
              f"warm {result['warm']:.3f} s ({result['files']} files, {result['chunks']} chunks)", flush=True)
    med = {k: statistics.median(r[k] for r in runs) for k in ("first", "second", "warm")}
    print(json.dumps({"repo": str(args.repo), "runs": args.runs, "files": runs[-1]["files"],
                      "chunks": runs[-1]["chunks"], "median_seconds": {k: round(v, 3) for k, v in med.items()},
                      "all": runs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
