"""Weighted Reciprocal Rank Fusion: properties and documented examples."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codesearch.search.fusion import weighted_rrf

# --- helpers ----------------------------------------------------------------------------

def reference_rrf(lists, weights, k):
    """score(d) = sum_i w_i / (k + best rank of d in list i)."""
    out: dict = {}
    for name, ranked in lists.items():
        w = 1.0 if weights is None else weights.get(name, 1.0)
        best: dict = {}
        for rank_, item in enumerate(ranked, start=1):
            best.setdefault(item, rank_)
        for item, r in best.items():
            out[item] = out.get(item, 0.0) + w / (k + r)
    return out


# --- weighted RRF ----------------------------------------------------------------------------

NAMES = st.sampled_from(["vector", "keyword", "graph", "extra"])
LISTS = st.dictionaries(NAMES, st.lists(st.integers(0, 12), max_size=15), max_size=4)
WEIGHTS = st.one_of(st.none(), st.dictionaries(NAMES, st.floats(0.01, 10.0), max_size=4))
KS = st.one_of(st.just(60.0), st.floats(0.0, 500.0))


@settings(max_examples=200, deadline=None)
@given(LISTS, WEIGHTS, KS)
def test_rrf_output_is_the_union_of_inputs(lists, weights, k):
    fused = weighted_rrf(lists, weights, k)
    items = [item for item, _ in fused]
    assert len(items) == len(set(items)), "an item appears once in the output"
    assert set(items) == {item for ranked in lists.values() for item in ranked}


@settings(max_examples=200, deadline=None)
@given(LISTS, WEIGHTS, KS)
def test_rrf_scores_sorted_descending(lists, weights, k):
    scores = [score for _, score in weighted_rrf(lists, weights, k)]
    assert all(a >= b for a, b in zip(scores, scores[1:]))


@settings(max_examples=200, deadline=None)
@given(LISTS, WEIGHTS, KS)
def test_rrf_score_formula_exact(lists, weights, k):
    """sum of w_i / (k + rank_i), ranks 1-based; a missing weight counts 1; duplicates at their best rank."""
    fused = dict(weighted_rrf(lists, weights, k))
    expected = reference_rrf(lists, weights, k)
    assert fused.keys() == expected.keys()
    for item, score in fused.items():
        assert math.isclose(score, expected[item], rel_tol=1e-12), (item, score, expected[item])


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 10), st.integers(0, 3), st.integers(1, 4), st.sampled_from([0.0, 1.0, 60.0]))
def test_rrf_same_rank_in_more_lists_scores_higher(rank_, in_fewer, extra, k):
    """Equal weights: d at rank r in more lists beats e at the same rank r in fewer lists."""
    in_more = in_fewer + extra
    lists = {}
    for i in range(in_more):  # d at rank r, fillers elsewhere
        lists[f"d{i}"] = [f"f{i}_{j}" for j in range(rank_ - 1)] + ["d"] + [f"g{i}"]
    for i in range(in_fewer):
        lists[f"e{i}"] = [f"h{i}_{j}" for j in range(rank_ - 1)] + ["e"]
    if in_fewer == 0:
        lists["e0"] = [f"h_{j}" for j in range(rank_ + 3)] + ["e"]  # e present, but further down
    fused = dict(weighted_rrf(lists, dict.fromkeys(lists, 2.0), k))
    assert fused["d"] > fused["e"]


@settings(max_examples=100, deadline=None)
@given(LISTS, st.lists(st.integers(100, 110), max_size=6), WEIGHTS, KS)
def test_rrf_list_lacking_item_adds_nothing(lists, other, weights, k):
    before = dict(weighted_rrf(lists, weights, k))
    after = dict(weighted_rrf({**lists, "unrelated": other}, weights, k))
    for item, score in before.items():
        assert after[item] == pytest.approx(score, rel=1e-12)


@settings(max_examples=100, deadline=None)
@given(LISTS, KS)
def test_rrf_missing_weight_counts_one(lists, k):
    none = weighted_rrf(lists, None, k)
    empty = weighted_rrf(lists, {}, k)
    ones = weighted_rrf(lists, dict.fromkeys(lists, 1.0), k)
    assert none == empty == ones


def test_rrf_weights_and_k_as_documented():
    lists = {"vector": ["a", "b"], "keyword": ["b", "c"]}
    fused = dict(weighted_rrf(lists, {"vector": 2.0}, k=10))
    assert fused["a"] == pytest.approx(2.0 / 11)
    assert fused["b"] == pytest.approx(2.0 / 12 + 1.0 / 11)
    assert fused["c"] == pytest.approx(1.0 / 12)
    assert dict(weighted_rrf(lists, k=0))["a"] == pytest.approx(1.0)


def test_rrf_duplicates_in_one_list_count_once_at_best_rank():
    fused = dict(weighted_rrf({"a": ["x", "y", "x", "x"]}, k=60))
    assert fused == {"x": pytest.approx(1 / 61), "y": pytest.approx(1 / 62)}


def test_rrf_ties_keep_first_seen_order():
    fused = weighted_rrf({"a": ["x", "y"], "b": ["y", "x"]})
    assert [item for item, _ in fused] == ["x", "y"]
    assert fused[0][1] == fused[1][1]


def test_rrf_empty_input():
    assert weighted_rrf({}) == []
    assert weighted_rrf({"a": []}) == []


@pytest.mark.parametrize("k", [-1, -0.001, -60])
def test_rrf_negative_k_raises(k):
    with pytest.raises(ValueError):
        weighted_rrf({"a": ["x"]}, k=k)
