"""scripts/train_ranker.py: the features it reads of a candidate are the engine's, its pairs count
each file once as NDCG@10 does, and the model it trains orders candidates as the features say."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from codesearch.eval.metrics import RelevantSpan
from codesearch.model import Chunk
from codesearch.search.query import Query
from codesearch.search.ranking import RankingOptions, rank

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
_spec = importlib.util.spec_from_file_location("train_ranker", SCRIPTS / "train_ranker.py")
assert _spec is not None and _spec.loader is not None
train_ranker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(train_ranker)
FEATURES = train_ranker.FEATURES


def chunk(cid: str, path: str, name: str) -> Chunk:
    return Chunk(id=cid, parent_id=None, path=path, language="python", kind="function", name=name,
                 qualified_name=name, signature="", docstring="", start_line=1, end_line=4,
                 content_hash=cid, header="", text=f"def {name}(): pass\n")


def test_features_read_the_retrievers_and_the_rules():
    chunks = [chunk("a", "src/retry.py", "backoff"), chunk("b", "tests/test_retry.py", "test_backoff")]
    query = Query.parse("retry backoff")
    ranked = rank(query, [(chunks[0], 0.02), (chunks[1], 0.01)], RankingOptions())
    lists = {"vector": ["b", "a"], "keyword": ["a"]}
    scores = {"vector": {"b": 0.8, "a": 0.4}, "keyword": {"a": -7.0}}
    rows = train_ranker.features(query, ranked, lists, scores, {"a": 0.02, "b": 0.01}, frozenset())
    by_id = {r.chunk.id: dict(zip(FEATURES, row)) for r, row in zip(ranked, rows)}
    assert all(len(row) == len(FEATURES) for row in rows)
    assert by_id["a"]["keyword_found"] == 1.0 and by_id["b"]["keyword_found"] == 0.0
    assert by_id["a"]["vector_rank"] == pytest.approx(np.log(2)) and by_id["a"]["vector_share"] == 0.5
    assert by_id["a"]["keyword_share"] == 1.0  # BM25's negative scores: the best is the share 1
    assert by_id["b"]["other_class"] == 1.0 and by_id["a"]["other_class"] == 0.0  # a test, not asked for
    assert by_id[ranked[0].chunk.id]["rules_score"] == 0.0  # the top's log share of itself


def query_of(repo: str, paths: list[str], labels: list[float], x: np.ndarray) -> dict:
    return {"repo": repo, "x": x, "y": np.asarray(labels), "results": [{"path": p} for p in paths],
            "spans": [RelevantSpan(p) for p, label in zip(paths, labels) if label]}


def test_pairs_count_each_file_once():
    """NDCG@10 reads a file's first result: a.py's second match and b.py's second chunk pair with nothing."""
    x = np.eye(5, len(FEATURES))
    q = query_of("r", ["a.py", "a.py", "b.py", "b.py", "c.py"], [1.0, 1.0, 0.0, 0.0, 1.0], x)
    diffs, weights = train_ranker.lambda_pairs([q], None)
    assert len(diffs) == 2 and (weights > 0).all()
    assert {(int(np.argmax(d)), int(np.argmin(d))) for d in diffs} == {(0, 2), (4, 2)}


def test_the_model_orders_candidates_as_the_features_say():
    rng = np.random.default_rng(7)
    telling = FEATURES.index("path_words")
    queries = []
    for n in range(40):
        x = rng.normal(size=(12, len(FEATURES)))
        labels = [0.0] * 12
        for i in rng.choice(12, size=2, replace=False):
            x[i, telling] += 3.0
            labels[i] = 1.0
        queries.append(query_of(f"repo{n % 4}", [f"f{i}.py" for i in range(12)], labels, x))
    w = train_ranker.train(queries, 1.0, anchored=False)
    assert w[telling] == max(w)
    assert train_ranker.repo_mean(queries, w) > 0.95 > train_ranker.repo_mean(queries, None)
