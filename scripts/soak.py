#!/usr/bin/env python3
"""Soak: a daemon under a random edit / rename / delete / branch-switch workload, with searching
clients, killed (kill -9) and restarted every so often; at the end its index must equal a fresh
index of the final tree.

Usage: scripts/soak.py GITDIR REV_A REV_B [--minutes 10] [--clients 20] [--kill-every 120]
GITDIR is a bare git directory (e.g. a `fetch`ed benchmark repository) and REV_A, REV_B two of
its commits: the two "branches" the workload switches between (every file that differs is
rewritten at once, as a checkout does). Everything happens in a temporary folder.

Prints: searches answered, error replies other than busy (must be 0), busy replies, searches
that found no daemon (it was being restarted), p50/p95 search latency, the restarts and how long
each took to be ready again, and whether the final index equals a fresh one (files, chunks,
edges, vector ids).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchlib import GENERIC_QUERIES, REPO_ROOT, codesearch, percentile

from codesearch.store.catalog import Catalog

BUSY = -32001
EXPORT = REPO_ROOT.parent / "shared" / "bench" / "export_repo.py"


def export(gitdir: str, rev: str, dest: Path) -> None:
    subprocess.run([sys.executable, str(EXPORT), gitdir, rev, str(dest)], check=True, capture_output=True)


def switch_branch(tree: Path, branch: Path) -> int:
    """Make `tree` look like `branch` (its files and only those), as a checkout would."""
    changed = 0
    wanted = {p.relative_to(branch) for p in branch.rglob("*") if p.is_file()}
    for path in list(tree.rglob("*")):
        rel = path.relative_to(tree)
        if rel.parts[0] == ".codesearch" or not path.is_file():
            continue
        if rel not in wanted:
            path.unlink()
            changed += 1
    for rel in wanted:
        source, target = branch / rel, tree / rel
        data = source.read_bytes()
        if not target.exists() or target.read_bytes() != data:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            changed += 1
    return changed


def workload(tree: Path, branches: list[Path], stop: threading.Event, counts: dict[str, int], seed: int) -> None:
    """Random edits, new files, renames and deletes, and a branch switch now and then."""
    rng = random.Random(seed)
    next_switch = time.monotonic() + 60
    while not stop.wait(rng.uniform(0.05, 0.6)):
        files = [p for p in tree.rglob("*.py") if ".codesearch" not in p.parts]
        action = rng.choice(["edit", "edit", "edit", "create", "rename", "delete"])
        try:
            if time.monotonic() > next_switch:
                counts["files switched"] += switch_branch(tree, rng.choice(branches))
                counts["branch switches"] += 1
                next_switch = time.monotonic() + rng.uniform(40, 80)
            elif action == "edit" and files:
                path = rng.choice(files)
                path.write_text(path.read_text(errors="replace") + f"\n\ndef soak_{rng.randrange(10**9)}():\n"
                                "    return 1\n")
            elif action == "create":
                folder = tree / "soak"
                folder.mkdir(exist_ok=True)
                (folder / f"new_{rng.randrange(10**9)}.py").write_text(f"def created_{rng.randrange(10**9)}():\n"
                                                                        "    return 2\n")
            elif action == "rename" and files:
                path = rng.choice(files)
                path.rename(path.with_name(f"renamed_{rng.randrange(10**6)}_{path.name}"))
            elif action == "delete" and files:
                rng.choice(files).unlink()
            counts[action] += 1
        except OSError:
            counts["workload errors"] += 1  # a file the last switch removed, say: no harm


def client(sock_path: str, seconds: float, seed: int) -> dict:
    """Searches over one connection, reconnecting when the daemon goes away."""
    rng = random.Random(seed)
    out: dict[str, Any] = {"latencies": [], "errors": [], "busy": 0, "unavailable": 0}
    deadline = time.time() + seconds
    conn: socket.socket | None = None
    reader: Any = None
    while time.time() < deadline:
        if conn is None:
            try:
                conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                conn.settimeout(30)
                conn.connect(sock_path)
                reader = conn.makefile("rb")
            except OSError:
                conn = None
                out["unavailable"] += 1
                time.sleep(0.5)
                continue
        mode = "hybrid" if rng.random() < 0.3 else "keyword"
        message = {"jsonrpc": "2.0", "id": 1, "method": "search",
                   "params": {"query": rng.choice(GENERIC_QUERIES), "mode": mode}}
        started = time.perf_counter()
        try:
            conn.sendall(json.dumps(message).encode() + b"\n")
            line = reader.readline()
            if not line.endswith(b"\n"):  # nothing, or part of a reply: the daemon was killed while writing it
                raise ConnectionError("closed")
        except OSError:
            conn.close()
            conn = None
            out["unavailable"] += 1
            continue
        reply = json.loads(line)
        if "error" in reply:
            if reply["error"]["code"] == BUSY:
                out["busy"] += 1
                time.sleep(reply["error"].get("data", {}).get("retry_after_ms", 200) / 1000)
            else:
                out["errors"].append(reply["error"]["message"][:200])
        else:
            out["latencies"].append((time.perf_counter() - started) * 1000)
        time.sleep(rng.uniform(0.0, 0.2))
    return out


def snapshot(index_dir: Path) -> dict:
    """The index's content by ids and paths (catalog.contents), and the ids that have vectors."""
    catalog = Catalog(index_dir / "catalog.sqlite3", readonly=True)
    try:
        contents = catalog.stats.contents()
        contents["vectors"] = Counter(catalog.vectors.live_ids())
        return contents
    finally:
        catalog.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("gitdir")
    parser.add_argument("rev_a")
    parser.add_argument("rev_b")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--kill-every", type=float, default=120, help="seconds between kills of the daemon")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    os.environ.pop("CODESEARCH_INDEX_DIR", None)
    work = Path(tempfile.mkdtemp(prefix="cs-soak-"))
    branches = [work / "branch-a", work / "branch-b"]
    export(args.gitdir, args.rev_a, branches[0])
    export(args.gitdir, args.rev_b, branches[1])
    tree = work / "tree"
    shutil.copytree(branches[0], tree)
    print(f"soak in {work}: {sum(1 for _ in tree.rglob('*'))} paths, {args.clients} clients, "
          f"{args.minutes} minutes, a kill -9 every {args.kill_every:.0f} s")
    codesearch("index", tree, "-q")
    codesearch("daemon", "start", tree)
    sock = tree / ".codesearch" / "daemon.sock"
    seconds = args.minutes * 60
    stop = threading.Event()
    counts = dict.fromkeys(("edit", "create", "rename", "delete", "branch switches", "files switched",
                            "workload errors"), 0)
    writer = threading.Thread(target=workload, args=(tree, branches, stop, counts, args.seed), daemon=True)
    writer.start()
    restarts: list[float] = []
    with multiprocessing.get_context("fork").Pool(args.clients) as pool:
        jobs = pool.starmap_async(client, [(str(sock), seconds, args.seed + k) for k in range(args.clients)])
        deadline = time.monotonic() + seconds
        while time.monotonic() + args.kill_every < deadline:
            time.sleep(args.kill_every)
            pid = int((tree / ".codesearch" / "daemon.pid").read_text())
            os.kill(pid, signal.SIGKILL)
            started = time.monotonic()
            codesearch("daemon", "start", tree)
            restarts.append(time.monotonic() - started)
        parts = jobs.get()
    stop.set()
    writer.join()
    codesearch("index", tree, "-q")  # through the daemon: the last changes, now
    status = json.loads(codesearch("daemon", "status", tree, "--json").stdout)
    deadline = time.monotonic() + 1800
    while (status["pending_changes"] or status["embedding"]["chunks_without_vectors"]) and time.monotonic() < deadline:
        time.sleep(2)
        status = json.loads(codesearch("daemon", "status", tree, "--json").stdout)
    codesearch("daemon", "stop", tree)
    verified = json.loads(codesearch("index", tree, "--verify", "--json", "-q").stdout)

    fresh = work / "fresh"
    shutil.copytree(tree, fresh, ignore=shutil.ignore_patterns(".codesearch"))
    codesearch("index", fresh, "-q")
    soaked, clean = snapshot(tree / ".codesearch"), snapshot(fresh / ".codesearch")

    latencies = [ms for part in parts for ms in part["latencies"]]
    errors = [e for part in parts for e in part["errors"]]
    print(f"workload: {counts}")
    print(f"searches answered {len(latencies)}, error replies other than busy {len(errors)}, "
          f"busy {sum(p['busy'] for p in parts)}, no daemon (restarting) {sum(p['unavailable'] for p in parts)}")
    if latencies:
        print(f"search latency p50 {percentile(latencies, 0.5):.0f} ms, p95 {percentile(latencies, 0.95):.0f} ms")
    print(f"kill -9 and restart: {len(restarts)} times, ready again in "
          + ", ".join(f"{s:.1f} s" for s in restarts))
    print(f"index --verify after: verified {verified['verified']}, vectors put right {verified['vectors_reconciled']}, "
          f"store rebuilt: {verified['vectors_repaired'] or 'no'}")
    equal = {part: soaked[part] == clean[part] for part in soaked}
    print(f"final index equals a fresh one: {equal} ({len(clean['files'])} files, {len(clean['chunks'])} chunks, "
          f"{len(clean['edges'])} edges)")
    for message in sorted(set(errors))[:5]:
        print(f"  error: {message}")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if all(equal.values()) and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
