"""The first answers of a daemon just started over an index that holds every vector, against the
same questions asked once its model has loaded: are they partial, what share do they report, how
long do they take, and how do they score (NDCG@10 on the benchmark's annotations)?

Each repository's benchmark root and its index (as scripts/bench_quality.py made them) are copied
to a temporary folder, mtimes kept, so the daemon finds nothing to reindex. `--tree` picks the
checkout whose codesearch runs (the daemon and the CLI), so that two versions can be compared on
the same machine in one sitting:

    python scripts/bench_first_answer.py --tree /tmp/base --json base.json
    python scripts/bench_first_answer.py --json new.json
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
sys.path.insert(0, str(REPO_ROOT))
from codesearch.daemon.client import call
from codesearch.eval.bench import DEFAULT_CHECKOUTS, benchmark_roots
from codesearch.eval.metrics import score_query

DEFAULT_REPOS = ("flask", "requests", "click", "cobra", "sinatra", "zod")


def ask(sock: Path, queries: list[dict]) -> list[dict]:
    rows = []
    for q in queries:
        started = time.monotonic()
        answer = call(sock, "search", {"query": q["query"], "mode": "hybrid", "limit": 30}, timeout=120)
        seconds = time.monotonic() - started
        scores = score_query(answer["results"], q["relevant"], q.get("secondary", []))
        rows.append({"ndcg@10": scores["ndcg@10"], "seconds": round(seconds, 3), "partial": bool(answer.get("partial")),
                     "embedded_share": answer.get("embedded_share"), "note": answer.get("note")})
    return rows


def measure(name: str, root: Path, index: Path, queries: list[dict], tree: Path, env: dict) -> dict:
    base = Path(tempfile.mkdtemp(prefix="csfa-"))
    try:
        repo = base / "repo"
        shutil.copytree(root, repo, ignore=shutil.ignore_patterns(".codesearch"))
        shutil.copytree(index, repo / ".codesearch", ignore=shutil.ignore_patterns("daemon.*", "write.lock"))
        cli = [sys.executable, "-m", "codesearch.cli"]
        started = subprocess.run([*cli, "daemon", "start", str(repo), "--timeout", "300"], cwd=tree, env=env,
                                 capture_output=True, text=True, timeout=400)
        if started.returncode != 0:
            raise RuntimeError(f"{name}: daemon start failed: {started.stderr.strip()}")
        sock = repo / ".codesearch" / "daemon.sock"
        try:
            first = ask(sock, queries)  # at once: the model may still be loading
            deadline = time.monotonic() + 300
            while not call(sock, "status", timeout=120)["model_ready"] and time.monotonic() < deadline:
                time.sleep(0.2)
            later = ask(sock, queries)
            status = call(sock, "status", timeout=120)
        finally:
            subprocess.run([*cli, "daemon", "stop", str(repo)], cwd=tree, env=env, capture_output=True, timeout=120)
        return {"repo": name, "first": first, "later": later, "status_share": status["embedded_share"]}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=REPO_ROOT, help="the checkout whose codesearch runs")
    parser.add_argument("--repos", nargs="*", default=list(DEFAULT_REPOS))
    parser.add_argument("--first", type=int, default=5, help="questions asked right after the start")
    parser.add_argument("--annotations", type=Path, default=Path("/work/shared/bench/annotations"))
    parser.add_argument("--repos-json", type=Path, default=Path("/work/shared/bench/repos.json"))
    parser.add_argument("--checkouts", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--indexes", type=Path, default=Path.home() / ".cache" / "codesearch-bench-index")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_")}
    env.update(PYTHONPATH=str(args.tree.resolve()), HF_HUB_OFFLINE="1", CODESEARCH_AUTO_DAEMON="0")
    results = []
    for name, root in benchmark_roots(args.repos_json, args.checkouts, args.repos):
        queries = json.loads((args.annotations / f"{name}.json").read_text())[:args.first]
        results.append(measure(name, root, args.indexes / name, queries, args.tree, env))
        row = results[-1]
        print(f"{name:10} first: NDCG@10 {statistics.mean(r['ndcg@10'] for r in row['first']):.3f}, "
              f"{sum(r['partial'] for r in row['first'])}/{len(row['first'])} partial, "
              f"first answer {row['first'][0]['seconds']:.2f} s, share {row['first'][0]['embedded_share']}; "
              f"later: NDCG@10 {statistics.mean(r['ndcg@10'] for r in row['later']):.3f}", flush=True)
    first = [r["ndcg@10"] for row in results for r in row["first"]]
    later = [r["ndcg@10"] for row in results for r in row["later"]]
    print(f"all: first NDCG@10 {statistics.mean(first):.3f}, later {statistics.mean(later):.3f}, "
          f"partial {sum(r['partial'] for row in results for r in row['first'])}/{len(first)}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
