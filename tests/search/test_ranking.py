"""The ranking stage after fusion, step by step, and file aggregation."""

from __future__ import annotations

import pytest

from codesearch.model import Chunk
from codesearch.search.query import Query
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
    """Ranking with every step off except the named ones (and the named strengths set)."""
    options = RankingOptions.off()
    for key, value in step.items():
        setattr(options, key, value)
    return options


def ids(ranked: list[Ranked]) -> list[str]:
    return [r.chunk.id for r in ranked]


def scores_of(ranked: list[Ranked]) -> dict[str, float]:
    return {r.chunk.id: r.score for r in ranked}


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
    out = rank(Query.parse("anything at all"), fused, RankingOptions.off())
    assert ids(out) == ["a", "b", "c"]
    assert [r.score for r in out] == [0.3, 0.2, 0.1]


def test_symbol_boost_puts_named_definition_first():
    fused = [(chunk("other", name="load_settings"), 0.05), (chunk("usage", kind="block", name="parse_config"), 0.04),
             (chunk("def", name="parse_config"), 0.01)]
    out = rank(Query.parse("parse_config"), fused, only(symbol_boost=True))
    assert ids(out)[0] == "def"
    assert "defines the symbol" in out[0].notes
    # a block named like the symbol is no definition: not boosted
    assert scores_of(out)["usage"] == 0.04


def test_symbol_boost_types_above_functions_and_exact_case_above_other_case():
    fused = [(chunk("fn_case", name="inventory"), 0.02), (chunk("fn", name="Inventory"), 0.02),
             (chunk("cls", kind="class", name="Inventory"), 0.02), (chunk("unrelated", name="total"), 0.02)]
    out = rank(Query.parse("Inventory"), fused, only(symbol_boost=True))
    assert ids(out) == ["cls", "fn", "fn_case", "unrelated"]
    assert out[2].notes == ["defines the symbol (case differs)"]


def test_symbol_boost_only_for_bare_identifiers():
    fused = [(chunk("a", name="other"), 0.05), (chunk("b", name="retry"), 0.01)]
    out = rank(Query.parse("retry with backoff"), fused, only(symbol_boost=True))
    assert ids(out) == ["a", "b"] and all(not r.notes for r in out)


def test_symbol_boost_skips_continuation_parts():
    fused = [(chunk("p1", name="parse_config"), 0.01), (chunk("p2", name="parse_config", part=2), 0.02),
             (chunk("x", name="x"), 0.05)]
    out = rank(Query.parse("parse_config"), fused, only(symbol_boost=True))
    assert ids(out)[0] == "p1"
    assert scores_of(out)["p2"] == 0.02


def test_symbol_boost_qualified_name_wins_over_same_short_name():
    fused = [(chunk("other", kind="method", name="add_item", qualified_name="Cart.add_item"), 0.03),
             (chunk("mine", kind="method", name="add_item", qualified_name="Inventory.add_item"), 0.02)]
    for query in ("Inventory.add_item", "Inventory::add_item", "Inventory.add_item()"):
        out = rank(Query.parse(query), fused, only(symbol_boost=True))
        assert ids(out) == ["mine", "other"], query


def test_symbol_boost_qualified_suffix_with_double_colon():
    fused = [(chunk("other", kind="method", name="method", qualified_name="Other.method"), 0.03),
             (chunk("mine", kind="method", name="method", qualified_name="outer.Inner.method"), 0.02)]
    assert ids(rank(Query.parse("Inner.method"), fused, only(symbol_boost=True))) == ["mine", "other"]  # control
    assert ids(rank(Query.parse("Inner::method"), fused, only(symbol_boost=True))) == ["mine", "other"]


def test_symbol_boost_exact_case_above_other_case_whatever_the_fused_scores():
    fused = [(chunk("case", name="ComputeBackoff"), 0.016), (chunk("exact", name="computeBackoff"), 0.005)]
    assert ids(rank(Query.parse("computeBackoff"), fused, only(symbol_boost=True))) == ["exact", "case"]


@pytest.mark.parametrize("query, name", [("get_user", "getUser"), ("GetUser", "get_user"), ("ZodType", "$ZodType"),
                                         ("parseConfig", "parse_config")])
def test_symbol_boost_finds_the_name_with_other_case_or_separators(query, name):
    fused = [(chunk("other", name="unrelated"), 0.05), (chunk("def", name=name), 0.01)]
    out = rank(Query.parse(query), fused, only(symbol_boost=True))
    assert ids(out) == ["def", "other"] and out[0].notes == ["defines the symbol (case differs)"]


