#!/usr/bin/env python3
"""How far one Milvus Lite team store grows here: a copy of a store that bench_team.py made (the 22
benchmark repositories), whose repositories are written again and again under other names (their
chunks, files and edges rows, so that every copy is live and searchable), measured at each step:
chunks, the seconds the step's inserts took, the store's bytes on disk, the process's resident and
peak memory, and search latency (hybrid, limit 10) scoped to one repository (with --across, also
across all of them: the first such search reads every branch's live file map, graph and keyword
statistics, which grows with the number of branches, and is timed apart). It stops cleanly at
the last step, after --minutes, or when the process holds more than --max-rss-gb, and prints one
JSON line per step.

Usage: scripts/bench_team_scale.py --from STORE --work COPY [--steps 100000,250000,500000,1000000]
                                   [--minutes 20] [--max-rss-gb 12] [--queries 20] [--across] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codesearch.config import load_settings
from codesearch.embedding.backends import process_embedder
from codesearch.eval.bench import SHARED_BENCH
from codesearch.search.requests import SearchRequest
from codesearch.team.front import open_store
from codesearch.team.milvus_store import (
    CHUNK_FIELDS,
    CHUNKS,
    EDGE_FIELDS,
    EDGES,
    FILE_FIELDS,
    FILES,
    MilvusStore,
    row_uid,
)
from codesearch.team.team_search import Scope, TeamSearcher

BATCH = 2_000  # rows a copy inserts at a time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from", dest="source", type=Path, required=True, help="a store bench_team.py made")
    parser.add_argument("--work", type=Path, required=True, help="where the growing copy goes (replaced)")
    parser.add_argument("--steps", default="100000,250000,500000,1000000")
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--max-rss-gb", type=float, default=12.0)
    parser.add_argument("--queries", type=int, default=20, help="searches timed at each step, each way")
    parser.add_argument("--across", action="store_true", help="time searches across every repository too")
    parser.add_argument("--annotations", type=Path, default=SHARED_BENCH / "annotations")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    steps = sorted(int(s) for s in args.steps.split(","))
    if args.work.exists():
        shutil.rmtree(args.work) if args.work.is_dir() else args.work.unlink()
    shutil.copytree(args.source, args.work) if args.source.is_dir() else shutil.copy(args.source, args.work)
    settings = load_settings(None)
    embedder = process_embedder(settings)
    store = open_store(f"milvus://{args.work}")
    started = time.monotonic()
    deadline = started + args.minutes * 60
    base = {name: list(store.rows(name, 'repo != ""', fields)) for name, fields in (
        (CHUNKS, (*CHUNK_FIELDS, "has_vector", "keywords", "dense")), (FILES, ("repo", "branch", *FILE_FIELDS)),
        (EDGES, ("uid", *EDGE_FIELDS)))}
    states = store.states()
    queries = question_texts(args.annotations, [s.repo for s in states])
    total = len(base[CHUNKS])
    print(f"[scale] {total} chunks, {len(base[EDGES])} edges in {len(states)} branches to copy", file=sys.stderr)
    timed = Timed(queries[:args.queries], args.across, started)
    out: list[dict] = [measure(store, settings, embedder, total, 0.0, args.work, timed)]
    print(json.dumps(out[-1]), flush=True)
    copy = 0
    why = "every step reached"
    for step in steps:
        if step <= total:
            continue
        inserting = 0.0
        while total < step:
            if time.monotonic() > deadline:
                why = f"stopped after {args.minutes} minutes"
                break
            if rss_gb() > args.max_rss_gb:
                why = f"stopped: the process held {rss_gb():.1f} GB"
                break
            copy += 1
            t = time.perf_counter()
            whole = write_copy(store, base, states, copy, lambda: time.monotonic() > deadline)
            inserting += time.perf_counter() - t
            if not whole:  # its rows without a state record: never searched
                why = f"stopped after {args.minutes} minutes, within a copy"
                break
            total += len(base[CHUNKS])
        else:
            t = time.perf_counter()
            store.flush()
            inserting += time.perf_counter() - t
            out.append(measure(store, settings, embedder, total, inserting, args.work, timed))
            print(json.dumps(out[-1]), flush=True)
            continue
        break
    print(f"[scale] {why}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({"steps": out, "ended": why}, indent=1))
    store.close()
    shutil.rmtree(args.work, ignore_errors=True) if args.work.is_dir() else args.work.unlink(missing_ok=True)
    return 0


def write_copy(store: MilvusStore, base: dict[str, list[dict]], states, copy: int,
               stop: Callable[[], bool]) -> bool:
    """Every repository once more, under the name `REPO~copy`: its chunks, files and edges rows
    and, last, its state record; False where `stop` said so between two batches of chunks."""
    def renamed(row: dict, *key: object) -> dict:
        return dict(row, repo=f"{row['repo']}~{copy}", uid=row_uid(f"{row['repo']}~{copy}", *key))
    for start in range(0, len(base[CHUNKS]), BATCH):
        if stop():
            return False
        rows = []
        for row in base[CHUNKS][start:start + BATCH]:
            new = renamed(row, row["branch"], row["gen"], row["chunk_id"])
            new["dense"] = list(map(float, row["dense"]))
            new.pop("sparse", None)
            rows.append(new)
        store.insert(CHUNKS, rows)
    store.insert(FILES, [renamed(f, f["branch"], f["path"], f["gen"]) for f in base[FILES]])
    store.insert(EDGES, [renamed(e, e["uid"]) for e in base[EDGES]])
    for state in states:
        store.put_state(type(state)(**{**state.__dict__, "repo": f"{state.repo}~{copy}"}))
    return True


def question_texts(annotations: Path, repos: list[str]) -> list[tuple[str, str]]:
    """(repository, question) pairs, a few of each repository's in turn."""
    per_repo = [[(r, q["query"]) for q in json.loads((annotations / f"{r}.json").read_text())]
                for r in sorted(set(repos)) if (annotations / f"{r}.json").exists()]
    return [pair for group in zip(*per_repo) for pair in group]


