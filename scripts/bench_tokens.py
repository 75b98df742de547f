#!/usr/bin/env python3
"""What an answer costs an agent, in tokens, against grep-and-read, on the benchmark's queries.

usage: scripts/bench_tokens.py [--index-root ~/.cache/codesearch-bench-index] [--limit 10] [NAME ...]

For every annotated query (relevant files from ../shared/bench/annotations):
- codesearch: the `search` tool's answer (hybrid, `limit` results, compact JSON as MCP sends it)
  cut after the first result in a relevant file: what an agent reads to reach the answer. The
  whole answer's cost is printed too.
- grep-kw+read: the query's terms (stopwords dropped, identifiers split, as the keyword
  retriever reads them) grepped case-insensitively over the indexed files; the matching files are
  read whole, those with the most distinct terms first (kinder to grep than its path order),
  until one is relevant: the tokens of every file read.
Tokens are characters / 4 for both (search/budget.py). A query counts as a hit for a method when
it reaches a relevant file at all; medians are over the queries both methods hit ("paired").
Indexes are reused from --index-root/NAME (bench_quality.py builds them), updated if needed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from benchlib import REPO_ROOT  # noqa: F401 - puts the checkout on sys.path

from codesearch.analysis.tokens import query_terms
from codesearch.config import load_settings
from codesearch.eval.bench import DEFAULT_CHECKOUTS, SHARED_BENCH, benchmark_roots
from codesearch.eval.metrics import RelevantSpan, paths_match
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.paths import on_disk
from codesearch.search.budget import estimate_tokens
from codesearch.search.requests import SearchRequest
from codesearch.search.searcher import Searcher


def compact(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def relevant(path: str, targets: list[str]) -> bool:
    return any(paths_match(path, t) for t in targets)


def codesearch_cost(searcher: Searcher, query: str, targets: list[str], limit: int) -> tuple[int | None, int]:
    """(tokens up to the first relevant result or None when none is shown, tokens of the whole answer)."""
    answer = searcher.search(SearchRequest(query=query, limit=limit)).to_dict()
    whole = estimate_tokens(compact(answer))
    for k, result in enumerate(answer["results"], start=1):
        if relevant(result["path"], targets):
            return estimate_tokens(compact({**answer, "results": answer["results"][:k]})), whole
    return None, whole


def grep_cost(files: dict[str, str], query: str, targets: list[str]) -> tuple[int | None, int]:
    """(tokens read until a relevant file, or None; how many files matched)."""
    terms = sorted(set(query_terms(query)))
    hits = []
    for path, text in files.items():
        distinct = sum(1 for t in terms if t in text)
        if distinct:
            hits.append((-distinct, path))
    hits.sort()
    spent = 0
    for _, path in hits:
        spent += estimate_tokens(files[path])
        if relevant(path, targets):
            return spent, len(hits)
    return None, len(hits)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*")
    parser.add_argument("--index-root", type=Path, default=Path.home() / ".cache/codesearch-bench-index")
    parser.add_argument("--bench-dir", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--limit", type=int, default=10)
    args = parser.parse_args()
    roots = benchmark_roots(SHARED_BENCH / "repos.json", args.bench_dir, args.names or None)
    ours, grep, whole_answers, pairs = [], [], [], []
    for name, root in roots:
        queries = json.loads((SHARED_BENCH / "annotations" / f"{name}.json").read_text())
        index = Index(root, load_settings(None), args.index_root / name, create=True)
        Indexer(index).run()
        files = {}
        for path, record in index.catalog.files.records().items():
            if record.skip_reason:
                continue
            try:
                files[path] = on_disk(root, path).read_text(encoding="utf-8", errors="replace").lower()
            except OSError:
                continue
        searcher = Searcher(index)
        for q in queries:
            targets = [RelevantSpan.parse(t).path for t in [*q["relevant"], *q.get("secondary", [])]]
            first, whole = codesearch_cost(searcher, q["query"], targets, args.limit)
            read, _ = grep_cost(files, q["query"], targets)
            ours.append(first)
            grep.append(read)
            whole_answers.append(whole)
            if first is not None and read is not None:
                pairs.append((first, read))
        print(f"[{name}] {len(queries)} queries, {len(files)} files", file=sys.stderr)
        index.close()
    n = len(ours)
    print(f"{n} queries over {len(roots)} repositories; tokens = characters / 4")
    print(f"{'method':<34}{'reaches a relevant file':>24}{'median tokens (paired)':>24}")
    print(f"{'codesearch search, to 1st relevant':<34}{sum(x is not None for x in ours) / n:>24.1%}"
          f"{statistics.median(p[0] for p in pairs):>24.0f}")
    print(f"{'grep-kw + read whole files':<34}{sum(x is not None for x in grep) / n:>24.1%}"
          f"{statistics.median(p[1] for p in pairs):>24.0f}")
    print(f"paired queries: {len(pairs)}; codesearch cheaper on {sum(a < b for a, b in pairs) / len(pairs):.1%}; "
          f"median reduction {statistics.median(1 - a / b for a, b in pairs):.1%}")
    print(f"whole codesearch answer (limit {args.limit}): median {statistics.median(whole_answers):.0f} tokens, "
          f"p90 {sorted(whole_answers)[int(0.9 * n)]:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
