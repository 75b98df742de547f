"""How often `codesearch index --progress-json` reports embedding, and what that costs: a fresh
index of one folder, the arrival time of every `embed` event, the gaps between them, the run's
wall and CPU time. `--tree` picks the checkout whose codesearch runs, so that two versions can be
compared on the same machine in one sitting:

    python scripts/bench_progress_events.py ~/.cache/codesearch-bench/click --tree /tmp/base
    python scripts/bench_progress_events.py ~/.cache/codesearch-bench/click
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def run_once(folder: Path, tree: Path) -> dict:
    index = Path(tempfile.mkdtemp(prefix="cspe-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_")}
    env.update(PYTHONPATH=str(tree.resolve()), HF_HUB_OFFLINE="1", CODESEARCH_AUTO_DAEMON="0")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "codesearch.cli", "index", str(folder), "--index-dir",
                                 str(index / "idx"), "--progress-json", "-q"], cwd=tree, env=env,
                                stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        assert proc.stderr is not None
        embed = []
        for line in proc.stderr:
            if line.startswith("{"):
                event = json.loads(line)
                if event["stage"] == "embed":
                    embed.append((time.monotonic(), event))
        if proc.wait() != 0:
            raise RuntimeError(f"codesearch index failed on {folder}")
    finally:
        shutil.rmtree(index, ignore_errors=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    gaps = [b - a for (a, _), (b, _) in zip(embed, embed[1:])]
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "embed_events": len(embed), "begins": sum(e["phase"] == "begin" for _, e in embed),
            "vectors": embed[-1][1]["done"] if embed else 0,
            "median_gap_s": round(statistics.median(gaps), 2) if gaps else None,
            "max_gap_s": round(max(gaps), 2) if gaps else None,
            "with_eta": sum(e.get("eta_seconds") is not None for _, e in embed)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--tree", type=Path, default=REPO_ROOT, help="the checkout whose codesearch runs")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    for _ in range(args.runs):
        print(json.dumps(run_once(args.folder, args.tree)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
