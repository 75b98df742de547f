#!/usr/bin/env python3
"""Freshness: time from a write to the first search that returns it, through a running daemon;
and the reindex work per file without the debounce.

Usage: scripts/bench_freshness.py REPO_DIR [--edits 20] [--files 20]
REPO_DIR is copied to a temp folder first (the benchmark never writes into a checkout).
  write-to-searchable  append a function with a unique name to a file, poll keyword search every
                       20 ms until it is returned (p50, p95 over --edits edits)
  reindex work         Indexer.run(paths=[file]) after an edit: keyword+graph only, and with vectors
Also prints the daemon's RSS after indexing.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codesearch.config import load_settings
from codesearch.daemon.client import call, socket_path
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer, IndexReport
from codesearch.ingest.languages import spec_for_path

TEMPLATES = {"python": "\n\ndef {name}(x):\n    return x + 1\n",
             "go": "\n\nfunc {name}(x int) int {{ return x + 1 }}\n",
             "rust": "\n\nfn {name}(x: i32) -> i32 {{ x + 1 }}\n",
             "typescript": "\n\nexport function {name}(x: number) {{ return x + 1; }}\n",
             "javascript": "\n\nfunction {name}(x) {{ return x + 1; }}\n"}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def editable_files(root: Path) -> list[Path]:
    out = []
    for path in root.rglob("*"):
        spec = spec_for_path(path.name) if path.is_file() else None
        if spec and TEMPLATES.get(spec.name) and ".codesearch" not in path.parts:
            out.append(path)
    return sorted(out)


def append_function(path: Path) -> str:
    name = "fresh_" + uuid.uuid4().hex[:12]
    with open(path, "a") as handle:
        handle.write(TEMPLATES[spec_for_path(path.name).name].format(name=name))
    return name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--files", type=int, default=20)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cs-fresh-")) / args.root.name
    shutil.copytree(args.root, work, symlinks=True)
    repo = Path(__file__).resolve().parents[1]
    try:
        index = Index(work, load_settings(work), create=True)
        indexer = Indexer(index)
        t = time.perf_counter()
        indexer.run()
        print(f"{args.root}: indexed in {time.perf_counter() - t:.1f} s")
        files = editable_files(work)
        rng = random.Random(3)
        picks = [rng.choice(files) for _ in range(args.files)]
        kw, full = [], []
        for path in picks:
            rel = path.relative_to(work).as_posix()
            append_function(path)
            t = time.perf_counter()
            indexer.run([rel], embed=False)
            kw.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            indexer.sync_vectors(IndexReport())
            full.append(kw[-1] + (time.perf_counter() - t) * 1000)
        index.close()
        for label, times in (("keyword+graph", kw), ("with vectors: ", full)):
            print(f"  reindex work per file, {label} p50 {percentile(times, .5):.0f} ms  "
                  f"p95 {percentile(times, .95):.0f} ms")
        subprocess.run([sys.executable, "-m", "codesearch.cli", "daemon", "start", str(work)], check=True,
                       capture_output=True, cwd=repo)
        sock = socket_path(work, None)
        try:
            time.sleep(3)
            latencies = []
            for path in [rng.choice(files) for _ in range(args.edits)]:
                name = append_function(path)
                t = time.perf_counter()
                while time.perf_counter() - t < 10:
                    answer = call(sock, "search", {"query": name, "mode": "keyword", "limit": 3})
                    if any(r["name"] == name for r in answer["results"]):
                        break
                    time.sleep(0.02)
                latencies.append((time.perf_counter() - t) * 1000)
                time.sleep(0.3)
            status = call(sock, "status")
            rss = Path(f"/proc/{status['pid']}/status").read_text()
            rss_mb = int(next(line for line in rss.splitlines() if line.startswith("VmRSS")).split()[1]) / 1024
            print(f"  write-to-searchable (debounce {load_settings(work).debounce_ms} ms): "
                  f"p50 {statistics.median(latencies):.0f} ms  p95 {percentile(latencies, .95):.0f} ms "
                  f"({len(latencies)} edits)")
            print(f"  daemon RSS after indexing: {rss_mb:.0f} MB")
        finally:
            subprocess.run([sys.executable, "-m", "codesearch.cli", "daemon", "stop", str(work)], capture_output=True,
                           cwd=repo)
    finally:
        shutil.rmtree(work.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
