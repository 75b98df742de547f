#!/usr/bin/env python3
"""Indexing speed and footprint on real repositories.

Usage: scripts/bench_index.py [--runs 3] [--embed] REPO_DIR...
For each repository, in fresh child processes (so peak RSS is per run):
  keyword+graph  full index without vectors: files/s to a searchable keyword index
  no-change      re-index with nothing changed (median of --runs)
  full           full index with vectors (only with --embed): total time, chunks/s embedded
Also prints peak RSS of each step and the index size on disk. Index folders go to a temp dir.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
root, index_dir, embed = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
t = time.perf_counter()
index = Index(root, load_settings(None), index_dir, create=True)
report = Indexer(index).run(embed=embed)
seconds = time.perf_counter() - t
print(json.dumps({"seconds": seconds, "files": report.added + report.modified + report.unchanged,
                  "chunks": report.chunks_written, "embedded": report.vectors_embedded,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_child(root: Path, index_dir: Path, embed: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(root), str(index_dir), "1" if embed else "0"],
                         capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    return json.loads(out.stdout.strip().splitlines()[-1])


def disk_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--embed", action="store_true", help="also time a full index with vectors")
    parser.add_argument("roots", nargs="+", type=Path)
    args = parser.parse_args()
    for root in args.roots:
        work = Path(tempfile.mkdtemp(prefix="cs-bench-index-"))
        try:
            full_kw = []
            for i in range(args.runs):
                folder = work / f"kw{i}"
                full_kw.append(run_child(root, folder, embed=False))
            nochange = [run_child(root, work / "kw0", embed=False) for _ in range(args.runs)]
            files = full_kw[0]["files"]
            med = statistics.median(r["seconds"] for r in full_kw)
            print(f"{root}: {files} files, {full_kw[0]['chunks']} chunks")
            print(f"  keyword+graph full index: median {med:.2f} s -> {files / med:.0f} files/s, "
                  f"peak RSS {max(r['rss_mb'] for r in full_kw):.0f} MB, index {disk_mb(work / 'kw0'):.1f} MB")
            print(f"  no-change re-index:       median {statistics.median(r['seconds'] for r in nochange):.2f} s "
                  f"(process start excluded)")
            if args.embed:
                r = run_child(root, work / "full", embed=True)
                print(f"  full index with vectors:  {r['seconds']:.1f} s, {r['embedded']} chunks embedded, "
                      f"peak RSS {r['rss_mb']:.0f} MB, index {disk_mb(work / 'full'):.1f} MB")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
