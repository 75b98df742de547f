#!/usr/bin/env python3
"""Freshness: time from a save to the first search through the daemon's socket that returns it;
how many batches a burst of files costs; and the reindex work per file.

Usage: scripts/bench_freshness.py REPO_DIR [--seed-index DIR] [--edits 20] [--files 20]
                                  [--burst 2000] [--baseline CHECKOUT]
REPO_DIR is copied to a temp folder first (the benchmark never writes into a checkout), with the
index in --seed-index when given (an index of REPO_DIR, vectors included: the daemons then start
with nothing to embed); else it is indexed there, vectors included.
  reindex work         Indexer.run(paths=[file]) after an edit, in process: keyword+graph only,
                       and with vectors (p50, p95 over --files edits)
  write-to-searchable  a function with a unique name saved into a random file, then keyword
                       searches over the socket every 10 ms until it is returned (p50, p95 over
                       --edits saves, 1.5 s apart: isolated saves). The saves take turns among
                       three ways editors write: append, truncate and write the whole file
                       (VS Code), write a temporary file and rename it over the original (vim's
                       writebackup, JetBrains' safe write, atomic saves)
  burst                --burst files written into a new folder as fast as Python can (a checkout
                       or a code generator), then that folder removed: the batches each cost
                       (the daemon's reindex_count) and the seconds until all were searchable
With --baseline, a daemon of that checkout (e.g. a worktree of main) serves a second copy, and
the two daemons take turns save by save: before and after in one run. Also prints each daemon's
RSS and the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchlib import REPO_ROOT, percentile, running_daemon, wait_until_idle

from codesearch.config import load_settings
from codesearch.daemon.client import call
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer, IndexReport
from codesearch.ingest.languages import spec_for_path

TEMPLATES = {"python": "\n\ndef {name}(x):\n    return x + 1\n",
             "go": "\n\nfunc {name}(x int) int {{ return x + 1 }}\n",
             "rust": "\n\nfn {name}(x: i32) -> i32 {{ x + 1 }}\n",
             "typescript": "\n\nexport function {name}(x: number) {{ return x + 1; }}\n",
             "javascript": "\n\nfunction {name}(x) {{ return x + 1; }}\n",
             "kotlin": "\n\nfun {name}(x: Int): Int = x + 1\n",
             "java": "\n\nclass {name} {{ int f(int x) {{ return x + 1; }} }}\n"}
SAVE_GAP_SECONDS = 1.5  # between saves: more than the quiet period, so each save stands alone
POLL_SECONDS = 0.01


def editable_files(root: Path) -> list[Path]:
    out = []
    for path in root.rglob("*"):
        spec = spec_for_path(path.name) if path.is_file() else None
        if spec and TEMPLATES.get(spec.name) and ".codesearch" not in path.parts:
            out.append(path)
    return sorted(out)


def addition(path: Path) -> tuple[str, str]:
    name = "fresh_" + uuid.uuid4().hex[:12]
    spec = spec_for_path(path.name)
    assert spec is not None, path
    return name, TEMPLATES[spec.name].format(name=name)


def save_append(path: Path, text: str) -> None:
    with open(path, "a") as handle:
        handle.write(text)


def save_rewrite(path: Path, text: str) -> None:
    """Truncate, then write the whole file (two or more events: modified, modified, closed)."""
    content = path.read_text(errors="surrogateescape") + text
    with open(path, "w", errors="surrogateescape") as handle:
        handle.write(content)


def save_atomic(path: Path, text: str) -> None:
    """Write a temporary file beside it, then rename it over the original."""
    content = path.read_text(errors="surrogateescape") + text
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(content, errors="surrogateescape")
    os.replace(temp, path)


SAVES = {"append": save_append, "rewrite": save_rewrite, "atomic": save_atomic}


def reindex_work(work: Path, index_dir: Path, picks: list[Path]) -> None:
    index = Index(work, load_settings(work), index_dir, create=True)
    indexer = Indexer(index)
    index.embedder.encode_query("warm up")  # the model loads here, not in the first file's time
    kw, full = [], []
    for path in picks:
        rel = path.relative_to(work).as_posix()
        save_append(path, addition(path)[1])
        t = time.perf_counter()
        indexer.run([rel], embed=False)
        kw.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        indexer.vectors.sync(IndexReport())
        full.append(kw[-1] + (time.perf_counter() - t) * 1000)
    index.close()
    for label, times in (("keyword+graph", kw), ("with vectors: ", full)):
        print(f"  reindex work per file, {label} p50 {percentile(times, .5):.0f} ms  "
              f"p95 {percentile(times, .95):.0f} ms  ({len(times)} files)", flush=True)


def catch_up(work: Path, index_dir: Path) -> None:
    """Index `work`, vectors included, or bring its seeded index up to date (an index of another
    layout than this code's is built again, from its embedding cache)."""
    index = Index(work, load_settings(work), index_dir, create=True)
    try:
        Indexer(index).run()
    finally:
        index.close()


def in_child(checkout: Path, call_text: str) -> None:
    """Python calling this script's functions (as `bench`) with the code of `checkout` (this one
    or the baseline), in a child process: each checkout writes its index in its own layout."""
    code = (f"import sys; from pathlib import Path; sys.path[:0] = [{str(checkout / 'scripts')!r}, {str(checkout)!r}]; "
            "import bench_freshness as bench; import codesearch; print('    code:', codesearch.__file__); " + call_text)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=checkout)


