#!/usr/bin/env python3
"""Bug localization from commit history: a fix commit's message is the query, the source files it
modified are the answer (scripts/build_localization_bench.py builds the commit list).

For each commit the repository is in the state of the commit's parent: the index never holds the
fix. Per repository, a working tree (a shared clone of the bare mirror) is checked out at the
parent of the oldest commit and indexed whole (vectors included); then the tree walks forward,
commit by commit, to each parent, and the incremental indexer updates the index (only changed
files are parsed again, and only changed chunk texts embedded again).

Systems, each giving the top 10 files:
  codesearch hybrid   `query --files`, default settings (keyword + vector + graph, ranking on)
  codesearch keyword  the same with the keyword retriever alone
  codesearch vector   the same with the vector retriever alone
  With --files-by S1,S2 each codesearch system is asked once per strategy (`query --files-by S`),
  shown as SYSTEM:STRATEGY (e.g. hybrid:per_retriever).
  BM25 (whole files)  plain BM25 over the whole text of each indexed file: an SQLite FTS5 table
                      with the standard `unicode61` tokenizer (no stemming, no stopwords, no
                      identifier splitting beyond FTS5's own), the query's distinct words OR-ed,
                      FTS5's bm25() (k1 = 1.2, b = 0.75); the same files codesearch indexes.

Metrics at file level: Acc@k (an answer file is in the top k), Recall@10 (the share of the
answer files in the top 10); the answer files are those the index holds at the parent (a file
the walker skips is left out; a commit with none left is not counted). Means over commits,
per language, per half of the repositories (codesearch/eval/bench.py HALVES) and overall.

Usage: scripts/bench_localization.py [--commits ~/.cache/codesearch-loc/commits.json]
           [--work ~/.cache/csidx-loc] [--repos NAME,...] [--limit N] [--systems ...]
           [--files-by STRATEGY,...] [--set NAME=VALUE] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codesearch.config import load_settings
from codesearch.eval.bench import half_of
from codesearch.indexing.index import CATALOG_NAME, Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.requests import SearchRequest
from codesearch.search.searcher import Searcher
from codesearch.store.catalog import Catalog
from codesearch.vocabulary import FILE_RANKINGS

DEFAULT_COMMITS = Path.home() / ".cache" / "codesearch-loc" / "commits.json"
DEFAULT_WORK = Path.home() / ".cache" / "csidx-loc"
SYSTEMS = {"hybrid": ("keyword", "vector", "graph"), "keyword": ("keyword",), "vector": ("vector",)}
ALL_SYSTEMS = ("hybrid", "keyword", "vector", "bm25")
CUTOFFS = (1, 5, 10)
TOP = 10
BM25_WORD = re.compile(r"[^\W_]+")  # what unicode61 keeps as a token: letters and digits


class WholeFileBM25:
    """Plain BM25 over whole files: an in-memory FTS5 table kept in step with the index's files."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, body, tokenize = 'unicode61')")
        self.hashes: dict[str, str] = {}

    def update(self, root: Path, files: dict[str, str]) -> None:
        """`files`: path -> content hash of every file the index holds now."""
        for path in [p for p in self.hashes if p not in files or files[p] != self.hashes[p]]:
            self.db.execute("DELETE FROM docs WHERE path = ?", (path,))
            del self.hashes[path]
        for path, digest in files.items():
            if path not in self.hashes:
                text = (root / path).read_text(encoding="utf-8", errors="replace")
                self.db.execute("INSERT INTO docs(path, body) VALUES (?, ?)", (path, text))
                self.hashes[path] = digest

    def search(self, query: str, limit: int = TOP) -> list[str]:
        words = list(dict.fromkeys(w.lower() for w in BM25_WORD.findall(query)))
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        rows = self.db.execute("SELECT path FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?",
                               (match, limit))
        return [r[0] for r in rows]


def git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(tree), *args], check=True, capture_output=True, text=True).stdout


def prepare_tree(git_dir: str, tree: Path) -> None:
    """A clone that shares the mirror's objects (nothing copied, the mirror never written)."""
    if not (tree / ".git").is_dir():
        tree.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "--quiet", "--shared", "--no-checkout", git_dir, str(tree)], check=True)


def scores(ranked: list[str], answer: list[str]) -> dict[str, float]:
    out = {f"acc@{k}": float(any(p in answer for p in ranked[:k])) for k in CUTOFFS}
    out["recall@10"] = sum(1 for p in answer if p in ranked[:TOP]) / len(answer)
    return out


