#!/usr/bin/env python3
"""Docs-heavy repositories: behaviour questions answered by code, asked of a whole repository whose
documentation is translated into many languages in the repository itself (scripts/data/
docs_heavy_cases.json: the repositories, their revisions, and each question's answering code as a
file and line range, judged by reading the code).

Per repository and overall:
- code@3: the share of questions with a code chunk (not documentation, not a test) in the top 3;
- NDCG@10 and Recall@10 of the answering code (a result matches when it lies in an answer's file
  and overlaps its lines; the first match counts; results as the user sees them, one per chunk);
- near-duplicate pairs in each top 10, two ways: "alike", two results whose texts share most of
  their words (set Jaccard of their ASCII words of two letters or more >= DUPLICATE_JACCARD), and
  "copies", two results whose texts are nearly the same (Jaccard of their runs of three words,
  w-shingles, >= COPY_JACCARD: copied code, a method and the part of its class around it; two
  functions alike in their words but written differently are alike, not copies); translations of one
  page keep its code, identifiers, links and structure), summed over the questions.

Usage: scripts/bench_docs_heavy.py [--checkouts ~/.cache/codesearch-bench-docs]
           [--index-root ~/.cache/codesearch-bench-docs-index] [--set NAME=VALUE ...]
           [--ranking NAME=VALUE ...] [--json OUT] [NAME ...]
A checkout is the repository at its revision, exported whole (for example `git clone URL NAME &&
git -C NAME checkout REVISION`); each is indexed whole into --index-root/NAME (kept between runs).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_quality import ranking_options
from benchlib import write_results

from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.requests import SearchRequest
from codesearch.search.searcher import Searcher

CASES = Path(__file__).resolve().parent / "data" / "docs_heavy_cases.json"
DOCUMENT_LANGUAGES = frozenset({"markdown", "rst", "text", "asciidoc", "org", "html"})
TEST_FILE = re.compile(r"(^|/)(tests?|testdata|examples?)/|_test\.go$|(^|/)test_[^/]*\.py$")
DUPLICATE_JACCARD = 0.5
COPY_JACCARD = 0.7
SHINGLE = 3
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")
TOP = 10


def is_code(result: dict) -> bool:
    """A chunk of the project's code: not a document, not a test or example."""
    return result["language"] not in DOCUMENT_LANGUAGES and not TEST_FILE.search(result["path"])


def words_of(root: Path, result: dict) -> list[str]:
    lines = (root / result["path"]).read_text(errors="replace").split("\n")
    return WORD.findall("\n".join(lines[result["start_line"] - 1:result["end_line"]]))


def jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def duplicate_pairs(root: Path, results: list[dict]) -> tuple[list[str], list[str]]:
    """(alike, copies): pairs of results whose words overlap by DUPLICATE_JACCARD or more, and
    those whose runs of SHINGLE words overlap by COPY_JACCARD or more."""
    words = [words_of(root, r) for r in results]
    sets = [frozenset(w) for w in words]
    shingles = [frozenset(tuple(w[i:i + SHINGLE]) for i in range(max(1, len(w) - SHINGLE + 1))) for w in words]
    alike, copies = [], []
    for i in range(len(sets)):
        for j in range(i + 1, len(sets)):
            pair = f"{place(results[i])} ~ {place(results[j])}"
            if jaccard(sets[i], sets[j]) >= DUPLICATE_JACCARD:
                alike.append(pair)
            if jaccard(shingles[i], shingles[j]) >= COPY_JACCARD:
                copies.append(pair)
    return alike, copies


def place(result: dict) -> str:
    return f"{result['path']}:{result['start_line']}-{result['end_line']}"