def searchable_after(sock: Path, name: str, started: float, timeout: float = 10) -> float:
    """Milliseconds from `started` until a keyword search over the socket returns `name`."""
    while time.perf_counter() - started < timeout:
        answer = call(sock, "search", {"query": name, "mode": "keyword", "limit": 3})
        if any(r["name"] == name for r in answer["results"]):
            break
        time.sleep(POLL_SECONDS)
    return (time.perf_counter() - started) * 1000


def burst(root: Path, sock: Path, count: int, pid: int) -> str:
    """Write `count` files into a new folder, wait until all are searchable; remove it again."""
    tag = "burst" + uuid.uuid4().hex[:8]
    folder = root / tag
    before = call(sock, "status")
    started = time.perf_counter()
    folder.mkdir()
    for i in range(count):
        (folder / f"f{i:05d}.py").write_text(f"def {tag}_{i}():\n    return '{tag}'\n")
    written = time.perf_counter() - started
    while call(sock, "status")["files"] < before["files"] + count:
        time.sleep(0.05)
    searchable = time.perf_counter() - started
    wait_until_idle(pid, quiet_seconds=2)
    added = call(sock, "status")
    shutil.rmtree(folder)
    started = time.perf_counter()
    while call(sock, "status")["files"] > before["files"]:
        time.sleep(0.05)
    dropped = time.perf_counter() - started
    wait_until_idle(pid, quiet_seconds=2)
    after = call(sock, "status")
    return (f"{count} files written in {written:.2f} s: {added['reindex_count'] - before['reindex_count']} batches, "
            f"all searchable after {searchable:.2f} s; removed: {after['reindex_count'] - added['reindex_count']} "
            f"batches, gone after {dropped:.2f} s")


def rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1]) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--seed-index", type=Path, help="an index of REPO_DIR to start from (copied)")
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--files", type=int, default=20, help="files for the in-process reindex work (0: skip)")
    parser.add_argument("--burst", type=int, default=2000, help="files in the burst (0: skip)")
    parser.add_argument("--baseline", type=Path, help="also measure a daemon of this checkout, taking turns")
    args = parser.parse_args()
    checkouts = {"this": REPO_ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    scratch = Path(tempfile.mkdtemp(prefix="cs-fresh-"))
    rng = random.Random(3)
    try:
        copies = {}
        for label in checkouts:
            work, index_dir = scratch / label / args.root.name, scratch / label / "index"
            shutil.copytree(args.root, work, symlinks=True)
            if args.seed_index:
                shutil.copytree(args.seed_index, index_dir, ignore=shutil.ignore_patterns("*.lock", "*.open.*"))
            copies[label] = (work, index_dir)
        work, index_dir = copies["this"]
        files = editable_files(work)
        print(f"{args.root}: {len(files)} files to edit; load average {os.getloadavg()[0]:.1f}", flush=True)
        for label, (work, index_dir) in copies.items():
            t = time.perf_counter()
            in_child(checkouts[label], f"bench.catch_up(Path({str(work)!r}), Path({str(index_dir)!r}))")
            print(f"  {label}: indexed (or caught up) in {time.perf_counter() - t:.1f} s", flush=True)
        if args.files:
            picks = [rng.choice(files).relative_to(copies["this"][0]).as_posix() for _ in range(args.files)]
            for label, (work, index_dir) in copies.items():
                print(f"  {label}:", flush=True)
                in_child(checkouts[label], f"work = Path({str(work)!r}); bench.reindex_work(work, "
                                           f"Path({str(index_dir)!r}), [work / p for p in {picks!r}])")
        with contextlib.ExitStack() as stack:
            daemons = {}
            for label, (work, index_dir) in copies.items():
                sock = stack.enter_context(running_daemon(work, checkouts[label], str(index_dir)))
                daemons[label] = (work, sock, call(sock, "health")["pid"])
            for label, (_, _, pid) in daemons.items():
                waited = wait_until_idle(pid)
                print(f"  daemon {label} (pid {pid}) idle after {waited:.1f} s; RSS {rss_mb(pid):.0f} MB", flush=True)
            latencies: dict[str, list[float]] = {label: [] for label in daemons}
            by_style: dict[tuple[str, str], list[float]] = {}
            styles = list(SAVES)
            for i in range(args.edits):
                rel = rng.choice(files).relative_to(copies["this"][0])
                style = styles[i % len(styles)]
                for label, (work, sock, _) in daemons.items():
                    path = work / rel
                    name, text = addition(path)
                    time.sleep(SAVE_GAP_SECONDS)
                    started = time.perf_counter()
                    SAVES[style](path, text)
                    latency = searchable_after(sock, name, started)
                    latencies[label].append(latency)
                    by_style.setdefault((label, style), []).append(latency)
            load = os.getloadavg()[0]
            for label, times in latencies.items():
                styles_line = "  ".join(f"{style} {percentile(by_style[(label, style)], .5):.0f}"
                                        for style in styles if (label, style) in by_style)
                print(f"  write-to-searchable through the socket, {label}: p50 {percentile(times, .5):.0f} ms  "
                      f"p95 {percentile(times, .95):.0f} ms  max {max(times):.0f} ms ({len(times)} saves; "
                      f"p50 by save: {styles_line} ms)", flush=True)
            print(f"  load average after the saves: {load:.1f}", flush=True)
            if args.burst:
                for label, (work, sock, pid) in daemons.items():
                    print(f"  burst, {label}: {burst(work, sock, args.burst, pid)}", flush=True)
            for label, (_, _, pid) in daemons.items():
                print(f"  daemon {label}: RSS {rss_mb(pid):.0f} MB at the end", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
