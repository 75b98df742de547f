"""Run a query file (the benchmark's format) against a search service and aggregate the metrics."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from ..api.protocol import Service
from ..api.types import SearchRequest
from .metrics import mean, score_query

METRICS = ("ndcg@10", "mrr@10", "p@5", "recall@10")


def load_queries(path: Path) -> list[dict]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    queries = data if isinstance(data, list) else data.get("queries", [])
    for q in queries:
        if "query" not in q or "relevant" not in q:
            raise ValueError(f"{path}: every query needs 'query' and 'relevant'")
    return queries


def evaluate(service: Service, queries: list[dict], make_request: Callable[[str], SearchRequest] | None = None,
             limit: int = 30) -> dict:
    """Per-query scores plus means overall and per category."""
    build = make_request or (lambda text: SearchRequest(query=text, limit=limit))
    per_query = []
    for q in queries:
        answer = service.search(build(q["query"]))
        scores = score_query([r.to_dict() for r in answer.results], q["relevant"], q.get("secondary", []))
        per_query.append({"query": q["query"], "category": q.get("category", "all"), **scores,
                          "ms": answer.timing_ms["total"]})
    by_category: dict[str, list[dict]] = defaultdict(list)
    for row in per_query:
        by_category[row["category"]].append(row)
    summary = {m: mean([r[m] for r in per_query]) for m in METRICS}
    categories = {c: {m: mean([r[m] for r in rows]) for m in METRICS} | {"queries": len(rows)}
                  for c, rows in sorted(by_category.items())}
    return {"overall": summary | {"queries": len(per_query)}, "categories": categories, "queries": per_query}
