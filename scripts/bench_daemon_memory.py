#!/usr/bin/env python3
"""The daemon's memory once it has indexed and embedded a repository and answered hybrid queries.

Usage: scripts/bench_daemon_memory.py REPO_DIR [--seed-index DIR] [--set NAME=VALUE ...] [--timeout S]
                                     [--settle S]
REPO_DIR is copied to a temp folder (hard links: the daemon only reads the tree). A daemon started
there (`codesearch daemon start`, the settings given as CODESEARCH_* variables) builds the index,
or starts from a copy of --seed-index (an index of the same tree made beforehand: the daemon then
embeds only what that index lacks, or everything again when its vectors are another model's).
Once every chunk that gets a vector has one, three hybrid queries are asked, and the daemon's
memory is read from /proc: VmRSS and its peak (VmHWM), and the resident memory by what it maps
(anonymous memory: Python's heap, numpy, the model's runtime buffers; each shared library by
package), and whether torch is mapped at all; and the memory of its child processes (the
extraction workers, and the embedding process that exits once idle), sampled as it worked.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codesearch.daemon.client import call, socket_path

QUERIES = ["how are coroutines cancelled", "retry with exponential backoff", "where is the dispatcher chosen"]


def memory(pid: int) -> tuple[dict[str, int], Counter]:
    """(VmRSS, VmHWM in kB), and resident kB by mapping group."""
    status = Path(f"/proc/{pid}/status").read_text()
    vm = {key: int(re.search(rf"^{key}:\s+(\d+)", status, re.M).group(1)) for key in ("VmRSS", "VmHWM")}  # type: ignore[union-attr]
    groups: Counter = Counter()
    name = "?"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            path = head[5] if len(head) > 5 else "[anonymous]"
            name = _group(path)
        elif head and head[0] == "Rss:":
            groups[name] += int(head[1])
    return vm, groups


def children_rss(pid: int) -> dict[int, int]:
    """Resident kB of each child process of `pid` (extraction workers, the embedding process)."""
    out = {}
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids = (task / "children").read_text().split()
        except OSError:
            continue
        for kid in kids:
            try:
                status = Path(f"/proc/{kid}/status").read_text()
            except OSError:
                continue
            match = re.search(r"^VmRSS:\s+(\d+)", status, re.M)
            out[int(kid)] = int(match.group(1)) if match else 0
    return out


def _group(path: str) -> str:
    """A mapping's group: a package under site-packages, the interpreter, or the kind of memory."""
    if path.startswith("["):
        return "anonymous (heap, numpy, runtimes' buffers)" if path in ("[heap]", "[anonymous]") else path
    match = re.search(r"site-packages/([^/]+)", path)
    if match:
        return match.group(1).split(".")[0].removesuffix("_libs")
    if "python3" in path or "libpython" in path:
        return "python"
    return f"other files ({Path(path).name.split('.')[0]})" if path.endswith((".so", ".sqlite3")) else "other files"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--seed-index", type=Path)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--timeout", type=float, default=7200)
    parser.add_argument("--settle", type=float, default=0,
                        help="then wait this long (the children stop after 60 s idle) and read the memory again")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="cs-memory-"))
    work, index_dir = base / args.root.name, base / "index"
    subprocess.run(["cp", "-al", str(args.root), str(work)], check=True)
    if args.seed_index:
        shutil.copytree(args.seed_index, index_dir, ignore=shutil.ignore_patterns("daemon.*", "write.lock",
                                                                                   "vectors.open.*"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_")}
    env.update({"CODESEARCH_" + k.upper(): v for k, v in (item.split("=", 1) for item in args.set)})
    env.update(HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False", CODESEARCH_AUTO_DAEMON="0")
    cli = [sys.executable, "-m", "codesearch.cli"]
    repo = Path(__file__).resolve().parents[1]
    started = time.monotonic()
    subprocess.run([*cli, "daemon", "start", str(work), "--index-dir", str(index_dir)], check=True,
                   capture_output=True, cwd=repo, env=env)
    sock = socket_path(work, str(index_dir))
    try:
        status = call(sock, "status")
        pid, last = status["pid"], 0.0
        children_peak = 0
        while not (status["ready"] and status["model_ready"] and status["embedded_share"] >= 1.0
                   and not status["pending_changes"]):
            if time.monotonic() - started > args.timeout:
                print(f"gave up after {args.timeout:.0f} s: {status['embedded_share']:.1%} embedded")
                return 1
            if time.monotonic() - last > 60:
                last = time.monotonic()
                print(f"  {last - started:5.0f} s: {status['chunks']} chunks, {status['embedded_share']:.1%} "
                      f"embedded, {status['embedding']['rate_per_second']} chunks/s", flush=True)
            time.sleep(2)
            children_peak = max(children_peak, sum(children_rss(pid).values()))
            status = call(sock, "status")
        embedded_at = time.monotonic() - started
        for query in QUERIES:
            answer = call(sock, "search", {"query": query, "mode": "hybrid", "limit": 10}, timeout=120)
            assert answer["results"] and not answer.get("partial"), answer
        vm, groups = memory(pid)
        print(f"{args.root} ({status['files']} files, {status['chunks']} chunks, {status['vectors']} vectors), "
              f"settings {' '.join(args.set) or 'default'}; load average {os.getloadavg()[0]:.1f}")
        print(f"  indexed and embedded in {embedded_at:.0f} s; after {len(QUERIES)} hybrid queries: "
              f"RSS {vm['VmRSS'] / 1024:.0f} MB, peak {vm['VmHWM'] / 1024:.0f} MB")
        for group, kb in groups.most_common(12):
            print(f"    {kb / 1024:7.1f} MB  {group}")
        print(f"  torch mapped: {'yes' if groups.get('torch') else 'no'}")
        print(f"  child processes (extraction workers, the embedding process): peak {children_peak / 1024:.0f} MB "
              f"together while it indexed and embedded; now {sum(children_rss(pid).values()) / 1024:.0f} MB")
        if args.settle:
            time.sleep(args.settle)
            vm, _ = memory(pid)
            kids = children_rss(pid)
            together = (vm["VmRSS"] + sum(kids.values())) / 1024
            print(f"  {args.settle:.0f} s later, idle: daemon RSS {vm['VmRSS'] / 1024:.0f} MB, {len(kids)} child "
                  f"processes {sum(kids.values()) / 1024:.0f} MB, together {together:.0f} MB")
    finally:
        subprocess.run([*cli, "daemon", "stop", str(work), "--index-dir", str(index_dir)], capture_output=True,
                       cwd=repo, env=env)
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
