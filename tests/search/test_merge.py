"""`merge` (search/merge.py): hand-computed scores, boosts, duplicates, and every bad input;
properties of the fusion it shares with the searcher (search/fusion.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codesearch.search.fusion import fuse
from codesearch.search.merge import MergeInputError, merge, parse_boosts, parse_lists, read_lists


def _lists(*pairs):
    return parse_lists([{"source": s, "results": [{"id": i} if not isinstance(i, dict) else i for i in ids]}
                        for s, ids in pairs])


def test_the_design_example():
    """k = 60: rank 0 in docs and rank 2 in memory -> 1/60 + 1/62; docs boosted 1.2."""
    answer = merge(_lists(("docs", ["a", "b"]), ("memory", ["x", "y", "a"])), {"docs": 1.2})
    top = answer["merged_results"][0]
    assert top["id"] == "a" and top["source"] == "docs"
    assert top["fused_score"] == pytest.approx(1 / 60 + 1 / 62) == pytest.approx(0.0328, abs=5e-5)
    assert top["boosted_score"] == pytest.approx((1 / 60 + 1 / 62) * 1.2) == pytest.approx(0.0394, abs=5e-5)
    assert top["sources"] == [{"source": "docs", "rank": 0, "rrf_score": pytest.approx(1 / 60)},
                              {"source": "memory", "rank": 2, "rrf_score": pytest.approx(1 / 62)}]
    assert answer["count"] == 4 and answer["boosts"] == {"docs": 1.2}
    assert isinstance(answer["timing_ms"], float)


def test_hand_computed_order_with_boosts_and_k():
    """k = 10. docs: a b c; web: c d. Unboosted: c = 1/12 + 1/10 first. web boosted 0.5:
    c (first seen in docs) keeps its boost 1; d = 0.5/11 falls below b = 1/11."""
    lists = _lists(("docs", ["a", "b", "c"]), ("web", ["c", "d"]))
    plain = merge(lists, k=10)
    assert [(r["id"], round(r["boosted_score"], 6)) for r in plain["merged_results"]] == [
        ("c", round(1 / 12 + 1 / 10, 6)), ("a", round(1 / 10, 6)), ("b", round(1 / 11, 6)), ("d", round(1 / 11, 6))]
    boosted = merge(lists, {"web": 0.5, "docs": 1.0}, k=10)
    assert [r["id"] for r in boosted["merged_results"]] == ["c", "a", "b", "d"]
    assert boosted["merged_results"][3]["boosted_score"] == pytest.approx(0.5 / 11)
    lifted = merge(lists, {"web": 3.0}, k=10)
    assert [r["id"] for r in lifted["merged_results"]] == ["d", "c", "a", "b"]  # d: 3/11 > c: 0.1833


def test_duplicates_keep_the_first_occurrence_fields_and_one_rank_per_source():
    lists = _lists(("a", [{"id": 7, "title": "first"}, {"id": "7"}, {"id": 7, "title": "again"}]),
                   ("b", [{"id": 7, "title": "other"}]))
    results = merge(lists)["merged_results"]
    seven = next(r for r in results if r["id"] == 7)
    assert seven["title"] == "first" and seven["source"] == "a"
    assert [(s["source"], s["rank"]) for s in seven["sources"]] == [("a", 0), ("b", 0)]
    assert any(r["id"] == "7" for r in results), "the string '7' is another id than the number 7"
    assert len(results) == 2


def test_limit_and_empty_input():
    lists = _lists(("a", ["x", "y", "z"]))
    assert [r["id"] for r in merge(lists, limit=2)["merged_results"]] == ["x", "y"]
    assert merge(lists, limit=2)["count"] == 2
    assert merge([])["merged_results"] == [] and merge([])["count"] == 0


@pytest.mark.parametrize(("data", "words"), [
    ({"source": "a"}, "JSON array"),
    ("text", "JSON array"),
    ([1], "list 0 must be an object"),
    ([{"results": []}], "\"source\""),
    ([{"source": "", "results": []}], "\"source\""),
    ([{"source": "a"}], "\"results\""),
    ([{"source": "a", "results": {}}], "\"results\""),
    ([{"source": "a", "results": [1]}], "result 0 must be an object"),
    ([{"source": "a", "results": [{"name": "x"}]}], "has no \"id\""),
    ([{"source": "a", "results": [{"id": 1.5}]}], "a string or an integer"),
    ([{"source": "a", "results": [{"id": True}]}], "a string or an integer"),
    ([{"source": "a", "results": [{"id": None}]}], "has no \"id\""),
    ([{"source": "a", "results": []}, {"source": "a", "results": []}], "appears twice"),
])
def test_bad_lists(data, words):
    with pytest.raises(MergeInputError, match=words.replace("\"", ".")):
        parse_lists(data)


@pytest.mark.parametrize("text", ["docs", "docs:", ":1.2", "docs:x", "docs:-1", "docs:nan", "docs:inf", "docs=1",
                                  "docs:1e300"])
def test_bad_boosts(text):
    with pytest.raises(MergeInputError, match="bad boost"):
        parse_boosts(text)


def test_boosts_parse():
    assert parse_boosts("docs:1.2, memory:0.8,") == {"docs": 1.2, "memory": 0.8}
    assert parse_boosts("ns:x:2") == {"ns:x": 2.0}  # the last colon separates the weight
    assert parse_boosts(None) == {} and parse_boosts("docs:0") == {"docs": 0.0}


@pytest.mark.parametrize(("k", "limit"), [(0, None), (-1, None), (float("nan"), None), (60, 0), (60, -3),
                                          (1e-320, None), (1e7, None), (float("inf"), None)])
def test_bad_k_and_limit(k, limit):
    with pytest.raises(MergeInputError):
        merge(_lists(("a", ["x"])), k=k, limit=limit)


# --- properties of the fusion, as merge uses it (0-based ranks, boosts on the first source) ------

SOURCES = st.sampled_from(["docs", "memory", "web", "code"])
LISTS = st.dictionaries(SOURCES, st.lists(st.integers(0, 15), max_size=12), max_size=4)
BOOSTS = st.dictionaries(SOURCES, st.floats(0.0, 5.0), max_size=4)
KS = st.one_of(st.just(60.0), st.floats(0.5, 200.0))


@settings(max_examples=200, deadline=None)
@given(LISTS, BOOSTS, KS)
def test_output_is_the_union_of_the_inputs_and_sorted(lists, boosts, k):
    fused = fuse(lists, boosts=boosts, k=k, first_rank=0)
    items = [f.item for f in fused]
    assert len(items) == len(set(items))
    assert set(items) == {i for ranked in lists.values() for i in ranked}
    scores = [f.score for f in fused]
    assert all(a >= b for a, b in zip(scores, scores[1:]))
    for f in fused:
        assert f.fused == pytest.approx(sum(1 / (k + rank) for _, rank, _ in f.ranks), rel=1e-12)
        assert f.score == pytest.approx(f.fused * boosts.get(f.source, 1.0), rel=1e-12)
        assert f.source == next(name for name, ranked in lists.items() if f.item in ranked)


@settings(max_examples=200, deadline=None)
@given(LISTS, BOOSTS, KS, SOURCES, st.floats(1.0, 10.0))
def test_a_boost_above_one_never_lowers_a_sources_results(lists, boosts, k, source, factor):
    before = fuse(lists, boosts=boosts, k=k, first_rank=0)
    raised = {**boosts, source: boosts.get(source, 1.0) * factor}
    after = fuse(lists, boosts=raised, k=k, first_rank=0)
    place = {f.item: i for i, f in enumerate(after)}
    for i, f in enumerate(before):
        if f.source == source:
            assert place[f.item] <= i, (f.item, i, place[f.item])
            assert after[place[f.item]].score >= f.score


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["id", "n"]), st.integers(0, 9)), max_size=10))
def test_merge_never_fails_on_lists_whose_results_all_have_ids(results):
    data = [{"source": "a", "results": [r for r in results if "id" in r]}]
    answer = merge(parse_lists(data))
    assert answer["count"] == len({r["id"] for r in data[0]["results"]})


@pytest.mark.parametrize(("text", "words"), [
    ('[{"source": "a", "results": [{"id": "x", "score": NaN}]}]', "holds NaN"),
    ('[{"source": "a", "results": [{"id": "x", "score": Infinity}]}]', "holds Infinity"),
    ('[{"source": "a", "results": [{"id": "x", "score": -Infinity}]}]', "holds -Infinity"),
    ('[{"source": "a", "results": [{"id": "x", "score": 1e999}]}]', "the number 1e999"),
    ("[" * 100_000 + "]" * 100_000, "nests deeper than 32"),  # past json's own recursion limit
    ("[" * 33 + "]" * 33, "nests deeper than 32"),
    ("", "empty"),
    ("[1", "not JSON"),
    ('[{"source": "\\ud800", "results": []}]', "not valid UTF-8"),  # could not be printed back
    ('[{"source": "a", "results": [{"id": "x", "t\udcff": 1}]}]', "not valid UTF-8"),  # stdin's byte 0xff
    ('[{"source": "a", "results": [{"id": "x\\u0000"}]}]', "NUL"),
])
def test_bad_input_text_is_one_line(text, words):
    """Whatever the input, the answer is valid JSON or one line: json.loads takes NaN, Infinity
    and 1e999 (as inf) and json.dumps would write them back, which no JSON reader takes."""
    with pytest.raises(MergeInputError, match=words) as caught:
        read_lists(text)
    assert "\n" not in str(caught.value)


def test_input_text_within_the_limits_is_read():
    nested = {"id": "x", "meta": [[[1.5]]]}
    lists = read_lists(json.dumps([{"source": "a", "results": [nested]}]))
    assert lists[0].results == (nested,)