def first_match(results: list[dict], answers: list[dict]) -> int | None:
    """The 1-based rank of the first result that overlaps an answer."""
    for rank, r in enumerate(results, start=1):
        for a in answers:
            if r["path"] == a["path"] and r["start_line"] <= a["end_line"] and r["end_line"] >= a["start_line"]:
                return rank
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkouts", type=Path, default=Path.home() / ".cache/codesearch-bench-docs")
    parser.add_argument("--index-root", type=Path, default=Path.home() / ".cache/codesearch-bench-docs-index")
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting for index and search, e.g. embedder=static")
    parser.add_argument("--ranking", action="append", default=[], metavar="NAME=VALUE",
                        help="a ranking strength (search/ranking.py RankingOptions), e.g. test_factor=0.7")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()

    data = json.loads(args.cases.read_text())
    repos = [r for r in data["repos"] if not args.names or r["name"] in args.names]
    for repo in repos:
        if not (args.checkouts / repo["name"]).is_dir():
            print(f"missing checkout: {args.checkouts / repo['name']} ({repo['url']} at {repo['revision']})",
                  file=sys.stderr)
            return 1
    overrides = dict(item.split("=", 1) for item in args.set)
    ranking = ranking_options(args.ranking)
    figures: dict[str, dict[str, float]] = {}
    per_query: list[dict] = []
    latencies: list[float] = []
    for repo in repos:
        name, root = repo["name"], args.checkouts / repo["name"]
        index = Index(root, load_settings(None, overrides), args.index_root / name, create=True)
        t = time.monotonic()
        print(f"[{name}] {Indexer(index).run().summary()} ({time.monotonic() - t:.0f}s)", file=sys.stderr)
        searcher = Searcher(index)
        sums: dict[str, float] = defaultdict(float)
        cases = [c for c in data["cases"] if c["repo"] == name]
        for case in cases:
            answer = searcher.search(SearchRequest(query=case["query"], limit=TOP, ranking=ranking))
            latencies.append(answer.timing_ms["total"])
            results = [r.to_dict() for r in answer.results][:TOP]
            rank = first_match(results, case["answers"])
            alike, copies = duplicate_pairs(root, results)
            row = {"repo": name, "query": case["query"], "rank": rank,
                   "code_top3": any(is_code(r) for r in results[:3]),
                   "duplicates": alike, "copies": copies, "top3": [place(r) for r in results[:3]],
                   "similar": sum(len(r.get("similar") or ()) for r in results)}
            row["duplicate_pairs"], row["copy_pairs"] = len(alike), len(copies)
            per_query.append(row)
            sums["code@3"] += row["code_top3"]
            sums["ndcg@10"] += 1 / math.log2(rank + 1) if rank else 0.0
            sums["recall@10"] += rank is not None
            sums["duplicate_pairs"] += row["duplicate_pairs"]
            sums["copy_pairs"] += row["copy_pairs"]
        figures[name] = {k: (v if k.endswith("_pairs") else v / len(cases)) for k, v in sums.items()}
        figures[name]["questions"] = len(cases)
        index.close()

    print(f"\n{'repository':<12}{'questions':>10}{'code@3':>8}{'NDCG@10':>9}{'R@10':>7}{'alike pairs':>13}"
          f"{'copy pairs':>12}")
    for name, f in figures.items():
        print(f"{name:<12}{f['questions']:>10.0f}{f['code@3']:>8.2f}{f['ndcg@10']:>9.3f}{f['recall@10']:>7.2f}"
              f"{f['duplicate_pairs']:>13.0f}{f['copy_pairs']:>12.0f}")
    n = len(per_query)
    overall = {"code@3": sum(r["code_top3"] for r in per_query) / n,
               "ndcg@10": sum(1 / math.log2(r["rank"] + 1) for r in per_query if r["rank"]) / n,
               "recall@10": sum(r["rank"] is not None for r in per_query) / n,
               "duplicate_pairs": sum(r["duplicate_pairs"] for r in per_query),
               "copy_pairs": sum(r["copy_pairs"] for r in per_query)}
    print(f"{'overall':<12}{n:>10}{overall['code@3']:>8.2f}{overall['ndcg@10']:>9.3f}{overall['recall@10']:>7.2f}"
          f"{overall['duplicate_pairs']:>13.0f}{overall['copy_pairs']:>12.0f}")
    latencies.sort()
    print(f"query latency in process: p50 {latencies[len(latencies) // 2]:.1f} ms")
    if args.json:
        write_results(args.json, {"per_repo": figures, "overall": overall}, queries=per_query)
    return 0


if __name__ == "__main__":
    sys.exit(main())