def test_symbol_boost_ignores_template_arguments_in_a_name():
    fused = [(chunk("other", name="formatter_base"), 0.05),
             (chunk("spec", kind="struct", name="formatter<T, Char>"), 0.01)]
    out = rank(Query.parse("formatter"), fused, only(symbol_boost=True))
    assert ids(out) == ["spec", "other"] and out[0].notes == ["defines the symbol"]


def test_symbol_boost_puts_a_test_definition_below_the_real_one():
    fused = [(chunk("fake", kind="class", name="Conn", path="adapters/test/conn.ex"), 0.05),
             (chunk("real", kind="class", name="Conn", path="lib/plug/conn_impl.ex"), 0.01)]
    assert ids(rank(Query.parse("Conn"), fused, only(symbol_boost=True))) == ["real", "fake"]
    assert ids(rank(Query.parse("Conn"), fused, only(symbol_boost=True, symbol_test_demotion=0.0))) == ["fake", "real"]


def test_symbol_boost_prefers_the_file_named_after_the_symbol():
    fused = [(chunk("part", kind="class", name="SqlMapper", path="SqlMapper.Async.cs"), 0.05),
             (chunk("main", kind="class", name="SqlMapper", path="SqlMapper.cs"), 0.01)]
    assert ids(rank(Query.parse("SqlMapper"), fused, only(symbol_boost=True))) == ["main", "part"]
    unbonused = only(symbol_boost=True, symbol_stem_bonus=0.0)
    assert ids(rank(Query.parse("SqlMapper"), fused, unbonused)) == ["part", "main"]


def test_symbol_boost_type_above_same_named_function_whatever_the_fused_scores():
    fused = [(chunk("fn", name="Inventory"), 0.016), (chunk("cls", kind="class", name="Inventory"), 0.005)]
    assert ids(rank(Query.parse("Inventory"), fused, only(symbol_boost=True))) == ["cls", "fn"]


# --- ranking: name/path boost ----------------------------------------------------------------

def test_name_path_boost_factors():
    fused = [(chunk("plain", path="src/util.py", name="helper"), 0.10),
             (chunk("in_path", path="src/config.py", name="helper2"), 0.10),
             (chunk("in_both", path="src/config.py", name="parse_config"), 0.10),
             (chunk("block", path="src/other.py", kind="block", name="parse_config"), 0.10)]
    out = scores_of(rank(Query.parse("how do we parse the config"), fused, only(name_path_boost=True, word_decay=1.0)))
    assert out["plain"] == pytest.approx(0.10)
    assert out["in_path"] == pytest.approx(0.10 * 1.3)  # 'config' in the file name
    assert out["in_both"] == pytest.approx(0.10 * (1 + 0.3 + 0.15 * 2))  # + 'parse', 'config' in the name
    assert out["block"] == pytest.approx(0.10)  # names of non-definitions do not count


def test_name_path_boost_weighs_later_query_words_less():
    fused = [(chunk("first", path="src/parse.py", name="a"), 0.10),
             (chunk("second", path="src/config.py", name="b"), 0.10)]
    out = scores_of(rank(Query.parse("parse the config"), fused, only(name_path_boost=True, word_decay=0.5)))
    assert out["first"] == pytest.approx(0.10 * 1.3)
    assert out["second"] == pytest.approx(0.10 * (1 + 0.3 * 0.5))


@pytest.mark.parametrize("query, path, matched", [
    ("lockfile pins", "src/lock.py", True), ("the lock", "src/lockfile.py", True),
    ("log handlers", "src/logging.py", False),  # 'log' is shorter than 4
])
def test_name_path_boost_matches_a_word_that_begins_the_other(query, path, matched):
    fused = [(chunk("c", path=path, name="x"), 0.1)]
    assert (rank(Query.parse(query), fused, only(name_path_boost=True, prefix_chars=4))[0].score > 0.1) == matched
    whole_words = only(name_path_boost=True, prefix_chars=0)  # no prefix matches
    assert rank(Query.parse(query), fused, whole_words)[0].score == 0.1


# --- ranking: test / example / vendor penalty ------------------------------------------------

@pytest.mark.parametrize("path", ["tests/test_inventory.py", "src/inventory_test.go", "web/app.spec.ts",
                                  "src/InventoryTest.java", "examples/demo.py", "vendor/lib/x.go",
                                  "node_modules/pkg/index.js", "conftest.py", "pkg/testdata/a.txt"])
def test_test_penalty_applies(path):
    fused = [(chunk("t", path=path), 0.2), (chunk("src", path="src/inventory.py"), 0.15)]
    out = rank(Query.parse("inventory total value"), fused, only(test_penalty=True))
    assert ids(out) == ["src", "t"]
    assert scores_of(out)["t"] == pytest.approx(0.2 * 0.5)
    assert scores_of(out)["src"] == 0.15


