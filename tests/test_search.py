"""Unit tests of the search pipeline's pure parts: fusion, ranking, file aggregation, tokens, metrics."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codesearch.analysis.tokens import identifier_terms, looks_like_symbol, query_terms, split_identifier
from codesearch.eval.metrics import (
    Target,
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
from codesearch.model import Chunk
from codesearch.search.fusion import weighted_rrf
from codesearch.search.ranking import AGGREGATIONS, Ranked, RankingOptions, aggregate_files, rank

# --- helpers ---------------------------------------------------------------------------------

def chunk(cid: str, *, path: str = "src/mod.py", kind: str = "function", name: str | None = None,
          qualified_name: str | None = None, parent_id: str | None = None, part: int = 1,
          language: str = "python") -> Chunk:
    name = cid if name is None else name
    return Chunk(id=cid, parent_id=parent_id, path=path, language=language, kind=kind, name=name,
                 qualified_name=qualified_name or name, signature="", docstring="", start_line=1, end_line=2,
                 content_hash=cid, header="", text=f"def {name}(): pass\n", part=part)


def only(**step) -> RankingOptions:
    """Ranking with every step off except the named ones."""
    options = RankingOptions.off()
    for key, value in step.items():
        setattr(options, key, value)
    return options


def ids(ranked: list[Ranked]) -> list[str]:
    return [r.chunk.id for r in ranked]


def scores_of(ranked: list[Ranked]) -> dict[str, float]:
    return {r.chunk.id: r.score for r in ranked}


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


# --- file aggregation ------------------------------------------------------------------------

@pytest.fixture
def per_file_items() -> list[Ranked]:
    """Positions 1..6: a1 1.0, b1 0.9, a2 0.5, a3 0.4, a4 0.2, c1 0.1."""
    spec = [("a1", "a.py", 1.0), ("b1", "b.py", 0.9), ("a2", "a.py", 0.5), ("a3", "a.py", 0.4),
            ("a4", "a.py", 0.2), ("c1", "c.py", 0.1)]
    return [Ranked(chunk(cid, path=path), score) for cid, path, score in spec]


@pytest.mark.parametrize("method, expected", [
    ("max_p", [("a.py", 1.0), ("b.py", 0.9), ("c.py", 0.1)]),
    ("top_m_sum", [("a.py", 1.9), ("b.py", 0.9), ("c.py", 0.1)]),
    ("top_m_avg", [("b.py", 0.9), ("a.py", 1.9 / 3), ("c.py", 0.1)]),
    ("rrf_per_doc", [("a.py", 1 / 61 + 1 / 63 + 1 / 64 + 1 / 65), ("b.py", 1 / 62), ("c.py", 1 / 66)]),
    ("weighted_top", [("a.py", 1.0 + 0.25 + 0.1 + 0.025), ("b.py", 0.9), ("c.py", 0.1)]),
])
def test_aggregate_files_known_answers(per_file_items, method, expected):
    out = aggregate_files(per_file_items, method, m=3, k=60, decay=0.5, top_l=5)
    assert [(r.chunk.path, agg) for r, agg in out] == [(p, pytest.approx(s)) for p, s in expected]
    best = {r.chunk.path: r.chunk.id for r, _ in out}
    assert best == {"a.py": "a1", "b.py": "b1", "c.py": "c1"}


def test_aggregate_files_top_l_and_m_cut(per_file_items):
    out = {r.chunk.path: agg for r, agg in aggregate_files(per_file_items, "weighted_top", decay=0.5, top_l=2)}
    assert out["a.py"] == pytest.approx(1.0 + 0.25)
    out = {r.chunk.path: agg for r, agg in aggregate_files(per_file_items, "top_m_sum", m=1)}
    assert out["a.py"] == pytest.approx(1.0)


def test_aggregate_files_covers_every_method():
    assert set(AGGREGATIONS) == {"max_p", "top_m_sum", "top_m_avg", "rrf_per_doc", "weighted_top"}
    assert aggregate_files([], "max_p") == []


def test_aggregate_files_unknown_method_raises(per_file_items):
    with pytest.raises(ValueError, match="unknown aggregation"):
        aggregate_files(per_file_items, "mean_of_everything")


# --- ranking: symbol boost -------------------------------------------------------------------

def test_all_steps_off_keeps_fused_order_and_scores():
    fused = [(chunk("a"), 0.3), (chunk("b"), 0.2), (chunk("c", path="tests/test_x.py"), 0.1)]
    out = rank("anything at all", fused, RankingOptions.off())
    assert ids(out) == ["a", "b", "c"]
    assert [r.score for r in out] == [0.3, 0.2, 0.1]


def test_symbol_boost_puts_named_definition_first():
    fused = [(chunk("other", name="load_settings"), 0.05), (chunk("usage", kind="block", name="parse_config"), 0.04),
             (chunk("def", name="parse_config"), 0.01)]
    out = rank("parse_config", fused, only(symbol_boost=True))
    assert ids(out)[0] == "def"
    assert "defines the symbol" in out[0].notes
    # a block named like the symbol is no definition: not boosted
    assert scores_of(out)["usage"] == 0.04


def test_symbol_boost_types_above_functions_and_exact_case_above_other_case():
    fused = [(chunk("fn_case", name="inventory"), 0.02), (chunk("fn", name="Inventory"), 0.02),
             (chunk("cls", kind="class", name="Inventory"), 0.02), (chunk("unrelated", name="total"), 0.02)]
    out = rank("Inventory", fused, only(symbol_boost=True))
    assert ids(out) == ["cls", "fn", "fn_case", "unrelated"]
    assert out[2].notes == ["defines the symbol (case differs)"]


def test_symbol_boost_only_for_bare_identifiers():
    fused = [(chunk("a", name="other"), 0.05), (chunk("b", name="retry"), 0.01)]
    out = rank("retry with backoff", fused, only(symbol_boost=True))
    assert ids(out) == ["a", "b"] and all(not r.notes for r in out)


def test_symbol_boost_skips_continuation_parts():
    fused = [(chunk("p1", name="parse_config"), 0.01), (chunk("p2", name="parse_config", part=2), 0.02),
             (chunk("x", name="x"), 0.05)]
    out = rank("parse_config", fused, only(symbol_boost=True))
    assert ids(out)[0] == "p1"
    assert scores_of(out)["p2"] == 0.02


def test_symbol_boost_qualified_name_wins_over_same_short_name():
    fused = [(chunk("other", kind="method", name="add_item", qualified_name="Cart.add_item"), 0.03),
             (chunk("mine", kind="method", name="add_item", qualified_name="Inventory.add_item"), 0.02)]
    for query in ("Inventory.add_item", "Inventory::add_item", "Inventory.add_item()"):
        out = rank(query, fused, only(symbol_boost=True))
        assert ids(out) == ["mine", "other"], query


def test_symbol_boost_qualified_suffix_with_double_colon():
    fused = [(chunk("other", kind="method", name="method", qualified_name="Other.method"), 0.03),
             (chunk("mine", kind="method", name="method", qualified_name="outer.Inner.method"), 0.02)]
    assert ids(rank("Inner.method", fused, only(symbol_boost=True))) == ["mine", "other"]  # control
    assert ids(rank("Inner::method", fused, only(symbol_boost=True))) == ["mine", "other"]


def test_symbol_boost_exact_case_above_other_case_whatever_the_fused_scores():
    fused = [(chunk("case", name="ComputeBackoff"), 0.016), (chunk("exact", name="computeBackoff"), 0.005)]
    assert ids(rank("computeBackoff", fused, only(symbol_boost=True))) == ["exact", "case"]


def test_symbol_boost_type_above_same_named_function_whatever_the_fused_scores():
    fused = [(chunk("fn", name="Inventory"), 0.016), (chunk("cls", kind="class", name="Inventory"), 0.005)]
    assert ids(rank("Inventory", fused, only(symbol_boost=True))) == ["cls", "fn"]


# --- ranking: name/path boost ----------------------------------------------------------------

def test_name_path_boost_factors():
    fused = [(chunk("plain", path="src/util.py", name="helper"), 0.10),
             (chunk("in_path", path="src/config.py", name="helper2"), 0.10),
             (chunk("in_both", path="src/config.py", name="parse_config"), 0.10),
             (chunk("block", path="src/other.py", kind="block", name="parse_config"), 0.10)]
    out = scores_of(rank("how do we parse the config", fused, only(name_path_boost=True)))
    assert out["plain"] == pytest.approx(0.10)
    assert out["in_path"] == pytest.approx(0.10 * 1.3)  # 'config' in the file name
    assert out["in_both"] == pytest.approx(0.10 * (1 + 0.3 + 0.15 * 2))  # + 'parse', 'config' in the name
    assert out["block"] == pytest.approx(0.10)  # names of non-definitions do not count


def test_name_path_boost_reorders_and_notes():
    fused = [(chunk("a", path="src/util.py", name="helper"), 0.11),
             (chunk("b", path="src/backoff.py", name="compute_backoff"), 0.10)]
    out = rank("backoff", fused, only(name_path_boost=True))
    assert ids(out) == ["b", "a"]
    assert out[0].notes and out[0].notes[0].startswith("name/path match")


def test_name_path_boost_ignores_stopwords_and_short_words():
    fused = [(chunk("a", path="src/the/to.py", name="of"), 0.1)]
    out = rank("the to of", fused, only(name_path_boost=True))
    assert out[0].score == 0.1 and not out[0].notes


# --- ranking: test / example / vendor penalty ------------------------------------------------

@pytest.mark.parametrize("path", ["tests/test_inventory.py", "src/inventory_test.go", "web/app.spec.ts",
                                  "src/InventoryTest.java", "examples/demo.py", "vendor/lib/x.go",
                                  "node_modules/pkg/index.js", "conftest.py", "pkg/testdata/a.txt"])
def test_test_penalty_applies(path):
    fused = [(chunk("t", path=path), 0.2), (chunk("src", path="src/inventory.py"), 0.15)]
    out = rank("inventory total value", fused, only(test_penalty=True))
    assert ids(out) == ["src", "t"]
    assert scores_of(out)["t"] == pytest.approx(0.2 * 0.5)
    assert scores_of(out)["src"] == 0.15


@pytest.mark.parametrize("query", ["tests for inventory total", "inventory test", "example of backoff",
                                   "vendor clamp"])
def test_test_penalty_exempt_when_query_mentions_tests(query):
    fused = [(chunk("t", path="tests/test_inventory.py"), 0.2), (chunk("src", path="src/inventory.py"), 0.15)]
    out = rank(query, fused, only(test_penalty=True))
    assert ids(out) == ["t", "src"]
    assert scores_of(out)["t"] == 0.2


def test_test_penalty_factor_is_configurable():
    opts = only(test_penalty=True)
    opts.test_factor = 0.25
    out = rank("inventory", [(chunk("t", path="tests/a.py"), 0.4)], opts)
    assert out[0].score == pytest.approx(0.1)


@pytest.mark.parametrize("path", ["src/latest.py", "app/contest.py", "pkg/greatest.go"])
def test_test_penalty_spares_words_ending_in_test(path):
    fused = [(chunk("t", path=path), 0.2)]
    assert rank("inventory", fused, only(test_penalty=True))[0].score == 0.2


def test_test_penalty_spares_java_package_com_example():
    path = "src/main/java/com/example/inventory/Inventory.java"
    fused = [(chunk("t", path=path, language="java"), 0.2)]
    assert rank("inventory", fused, only(test_penalty=True))[0].score == 0.2


# --- ranking: parent/child dedupe ------------------------------------------------------------

def test_dedupe_demotes_child_of_higher_parent():
    fused = [(chunk("cls", kind="class", name="Inventory"), 1.0),
             (chunk("m", kind="method", name="add_item", parent_id="cls"), 0.8),
             (chunk("x", path="src/other.py"), 0.5)]
    out = rank("inventory", fused, only(parent_child_dedupe=True))
    assert ids(out) == ["cls", "x", "m"]  # demoted, not dropped
    assert scores_of(out)["m"] == pytest.approx(0.4)
    assert out[-1].notes == ["parent or child ranked higher"]


def test_dedupe_demotes_parent_of_higher_child():
    fused = [(chunk("m", kind="method", name="add_item", parent_id="cls"), 1.0),
             (chunk("cls", kind="class", name="Inventory"), 0.8),
             (chunk("x", path="src/other.py"), 0.5)]
    out = rank("inventory", fused, only(parent_child_dedupe=True))
    assert ids(out) == ["m", "x", "cls"]
    assert scores_of(out)["cls"] == pytest.approx(0.4)


def test_dedupe_keeps_siblings():
    fused = [(chunk("m1", kind="method", parent_id="cls"), 1.0), (chunk("m2", kind="method", parent_id="cls"), 0.9),
             (chunk("cls", kind="class"), 0.8)]
    out = rank("inventory", fused, only(parent_child_dedupe=True))
    assert ids(out) == ["m1", "m2", "cls"]
    assert scores_of(out) == {"m1": 1.0, "m2": 0.9, "cls": pytest.approx(0.4)}


# --- ranking: per-file diminishing returns ---------------------------------------------------

def test_per_file_diminishing_returns():
    fused = [(chunk("a1", path="a.py"), 1.0), (chunk("a2", path="a.py"), 0.9), (chunk("a3", path="a.py"), 0.8),
             (chunk("b1", path="b.py"), 0.6)]
    out = rank("inventory", fused, only(file_diminishing=True))
    assert ids(out) == ["a1", "a2", "b1", "a3"]
    assert scores_of(out) == {"a1": 1.0, "a2": pytest.approx(0.63), "a3": pytest.approx(0.8 * 0.49), "b1": 0.6}
    assert out[1].notes == ["chunk 2 of its file x0.70"]


def test_per_file_decay_is_configurable():
    opts = only(file_diminishing=True)
    opts.file_decay = 0.5
    out = rank("q", [(chunk("a1", path="a.py"), 1.0), (chunk("a2", path="a.py"), 1.0)], opts)
    assert [r.score for r in out] == [1.0, 0.5]


# --- tokens ----------------------------------------------------------------------------------

@pytest.mark.parametrize("word, parts", [
    ("getHTTPResponse2", ["get", "http", "response", "2"]),
    ("parse_config", ["parse", "config"]),
    ("XMLHttpRequest", ["xml", "http", "request"]),
    ("computeBackoff", ["compute", "backoff"]),
    ("ComputeBackoff", ["compute", "backoff"]),
    ("MAX_ITEMS", ["max", "items"]),
    ("$scope", ["scope"]),
    ("__init__", ["init"]),
    ("value", ["value"]),
])
def test_split_identifier(word, parts):
    assert split_identifier(word) == parts


def test_identifier_terms():
    assert identifier_terms("parse_config") == ["parseconfig", "parse", "config"]
    assert identifier_terms("getHTTPResponse") == ["gethttpresponse", "get", "http", "response"]
    assert identifier_terms("value") == ["value"]
    assert identifier_terms("ComputeBackoff") == identifier_terms("compute_backoff")
    long = "_".join(["part"] * 20)  # whole term longer than 64 characters: parts only, at most 8
    assert identifier_terms(long) == ["part"] * 8


def test_query_terms_drop_stopwords_and_split():
    assert query_terms("who calls parse_config") == ["calls", "parseconfig", "parse", "config"]
    assert query_terms("where are the retries with backoff handled") == ["retries", "backoff", "handled"]
    assert query_terms("parse parse_config") == ["parse", "parseconfig", "config"]  # distinct, in order
    assert query_terms("The") == ["the"]  # a lone stopword is kept: it is the whole query
    assert query_terms("the of", drop_stopwords=False) == ["the", "of"]
    assert query_terms("") == []


@pytest.mark.parametrize("query, expected", [
    ("HTTPException", True), ("parse_config", True), ("Foo.bar", True), ("ns::f", True), ("obj->method", True),
    ("Klass#method", True), ("compute_backoff()", True), ("  computeBackoff  ", True), ("$el", True),
    ("retry delay", False), ("", False), ("   ", False), ("1abc", False), ("foo-bar", False), ("foo(", False),
    ("who calls parse_config", False),
])
def test_looks_like_symbol(query, expected):
    assert looks_like_symbol(query) is expected


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
    target = Target.parse({"path": "a.py", "start_line": 10, "end_line": 20})
    assert matches(res("a.py", 15, 30), target)
    assert matches(res("a.py", 1, 10), target)  # touches the first line
    assert matches(res("a.py", 20, 25), target)  # touches the last line
    assert not matches(res("a.py", 21, 30), target)
    assert not matches(res("a.py", 1, 9), target)
    assert matches(res("a.py", 100, 200, kind="file"), target)  # a file result matches on the path
    assert not matches(res("b.py", 15, 16), target)
    assert matches(res("pkg/a.py", 40, 50), Target.parse("a.py"))  # a file target matches any lines


def test_ndcg_mrr_precision_recall_hand_computed():
    results = [res("x.py"), res("a.py"), res("y.py"), res("b.py")]
    targets = [Target("a.py"), Target("b.py")]
    assert target_ranks(results, targets, 10) == [2, 4]
    ideal = 1 + 1 / math.log2(3)
    assert ndcg_at(results, targets, 10) == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)
    assert mrr_at(results, targets, 10) == pytest.approx(0.5)
    assert precision_at(results, targets, 5) == pytest.approx(2 / 5)
    assert recall_at(results, targets, 10) == pytest.approx(1.0)
    assert recall_at(results, targets, 3) == pytest.approx(0.5)  # b.py is at 4
    assert ndcg_at(results[1:2] + results[3:], targets, 10) == pytest.approx(1.0)  # both at the top


def test_metrics_with_no_match_or_no_results():
    targets = [Target("a.py")]
    assert ndcg_at([res("z.py")], targets) == 0.0
    assert mrr_at([res("z.py")], targets) == 0.0
    assert precision_at([], targets) == 0.0
    assert recall_at([], targets) == 0.0
    assert ndcg_at([res("a.py")], []) == 0.0


def test_metrics_dedupe_by_path_first_occurrence():
    results = [res("a.py", 1, 5), res("a.py", 10, 20), res("b.py")]
    assert [r["start_line"] for r in dedupe_by_path(results)] == [1, 1]
    # b.py counts at rank 2, not 3
    assert target_ranks(results, [Target("b.py")], 10) == [2]
    assert mrr_at(results, [Target("b.py")]) == pytest.approx(0.5)
    # the second chunk of a.py is gone after deduping: the span target is not found
    assert target_ranks(results, [Target("a.py", 10, 20)], 10) == [None]
    assert precision_at(results, [Target("a.py"), Target("b.py")], 5) == pytest.approx(2 / 5)


def test_a_position_is_credited_once():
    results = [res("a.py", 1, 50), res("z.py")]
    targets = [Target("a.py", 1, 10), Target("a.py", 20, 30)]
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