def file_ranking(searcher: Searcher, query: str, system: str) -> list[str]:
    """The top files of a codesearch system: a name of SYSTEMS, with `:STRATEGY` to ask for that
    file ranking (`query --files-by STRATEGY`)."""
    name, _, strategy = system.partition(":")
    answer = searcher.search(SearchRequest(query=query, limit=TOP, files=True, retrievers=SYSTEMS[name],
                                           file_ranking=strategy or None))
    return [r.path for r in answer.results]


def with_strategies(systems: list[str], strategies: list[str]) -> list[str]:
    """Each codesearch system once per file ranking strategy (SYSTEM:STRATEGY); bm25 as it is."""
    if not strategies:
        return systems
    return [f"{s}:{strategy}" if s in SYSTEMS else s for s in systems
            for strategy in (strategies if s in SYSTEMS else [""])]


def seed_cache(index: Index, seed: Path) -> int:
    """Copy the embedding cache of another index (one of the same model, e.g. the benchmark
    roots' at their pinned commits) into a new index: chunks whose text it holds are not embedded
    again. Only a head start: which vectors a search finds does not depend on it."""
    if index.catalog.files.chunk_count() or not seed.is_file():
        return 0
    source = Catalog(seed, readonly=True)
    try:
        rows = list(source.vectors.cache_rows())
    finally:
        source.close()
    index.catalog.vectors.restore_cache_rows(rows)
    return len(rows)


def run_repo(name: str, git_dir: str, commits: list[dict], work: Path, systems: list[str],
             overrides: dict[str, str], seed: Path | None = None) -> tuple[list[dict], dict[str, float]]:
    """Walk the repository's commits oldest first; one row per commit with each system's scores."""
    tree = work / "trees" / name
    prepare_tree(git_dir, tree)
    settings = load_settings(None, overrides)
    index = Index(tree, settings, work / "index" / name, create=True)
    if seed is not None:
        seeded = seed_cache(index, seed / name / CATALOG_NAME)
        if seeded:
            print(f"[{name}] embedding cache seeded with {seeded} vectors from {seed / name}", file=sys.stderr)
    bm25 = WholeFileBM25() if "bm25" in systems else None
    embed = any(s.partition(":")[0] in ("hybrid", "vector") for s in systems)
    rows: list = []
    timing: defaultdict[str, float] = defaultdict(float)
    try:
        for commit in sorted(commits, key=lambda c: c["time"]):
            t = time.monotonic()
            git(tree, "checkout", "--quiet", "--force", "--detach", commit["parent"])
            timing["checkout"] += time.monotonic() - t
            t = time.monotonic()
            report = Indexer(index).run(embed=embed)
            timing["index"] += time.monotonic() - t
            print(f"[{name}] {commit['commit'][:10]}: {report.summary()}", file=sys.stderr)
            files = {path: f.content_hash for path, f in index.catalog.files.records().items() if f.skip_reason is None}
            answer = [p for p in commit["files"] if p in files]
            if not answer:
                rows.append({"repo": name, "commit": commit["commit"], "skipped": "answer files not indexed"})
                continue
            row: dict = {"repo": name, "language": commit["language"], "commit": commit["commit"],
                         "answer": answer, "words": len(commit["query"].split())}
            searcher = Searcher(index)
            for system in systems:
                t = time.monotonic()
                if system == "bm25":
                    assert bm25 is not None
                    bm25.update(tree, files)
                    ranked = bm25.search(commit["query"])
                else:
                    ranked = file_ranking(searcher, commit["query"], system)
                timing[system] += time.monotonic() - t
                row[system] = scores(ranked, answer) | {"top": ranked[:5]}
            rows.append(row)
    finally:
        index.close()
    return rows, timing