@pytest.mark.parametrize("query, path", [("tests for inventory total", "tests/test_inventory.py"),
                                         ("inventory test", "tests/test_inventory.py"),
                                         ("example of backoff", "examples/backoff.py"),
                                         ("vendor clamp", "vendor/clamp/clamp.go")])
def test_test_penalty_exempt_when_query_mentions_tests(query, path):
    """The class a question names (search/class_weights.py) is not weighed down."""
    fused = [(chunk("t", path=path), 0.2), (chunk("src", path="src/inventory.py"), 0.15)]
    out = rank(Query.parse(query), fused, only(test_penalty=True))
    assert ids(out) == ["t", "src"]
    assert scores_of(out)["t"] == 0.2


def test_test_penalty_factor_is_configurable():
    opts = only(test_penalty=True)
    opts.test_factor = 0.25
    out = rank(Query.parse("inventory"), [(chunk("t", path="tests/a.py"), 0.4)], opts)
    assert out[0].score == pytest.approx(0.1)


@pytest.mark.parametrize("path", ["src/latest.py", "app/contest.py", "pkg/greatest.go"])
def test_test_penalty_spares_words_ending_in_test(path):
    fused = [(chunk("t", path=path), 0.2)]
    assert rank(Query.parse("inventory"), fused, only(test_penalty=True))[0].score == 0.2


def test_test_penalty_spares_java_package_com_example():
    path = "src/main/java/com/example/inventory/Inventory.java"
    fused = [(chunk("t", path=path, language="java"), 0.2)]
    assert rank(Query.parse("inventory"), fused, only(test_penalty=True))[0].score == 0.2


# --- ranking: parent/child dedupe ------------------------------------------------------------

def test_dedupe_demotes_child_of_higher_parent():
    fused = [(chunk("cls", kind="class", name="Inventory"), 1.0),
             (chunk("m", kind="method", name="add_item", parent_id="cls"), 0.8),
             (chunk("x", path="src/other.py"), 0.5)]
    out = rank(Query.parse("inventory"), fused, only(parent_child_dedupe=True))
    assert ids(out) == ["cls", "x", "m"]  # demoted, not dropped
    assert scores_of(out)["m"] == pytest.approx(0.4)
    assert out[-1].notes == ["parent or child ranked higher"]


def test_dedupe_demotes_parent_of_higher_child():
    fused = [(chunk("m", kind="method", name="add_item", parent_id="cls"), 1.0),
             (chunk("cls", kind="class", name="Inventory"), 0.8),
             (chunk("x", path="src/other.py"), 0.5)]
    out = rank(Query.parse("inventory"), fused, only(parent_child_dedupe=True))
    assert ids(out) == ["m", "x", "cls"]
    assert scores_of(out)["cls"] == pytest.approx(0.4)


def test_dedupe_keeps_siblings():
    fused = [(chunk("m1", kind="method", parent_id="cls"), 1.0), (chunk("m2", kind="method", parent_id="cls"), 0.9),
             (chunk("cls", kind="class"), 0.8)]
    out = rank(Query.parse("inventory"), fused, only(parent_child_dedupe=True))
    assert ids(out) == ["m1", "m2", "cls"]
    assert scores_of(out) == {"m1": 1.0, "m2": 0.9, "cls": pytest.approx(0.4)}


# --- ranking: per-file diminishing returns ---------------------------------------------------

def test_per_file_diminishing_returns():
    fused = [(chunk("a1", path="a.py"), 1.0), (chunk("a2", path="a.py"), 0.9), (chunk("a3", path="a.py"), 0.8),
             (chunk("b1", path="b.py"), 0.6)]
    out = rank(Query.parse("inventory"), fused, only(file_diminishing=True))
    assert ids(out) == ["a1", "a2", "b1", "a3"]
    assert scores_of(out) == {"a1": 1.0, "a2": pytest.approx(0.63), "a3": pytest.approx(0.8 * 0.49), "b1": 0.6}
    assert out[1].notes == ["chunk 2 of its file x0.70"]


def test_per_file_decay_is_configurable():
    opts = only(file_diminishing=True)
    opts.file_decay = 0.5
    out = rank(Query.parse("q"), [(chunk("a1", path="a.py"), 1.0), (chunk("a2", path="a.py"), 1.0)], opts)
    assert [r.score for r in out] == [1.0, 0.5]


# --- ranking: names in a query of words ------------------------------------------------------

