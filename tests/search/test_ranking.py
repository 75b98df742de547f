"""The ranking stage after fusion, step by step, and file aggregation."""

from __future__ import annotations

import pytest

from codesearch.model import Chunk
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