def summarize(rows: list[dict], systems: list[str]) -> None:
    counted = [r for r in rows if "skipped" not in r]
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in counted:
        groups[r["language"]].append(r)
    metrics = [f"acc@{k}" for k in CUTOFFS] + ["recall@10"]
    header = f"  {'':<12}{'n':>4}  " + "  ".join(f"{s + ' ' + m:>17}" for s in systems for m in metrics[:1])

    def line(label: str, group: list[dict]) -> str:
        cells = []
        for s in systems:
            cells.append(" / ".join(f"{sum(r[s][m] for r in group) / len(group):.2f}" for m in metrics))
        return f"  {label:<12}{len(group):>4}  " + "  ".join(f"{c:>25}" for c in cells)

    print(f"\nbug localization, {len(counted)} commits ({len(rows) - len(counted)} left out: answer not indexed)")
    print("cells: Acc@1 / Acc@5 / Acc@10 / Recall@10")
    print(f"  {'language':<12}{'n':>4}  " + "  ".join(f"{s:>25}" for s in systems))
    del header
    for language in sorted(groups):
        print(line(language, groups[language]))
    halves: dict[str, list[dict]] = defaultdict(list)
    for r in counted:
        halves[half_of(r["repo"])].append(r)
    for half in sorted(halves):
        print(line(f"half {half}", halves[half]))
    print(line("overall", counted))
    if "bm25" in systems and counted:
        base = sum(r["bm25"]["acc@5"] for r in counted) / len(counted)
        for s in systems:
            if s != "bm25" and base:
                ratio = sum(r[s]["acc@5"] for r in counted) / len(counted) / base
                print(f"  Acc@5 {s} / BM25: {ratio:.2f}x")
    by_length: dict[str, list[dict]] = defaultdict(list)
    for r in counted:
        by_length["<= 30 words" if r["words"] <= 30 else "31-100 words" if r["words"] <= 100 else "> 100 words"
                  ].append(r)
    print("by message length (Acc@5):")
    for label in ("<= 30 words", "31-100 words", "> 100 words"):
        group = by_length.get(label, [])
        if group:
            print(f"  {label:<14}{len(group):>4}  " + "  ".join(
                f"{s} {sum(r[s]['acc@5'] for r in group) / len(group):.2f}" for s in systems))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=Path, default=DEFAULT_COMMITS)
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="working trees and indexes (kept)")
    parser.add_argument("--repos", default="", help="comma-separated repository names (default: all)")
    parser.add_argument("--limit", type=int, default=0, help="only the newest N commits of each repository")
    parser.add_argument("--systems", default=",".join(ALL_SYSTEMS))
    parser.add_argument("--files-by", default="", metavar="STRATEGY,...",
                        help=f"file ranking strategies ({', '.join(FILE_RANKINGS)}) each codesearch system is "
                             "asked with (default: the setting file_ranking's)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a setting")
    parser.add_argument("--seed-cache", type=Path, metavar="DIR",
                        help="indexes (DIR/NAME) whose embedding caches a new index starts from "
                             "(e.g. ~/.cache/csidx-base)")
    parser.add_argument("--json", type=Path, help="write every row here")
    parser.add_argument("--from-json", type=Path, nargs="+", metavar="ROWS",
                        help="print the figures of earlier runs' rows (--json files) together; run nothing")
    args = parser.parse_args()

    systems = [s for s in args.systems.split(",") if s]
    unknown = set(systems) - set(ALL_SYSTEMS)
    if unknown:
        parser.error(f"unknown systems: {', '.join(sorted(unknown))}")
    strategies = [s for s in args.files_by.split(",") if s]
    if set(strategies) - set(FILE_RANKINGS):
        parser.error(f"unknown file ranking strategies: {', '.join(sorted(set(strategies) - set(FILE_RANKINGS)))}")
    systems = with_strategies(systems, strategies)
    if args.from_json:
        summarize([row for path in args.from_json for row in json.loads(path.read_text())], systems)
        return 0
    data = json.loads(args.commits.read_text())
    wanted = set(filter(None, args.repos.split(",")))
    overrides = dict(item.split("=", 1) for item in args.set)
    started = time.monotonic()
    rows: list[dict] = []
    totals: dict[str, float] = defaultdict(float)
    for repo in data["repos"]:
        if wanted and repo["name"] not in wanted:
            continue
        commits = sorted((c for c in data["commits"] if c["repo"] == repo["name"]), key=lambda c: -c["time"])
        commits = commits[:args.limit] if args.limit else commits
        if not commits:
            continue
        t = time.monotonic()
        repo_rows, timing = run_repo(repo["name"], repo["git_dir"], commits, args.work, systems, overrides,
                                    args.seed_cache)
        rows += repo_rows
        for key, value in timing.items():
            totals[key] += value
        print(f"[{repo['name']}] {len(commits)} commits in {time.monotonic() - t:.0f} s", file=sys.stderr)
    summarize(rows, systems)
    print(f"\ntime: {time.monotonic() - started:.0f} s in all; " +
          ", ".join(f"{k} {v:.0f} s" for k, v in totals.items()))
    print("command: " + " ".join(sys.argv))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
