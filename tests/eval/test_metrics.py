"""The benchmark's metrics (NDCG@10 as semble computes it), on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from codesearch.eval.metrics import (
    RelevantSpan,
    dedupe_by_path,
    matches,
    mrr_at,
    ndcg_at,
    paths_match,
    precision_at,
    recall_at,
    score_query,
    target_ranks,
)

# --- metrics ---------------------------------------------------------------------------------

def res(path: str, start: int = 1, end: int = 10, kind: str = "function") -> dict:
    return {"path": path, "start_line": start, "end_line": end, "kind": kind}


def test_paths_match_suffix_on_folder_boundary():
    assert paths_match("repo/src/a.py", "src/a.py")
    assert paths_match("src/a.py", "repo/src/a.py")
    assert paths_match("/src/a.py/", "src/a.py")
    assert not paths_match("xsrc/a.py", "src/a.py")
    assert not paths_match("src/a.py", "src/b.py")


def test_span_targets_need_overlap():
    target = RelevantSpan.parse({"path": "a.py", "start_line": 10, "end_line": 20})
    assert matches(res("a.py", 15, 30), target)
    assert matches(res("a.py", 1, 10), target)  # touches the first line
    assert matches(res("a.py", 20, 25), target)  # touches the last line
    assert not matches(res("a.py", 21, 30), target)
    assert not matches(res("a.py", 1, 9), target)
    assert matches(res("a.py", 100, 200, kind="file"), target)  # a file result matches on the path
    assert not matches(res("b.py", 15, 16), target)
    assert matches(res("pkg/a.py", 40, 50), RelevantSpan.parse("a.py"))  # a file target matches any lines


def test_ndcg_mrr_precision_recall_hand_computed():
    results = [res("x.py"), res("a.py"), res("y.py"), res("b.py")]
    targets = [RelevantSpan("a.py"), RelevantSpan("b.py")]
    assert target_ranks(results, targets, 10) == [2, 4]
    ideal = 1 + 1 / math.log2(3)
    assert ndcg_at(results, targets, 10) == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)
    assert mrr_at(results, targets, 10) == pytest.approx(0.5)
    assert precision_at(results, targets, 5) == pytest.approx(2 / 5)
    assert recall_at(results, targets, 10) == pytest.approx(1.0)
    assert recall_at(results, targets, 3) == pytest.approx(0.5)  # b.py is at 4
    assert ndcg_at(results[1:2] + results[3:], targets, 10) == pytest.approx(1.0)  # both at the top


def test_metrics_with_no_match_or_no_results():
    targets = [RelevantSpan("a.py")]
    assert ndcg_at([res("z.py")], targets) == 0.0
    assert mrr_at([res("z.py")], targets) == 0.0
    assert precision_at([], targets) == 0.0
    assert recall_at([], targets) == 0.0
    assert ndcg_at([res("a.py")], []) == 0.0


def test_metrics_dedupe_by_path_first_occurrence():
    results = [res("a.py", 1, 5), res("a.py", 10, 20), res("b.py")]
    assert [r["start_line"] for r in dedupe_by_path(results)] == [1, 1]
    # b.py counts at rank 2, not 3
    assert target_ranks(results, [RelevantSpan("b.py")], 10) == [2]
    assert mrr_at(results, [RelevantSpan("b.py")]) == pytest.approx(0.5)
    # the second chunk of a.py is gone after deduping: the span target is not found
    assert target_ranks(results, [RelevantSpan("a.py", 10, 20)], 10) == [None]
    assert precision_at(results, [RelevantSpan("a.py"), RelevantSpan("b.py")], 5) == pytest.approx(2 / 5)


def test_a_position_is_credited_once():
    results = [res("a.py", 1, 50), res("z.py")]
    targets = [RelevantSpan("a.py", 1, 10), RelevantSpan("a.py", 20, 30)]
    assert target_ranks(results, targets, 10) == [1, None]
    assert ndcg_at(results, targets, 10) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert recall_at(results, targets, 10) == pytest.approx(0.5)
    assert mrr_at(results, targets, 10) == pytest.approx(1.0)


def test_score_query_merges_relevant_and_secondary():
    results = [res("pkg/inventory.py", 60, 70), res("pkg/config.py")]
    scores = score_query(results, [{"path": "inventory.py", "start_line": 64, "end_line": 67}], ["config.py"])
    assert set(scores) == {"ndcg@10", "mrr@10", "p@5", "recall@10"}
    assert scores["ndcg@10"] == pytest.approx(1.0)
    assert scores["mrr@10"] == pytest.approx(1.0)
    assert scores["p@5"] == pytest.approx(2 / 5)
    assert scores["recall@10"] == pytest.approx(1.0)
