#!/usr/bin/env python3
"""The catalog's size per table against the bytes of the source files it indexes.

Usage: scripts/bench_index_size.py [--baseline CHECKOUT] REPO_DIR...
Each repository is indexed from scratch into a temporary folder, keyword index and graph only
(`codesearch index --no-vectors`, a child process; the vectors live in Chroma, and the embedding
cache adds about 480 bytes per embedded chunk to the catalog), then measured with SQLite's dbstat
(Python's own sqlite3: the pysqlite3 build the catalog uses has none) after a checkpoint. With
--baseline, another checkout's code indexes the same repository with this interpreter (e.g. a
worktree of an older commit), and its tables are shown beside. Each catalog is also split into
its keyword index (FTS5's tables) and the rest: the rest alone is what the catalog would weigh
with no keyword index at all.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def index_with(checkout: Path, repo: Path, index_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(checkout), "HF_HUB_OFFLINE": "1", "CODESEARCH_AUTO_DAEMON": "0"}
    done = subprocess.run([sys.executable, "-m", "codesearch.cli", "index", str(repo), "--index-dir", str(index_dir),
                           "--no-vectors", "-q", "--no-daemon"], env=env, cwd=checkout, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"indexing {repo} with {checkout} failed: {done.stderr[-800:]}")


def sizes(catalog: Path) -> tuple[dict[str, int], int, int]:
    """(bytes per table or index, the file's bytes, the indexed source bytes)."""
    db = sqlite3.connect(catalog)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        tables = {r[0]: int(r[1]) for r in db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")}
        source = int(db.execute("SELECT SUM(size) FROM files WHERE skip_reason IS NULL").fetchone()[0] or 0)
    finally:
        db.close()
    return tables, catalog.stat().st_size, source


def keyword_share(tables: dict[str, int], keyword: bool) -> int:
    """Bytes of the keyword index's tables (FTS5's), or of every other table and index: what
    the catalog would weigh with no keyword index at all."""
    return sum(size for name, size in tables.items() if name.startswith("chunks_fts") == keyword)


def mb(n: int) -> str:
    return f"{n / 1e6:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--baseline", type=Path, help="another checkout whose code indexes the same trees")
    args = parser.parse_args()
    variants = {"now": REPO_ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    summary = []
    for repo in args.repos:
        repo = repo.resolve()
        measured = {}
        for label, checkout in variants.items():
            folder = Path(tempfile.mkdtemp(prefix="csize-"))
            try:
                index_with(checkout, repo, folder / "index")
                measured[label] = sizes(folder / "index" / "catalog.sqlite3")
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        source = measured["now"][2]
        print(f"\n{repo.name}: {source / 1e6:.2f} MB of indexed source")
        names = sorted({n for tables, _, _ in measured.values() for n in tables},
                       key=lambda n: -max(t.get(n, 0) for t, _, _ in measured.values()))
        print(f"  {'table or index':<28}" + "".join(f"{label + ' MB':>14}" for label in variants))
        for name in names:
            print(f"  {name:<28}" + "".join(f"{mb(measured[label][0].get(name, 0)):>14}" for label in variants))
        print(f"  {'catalog file':<28}" + "".join(f"{mb(measured[label][1]):>14}" for label in variants))
        ratios = "".join(f"{measured[label][1] / source:>13.2f}x" for label in variants)
        print(f"  {'catalog / source':<28}{ratios}")
        for part, in_part in (("keyword index / source", True), ("the rest / source", False)):
            shares = "".join(f"{keyword_share(measured[label][0], in_part) / source:>13.2f}x" for label in variants)
            print(f"  {part:<28}{shares}")
        summary.append((repo.name, source, {label: measured[label][1] for label in variants}))
    header = "".join(f"{label + ' MB':>14} {label + ' ratio':>14}" for label in variants)
    print(f"\nrepository            source MB{header}")
    for name, source, files in summary:
        print(f"{name:<22}{mb(source):>10}" + "".join(f"{mb(files[label]):>14} {files[label] / source:>13.2f}x"
                                               for label in variants))
    print("command: " + " ".join(sys.argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
