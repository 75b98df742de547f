#!/usr/bin/env python3
"""What indexing into a team store costs: for each benchmark repository named, a copy indexed into
a fresh Milvus Lite store (its vectors from the benchmark index's embedding cache, as
bench_team.py takes them), then one of its files changed and indexed again; prints one JSON object
(files, chunks, seconds of the first index and of the one-file update, per repository).

Run it with another tree's code to compare two (`PYTHONPATH=OTHER_TREE python
scripts/bench_team_indexing.py ...`: the indexer is the tree's, the vectors helper this tree's
bench_team.py).

Usage: scripts/bench_team_indexing.py --store /tmp/timing.db NAME [NAME ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from codesearch.eval.bench import SHARED_BENCH

HERE = Path(__file__).resolve().parent
SOURCES = (".py", ".js", ".ts", ".go", ".rs", ".java", ".c", ".php", ".kt", ".scala", ".swift", ".cs", ".rb",
           ".ex", ".lua", ".hs", ".zig", ".sh")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, required=True, help="a Milvus Lite file to make afresh")
    parser.add_argument("--repos-json", type=Path, default=SHARED_BENCH / "repos.json")
    parser.add_argument("--index-root", type=Path, default=Path.home() / ".cache/codesearch-bench-index")
    parser.add_argument("names", nargs="+")
    args = parser.parse_args()
    from codesearch.config import load_settings
    from codesearch.embedding.backends import process_embedder
    from codesearch.eval.bench import DEFAULT_CHECKOUTS, benchmark_roots
    from codesearch.indexing.index import Index
    from codesearch.team.front import index_repository, open_store
    spec = importlib.util.spec_from_file_location("bench_team", HERE / "bench_team.py")
    assert spec is not None and spec.loader is not None
    bench_team = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_team)
    if args.store.exists():
        shutil.rmtree(args.store) if args.store.is_dir() else args.store.unlink()
    settings = load_settings(None)
    embedder = process_embedder(settings)
    store = open_store(f"milvus://{args.store}")
    out = {}
    for name, root in benchmark_roots(args.repos_json, DEFAULT_CHECKOUTS, args.names):
        index = Index(root, settings, args.index_root / name, embedder=embedder)
        vectors = bench_team.CachedVectors(index, embedder)
        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / name
            shutil.copytree(root, copy)
            t = time.perf_counter()
            first = index_repository(store, copy, settings, name=name, branch="main", embedder=embedder,
                                     vectors=vectors)
            full = time.perf_counter() - t
            changed = next(p for p in sorted(copy.rglob("*")) if p.is_file() and p.suffix in SOURCES)
            changed.write_text(changed.read_text() + "\n")
            t = time.perf_counter()
            index_repository(store, copy, settings, name=name, branch="main", embedder=embedder, vectors=vectors)
            update = time.perf_counter() - t
        out[name] = {"files": first.added, "chunks": first.chunks_written, "first_index_s": round(full, 2),
                     "one_file_s": round(update, 2)}
        print(name, out[name], file=sys.stderr, flush=True)
        index.close()
    store.close()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
