#!/usr/bin/env python3
"""What a rebuild of an index with vectors costs: its catalog written again, and Chroma made to
match it.

Usage: scripts/bench_rebuild.py TREE INDEX_DIR [--mark schema|layout|none] [--baseline CHECKOUT]
           [--keep-copies]
INDEX_DIR (an index of TREE with vectors; left as it is) is copied once per checkout (this one,
then --baseline's, e.g. a worktree of an older commit), the copy is marked as written by another
codesearch (`schema`: meta schema_version 0, what a new version of the index's contents does;
`layout`: PRAGMA user_version 2, an older shape of the tables, which the columns read to keep the
vectors share with this one; `none`: as it is, e.g. an index really of layout 2), and that
checkout's `codesearch index TREE --index-dir COPY --no-daemon --json` runs on it under
/usr/bin/time -v. Printed per checkout: seconds, peak RSS (the largest process's), bytes written,
and the vectors embedded, stored in Chroma again from the cache, deleted from it, and kept.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
MARKS = {"schema": "UPDATE meta SET value = '0' WHERE key = 'schema_version'", "layout": "PRAGMA user_version = 2",
         "none": ""}


def marked_copy(index_dir: Path, copy: Path, mark: str) -> None:
    shutil.copytree(index_dir, copy, symlinks=True)
    for lock in ("daemon.lock", "start.lock", "write.lock"):
        (copy / lock).unlink(missing_ok=True)
    if MARKS[mark]:
        db = sqlite3.connect(copy / "catalog.sqlite3")
        try:
            with db:
                db.execute(MARKS[mark])
        finally:
            db.close()


def rebuild(checkout: Path, tree: Path, copy: Path) -> dict[str, float | str]:
    env = {**os.environ, "PYTHONPATH": str(checkout), "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
           "CODESEARCH_AUTO_DAEMON": "0"}
    done = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "codesearch.cli", "index", str(tree),
                           "--index-dir", str(copy), "--no-daemon", "--json"],
                          env=env, cwd=checkout, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the rebuild with {checkout} failed: {done.stderr[-800:]}")
    answer = json.loads(done.stdout)

    def timed(label: str) -> int:
        found = re.search(rf"{label}[^:]*: (\d+)", done.stderr)
        return int(found[1]) if found else 0

    kept = re.search(r"kept ([\d,]+) vectors", done.stderr)
    return {"seconds": answer["seconds"], "peak_mb": timed("Maximum resident set size") / 1024,
            "written_mb": timed("File system outputs") * 512 / 1e6, "rebuilt": answer["rebuilt"],
            "embedded": answer["vectors_embedded"], "from_cache": answer["vectors_from_cache"],
            "deleted": answer["vectors_deleted"], "kept": int(kept[1].replace(",", "")) if kept else 0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", type=Path)
    parser.add_argument("index_dir", type=Path)
    parser.add_argument("--mark", choices=sorted(MARKS), default="schema")
    parser.add_argument("--baseline", type=Path, help="another checkout, measured after this one")
    parser.add_argument("--keep-copies", action="store_true", help="leave the rebuilt copies (their paths are printed)")
    args = parser.parse_args()
    checkouts = [REPO_ROOT] + ([args.baseline.resolve()] if args.baseline else [])
    work = Path(tempfile.mkdtemp(prefix="cs-rebuild-", dir=args.index_dir.parent))
    try:
        for n, checkout in enumerate(checkouts):
            copy = work / f"copy-{n}"
            marked_copy(args.index_dir, copy, args.mark)
            figures = rebuild(checkout, args.tree.resolve(), copy)
            print(f"{checkout} ({copy if args.keep_copies else 'copy removed'}): {figures.pop('rebuilt')}")
            print("  " + ", ".join(f"{k} {v:,.1f}" if isinstance(v, float) else f"{k} {v:,}"
                                   for k, v in figures.items()))
            if not args.keep_copies:
                shutil.rmtree(copy)
    finally:
        if not args.keep_copies:
            shutil.rmtree(work, ignore_errors=True)
    print(f"command: scripts/bench_rebuild.py {' '.join(sys.argv[1:])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
