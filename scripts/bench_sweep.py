#!/usr/bin/env python3
"""Robustness sweep: whole repositories (tests, vendored code, docs, generated files), indexed as a
user does, and where the indexer's time goes.

Usage: scripts/bench_sweep.py [--index-root /tmp/sweep-idx] [--slowest 10] [--json OUT] REPO_DIR...
       scripts/bench_sweep.py --write-fixtures DIR   (generated repositories of pathological shapes)
For each repository, one after the other:
  index     `codesearch index REPO --index-dir ROOT/NAME --no-vectors --no-daemon --json` in a child
            process: exit code, files, skipped files by reason, seconds, files/s; a traceback on
            stderr is a problem;
  extract   every file the walk yields, read and extracted in this process one at a time: the total,
            the slowest files with their sizes, and any file skipped as too_complex or that raised;
  resolve   the call resolution of every call site (store/edges.py), on a copy of the catalog in
            this process (the indexer spreads it over its workers).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codesearch.config import load_settings
from codesearch.ingest.extract import SkipFile, extract, read_source
from codesearch.ingest.walker import RepoWalker, SourceFile
from codesearch.store.edges import resolve_call_edges

CLI = [sys.executable, "-m", "codesearch.cli"]
ORDINARY_SKIPS = {"unsupported_type", "symlink", "binary", "generated", "minified", "too_large"}


def index_with_cli(root: Path, index_dir: Path) -> dict:
    shutil.rmtree(index_dir, ignore_errors=True)
    started = time.perf_counter()
    done = subprocess.run([*CLI, "index", str(root), "--index-dir", str(index_dir), "--no-vectors", "--no-daemon",
                           "--json"], capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent)
    wall = time.perf_counter() - started
    try:
        report = json.loads(done.stdout)
    except ValueError:
        report = {}
    catalog = index_dir / "catalog.sqlite3"
    return {"exit_code": done.returncode, "wall_seconds": round(wall, 2), "report": report,
            "catalog_bytes": catalog.stat().st_size if catalog.exists() else 0,
            "traceback": "Traceback" in done.stderr, "stderr_tail": done.stderr[-2000:]}


def extraction_times(root: Path, index_dir: Path, slowest: int) -> dict:
    settings = load_settings(root)
    timed: list[tuple[float, int, str, str]] = []
    for entry in RepoWalker(root, settings, index_dir).walk():
        if not isinstance(entry, SourceFile):
            continue
        started = time.perf_counter()
        try:
            extract(entry.rel, read_source(entry.path, settings, entry.language, walked=True), entry.language,
                    settings)
            outcome = "ok"
        except SkipFile as skip:
            outcome = f"{skip.reason}: {skip}"
        except Exception as exc:  # noqa: BLE001 - what the sweep looks for: listed, not raised
            outcome = f"error {type(exc).__name__}: {exc}"
        timed.append((time.perf_counter() - started, entry.size, entry.rel, outcome))
    timed.sort(reverse=True)
    return {"seconds": round(sum(t[0] for t in timed), 2),
            "slowest": [{"path": p, "seconds": round(s, 3), "bytes": b} for s, b, p, _ in timed[:slowest]],
            "not_extracted": {p: o for _, _, p, o in timed if o != "ok"}}


def resolution_time(index_dir: Path) -> dict:
    catalog = index_dir / "catalog.sqlite3"
    if not catalog.exists():
        return {}
    with tempfile.TemporaryDirectory() as scratch:
        copy = sqlite3.connect(Path(scratch) / "catalog.sqlite3")
        source = sqlite3.connect(catalog)
        source.backup(copy)
        source.close()
        started = time.perf_counter()
        with copy:
            resolve_call_edges(copy, set(), set(), everything=True)
        seconds = time.perf_counter() - started
        calls = copy.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
        copy.close()
    return {"seconds": round(seconds, 2), "call_sites": calls}


def write_fixtures(folder: Path) -> None:
    """Three generated repositories of the shapes that took the indexer's time: values made from
    each other (`v1 := v0.Next()` ...), a name bound again and again (`xN, err := openN()` ...),
    and files of thousands of definitions (one name defined once in each of thousands of functions)."""
    n = 3000
    chains = folder / "chains"
    chains.mkdir(parents=True, exist_ok=True)
    (chains / "typed.go").write_text("package main\n\ntype T struct{}\n\nfunc (t *T) Next() *T { return t }\n\n"
                                     "func run() {\n\tv0 := &T{}\n" + "".join(
                                         f"\tv{i} := v{i - 1}.Next()\n" for i in range(1, n)) + "}\n")
    (chains / "typed.py").write_text("class T:\n    def next(self) -> 'T':\n        return self\n\n\ndef run():\n"
                                     "    v0 = T()\n" + "".join(f"    v{i} = v{i - 1}.next()\n" for i in range(1, n)))
    rebound = folder / "rebound"
    rebound.mkdir(parents=True, exist_ok=True)
    (rebound / "errs.go").write_text(
        "package main\n\ntype E struct{}\n\nfunc (e *E) Error() string { return \"\" }\n\n"
        + "".join(f"type T{i} struct{{}}\n\nfunc open{i}() (*T{i}, *E) {{ return nil, nil }}\n\n" for i in range(800))
        + "func run() {\n" + "".join(f"\tx{i}, err := open{i}()\n\tprintln(err.Error(), x{i})\n" for i in range(800))
        + "}\n")
    large = folder / "large"
    large.mkdir(parents=True, exist_ok=True)
    m = 5000
    (large / "methods.go").write_text("package main\n\ntype Big struct{}\n\n" + "".join(
        f"func (b *Big) M{i}(x *Big) *Big {{\n\ty := b.M{(i + 1) % m}(x)\n\treturn y.M{(i + 7) % m}(b)\n}}\n\n"
        for i in range(m)))
    (large / "nested.py").write_text("".join(
        f"def f{i}():\n    def inner():\n        return f{i}()\n    return inner()\n\n\n" for i in range(m)))


def problems(run: dict) -> list[str]:
    found = []
    if run["index"]["exit_code"] or run["index"]["traceback"]:
        found.append(f"exit {run['index']['exit_code']}" + (", traceback" if run["index"]["traceback"] else ""))
    found += [f"{path}: {outcome}" for path, outcome in run["extract"]["not_extracted"].items()
              if outcome.split(":")[0] not in ORDINARY_SKIPS]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="*", type=Path)
    parser.add_argument("--write-fixtures", type=Path, metavar="DIR",
                        help="write the generated repositories (DIR/chains, rebound, large) and stop")
    parser.add_argument("--index-root", type=Path, default=Path(tempfile.gettempdir()) / "sweep-idx")
    parser.add_argument("--slowest", type=int, default=10)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.write_fixtures:
        write_fixtures(args.write_fixtures)
        return
    runs = {}
    print("| repository | files | skipped by reason | index s | files/s | catalog MB | extract s | resolve s "
          "| call sites | problems |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for root in args.repos:
        index_dir = args.index_root / root.name
        run: dict[str, Any] = {"index": index_with_cli(root, index_dir)}
        run["extract"] = extraction_times(root, index_dir, args.slowest)
        run["resolve"] = resolution_time(index_dir)
        run["problems"] = problems(run)
        runs[root.name] = run
        report = run["index"]["report"]
        files, seconds = report.get("added", 0), report.get("seconds", 0.0)
        skipped = ", ".join(f"{k} {v}" for k, v in sorted(report.get("skipped", {}).items(), key=lambda kv: -kv[1]))
        print(f"| {root.name} | {files} | {skipped} | {seconds:.2f} | {files / seconds if seconds else 0:.0f} | "
              f"{run['index']['catalog_bytes'] / 2**20:.1f} | {run['extract']['seconds']:.1f} | "
              f"{run['resolve'].get('seconds', '-')} | "
              f"{run['resolve'].get('call_sites', 0):,} | {'; '.join(run['problems']) or 'none'} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()