@pytest.mark.parametrize("query, named", [
    ("how bats_pipe chains commands", "bats_pipe"), ("res.send body encoding", "send"),
    ("how xmonad uses withDisplay", "withDisplay"), ("Plug::Conn struct", "Conn"), ("load the config", None),
])
def test_a_name_written_as_code_boosts_its_definition(query, named):
    fused = [(chunk("other", name="other"), 0.02), *((chunk(n, name=n), 0.01) for n in
                                                     ("bats_pipe", "send", "withDisplay", "Conn", "load"))]
    options = only(query_names=True, joined_stem_factor=1.0, main_definition_factor=1.0)
    out = scores_of(rank(Query.parse(query), fused, options))
    boosted = {cid for cid, score in out.items() if score > {"other": 0.02}.get(cid, 0.01)}
    assert boosted == ({named} if named else set())
    if named:
        assert out[named] == pytest.approx(0.02)  # twice: above what beat it


def test_words_that_spell_a_file_name_boost_that_file():
    fused = [(chunk("fn", name="lookup_price", path="src/pricing.py"), 0.02),
             (chunk("list", name="find", path="src/price_list.py"), 0.015),
             (chunk("stop", name="x", path="src/the_list.py"), 0.015)]
    out = rank(Query.parse("the price list lookups"), fused, only(query_names=True))
    assert ids(out)[0] == "list" and scores_of(out)["list"] == pytest.approx(0.015 * 1.6)
    assert scores_of(out)["stop"] == 0.015  # a run may not start or end with a stopword


def test_the_definition_a_file_is_named_after_when_the_query_names_it():
    fused = [(chunk("await", name="awaitAll", path="src/Await.kt"), 0.02),
             (chunk("deferred", kind="interface", name="Deferred", path="src/Deferred.kt"), 0.016)]
    out = rank(Query.parse("Deferred and await for results"), fused, only(query_names=True))
    assert ids(out) == ["deferred", "await"] and scores_of(out)["deferred"] == pytest.approx(0.016 * 1.3)


def test_names_in_the_query_are_left_to_the_symbol_step_for_a_bare_name():
    fused = [(chunk("a", name="other"), 0.02), (chunk("b", name="load_config"), 0.01)]
    assert scores_of(rank(Query.parse("load_config"), fused, only(query_names=True))) == {"a": 0.02, "b": 0.01}


# --- ranking: file coherence --------------------------------------------------

def test_file_coherence_gives_each_file_best_chunk_a_share_by_its_summed_score():
    fused = [(chunk("b1", path="b.py"), 0.010), (chunk("a1", path="a.py"), 0.009), (chunk("a2", path="a.py"), 0.008),
             (chunk("a3", path="a.py"), 0.007)]
    out = scores_of(rank(Query.parse("anything"), fused, only(file_coherence=True, coherence_share=0.2)))
    assert out["a1"] == pytest.approx(0.009 + 0.2 * 0.010 * 1.0)  # a.py holds the most: the whole share
    assert out["b1"] == pytest.approx(0.010 + 0.2 * 0.010 * 0.010 / 0.024)
    assert out["a2"] == 0.008 and out["a3"] == 0.007  # only a file's best chunk gains
    assert out["a1"] > out["b1"]


# --- exact text ------------------------------------------------------------------------------

def test_a_chunk_holding_the_query_text_word_for_word_goes_first():
    fused = [(chunk("a"), 1.0), (chunk("b"), 0.5), (chunk("raiser"), 0.1), (chunk("half"), 0.05)]
    query = Query.parse("ValueError: inventory is full, cannot add the item")
    assert len(query.phrases) == 5
    ranked = rank(query, fused, only(exact_text=True), exact={"raiser": 1.0, "half": 0.6, "b": 0.25})
    assert ids(ranked) == ["raiser", "half", "a", "b"]  # under the least share: as it came
    assert any("word for word" in note for note in ranked[0].notes)


def test_exact_text_needs_all_of_few_phrases_and_lifts_a_test_less():
    fused = [(chunk("a"), 1.0), (chunk("test", path="tests/test_mod.py"), 0.1), (chunk("raiser"), 0.1)]
    two = Query.parse("ValueError: inventory is full")
    assert len(two.phrases) == 2
    assert ids(rank(two, fused, only(exact_text=True), exact={"raiser": 0.5})) == ["a", "test", "raiser"]
    ranked = rank(two, fused, only(exact_text=True, test_penalty=True), exact={"raiser": 1.0, "test": 1.0})
    assert ids(ranked) == ["raiser", "test", "a"]


def test_exact_text_off_keeps_the_fused_order():
    fused = [(chunk("a"), 1.0), (chunk("raiser"), 0.1)]
    assert ids(rank(Query.parse("ValueError: inventory is full"), fused, RankingOptions.off(),
                    exact={"raiser": 1.0})) == ["a", "raiser"]