@dataclass
class Timed:
    queries: list[tuple[str, str]]  # (repository, question)
    across: bool
    started: float


def measure(store: MilvusStore, settings, embedder, total: int, inserting: float, path: Path, timed: Timed) -> dict:
    """One step's figures; each repository's first scoped search (its branch's maps read) not timed."""
    team = TeamSearcher(store, settings, embedder)
    for repo in dict(timed.queries):
        team.search(SearchRequest(query="warm up", limit=10), Scope(repo=repo))
    scoped = [search_ms(team, text, Scope(repo=repo)) for repo, text in timed.queries]
    found = {"chunks": total, "insert_s": round(inserting, 1), "store_bytes": folder_bytes(path),
             "repo_p50_ms": round(statistics.median(scoped), 1), "repo_p95_ms": round(percentile(scoped, 0.95), 1)}
    if timed.across:
        first = search_ms(team, "warm up", Scope())
        across = [search_ms(team, text, Scope()) for _, text in timed.queries]
        found.update(first_across_s=round(first / 1000, 1), all_p50_ms=round(statistics.median(across), 1),
                     all_p95_ms=round(percentile(across, 0.95), 1))
    return {**found, "rss_gb": round(rss_gb(), 2), "peak_rss_gb": round(peak_rss_gb(), 2),
            "elapsed_s": round(time.monotonic() - timed.started, 1)}


def search_ms(team: TeamSearcher, text: str, scope: Scope) -> float:
    t = time.perf_counter()
    team.search(SearchRequest(query=text, limit=10), scope)
    return (time.perf_counter() - t) * 1000


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else 0.0


def folder_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def rss_gb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024 / 1024
    return 0.0


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
