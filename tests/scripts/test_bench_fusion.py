"""scripts/bench_fusion.py: its default variant fuses as the searcher does, each variant moves
items the way it says, the signals read the lists' leads and agreement, and the bootstrap
interval of a change holds it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from codesearch.search.fusion import weighted_rrf
from codesearch.search.query import Query

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
_spec = importlib.util.spec_from_file_location("bench_fusion", SCRIPTS / "bench_fusion.py")
assert _spec is not None and _spec.loader is not None
bench_fusion = importlib.util.module_from_spec(_spec)
sys.modules["bench_fusion"] = bench_fusion  # (its dataclasses look their module up there)
_spec.loader.exec_module(bench_fusion)

LISTS = {"keyword": ["exact", "b", "c"], "vector": ["b", "c", "d", "exact"], "graph": ["c"]}
WEIGHTS = {"keyword": 0.3, "vector": 0.6, "graph": 0.1}


def test_the_default_variant_is_the_searchers_fusion():
    expected = weighted_rrf(LISTS, WEIGHTS, k=60)
    found = bench_fusion.fuse(LISTS, WEIGHTS, 60, bench_fusion.VARIANTS[bench_fusion.DEFAULT])
    assert [i for i, _ in found] == [i for i, _ in expected]
    assert [s for _, s in found] == pytest.approx([s for _, s in expected])


def test_a_lifted_keyword_top_passes_the_vector_neighbours():
    default = [i for i, _ in bench_fusion.fuse(LISTS, WEIGHTS, 60, bench_fusion.Variant())]
    lifted = [i for i, _ in bench_fusion.fuse(LISTS, WEIGHTS, 60, bench_fusion.Variant(top=1, lift=4))]
    sharper = [i for i, _ in bench_fusion.fuse(LISTS, WEIGHTS, 60, bench_fusion.Variant({"keyword": 1}))]
    assert default.index("exact") > 0
    assert lifted[0] == "exact" and sharper[0] == "exact"


def test_signals_read_each_lists_lead_and_their_agreement():
    recorded = {"keyword": (["a", "b", "c", "d", "e"], [10.0, 5.0, 5.0, 5.0, 5.0]),
                "vector": (["x", "a", "y"], [0.9, 0.6, 0.6])}
    found = bench_fusion.signals(Query.parse("where does retry_loop wait"), recorded, "retry_loop")
    assert found["keyword_lead"] == pytest.approx(0.5)
    assert found["keyword_lead_5"] == pytest.approx(2.0)
    assert found["vector_lead_5"] == pytest.approx(0.3)
    assert found["agreement_10"] == pytest.approx(0.1)
    assert found["symbol"] == 0.0 and found["keyword_top_named"] == 1.0
    assert not bench_fusion.code_names("how are routes registered")
    written = bench_fusion.code_names("how bats_pipe and safeParse and Plug.Conn work")
    assert written == {"bats_pipe", "safeparse", "conn"}


def test_the_interval_holds_a_steady_gain_exactly_and_brackets_a_mixed_one():
    def case(repo: str, gain: float) -> object:
        return bench_fusion.Case("quality", repo, "A", {}, {"default": 0.5, "lifted": 0.5 + gain}, {})
    steady = [case(repo, 0.1) for repo in ("a", "b") for _ in range(5)]
    assert bench_fusion.interval(steady, "lifted", "A") == pytest.approx((0.1, 0.1))
    mixed = [case("a", gain) for gain in (0.4, -0.2, 0.0, 0.1, -0.3)]
    low, high = bench_fusion.interval(mixed, "lifted", "A")
    assert low < 0.0 < high


def test_losses_sort_the_missed_questions_by_where_their_answers_lay():
    def question(ndcg: float, found_at: dict[str, int], half: str = "A") -> object:
        return bench_fusion.Case("quality", "r", half, {}, {"default": ndcg}, found_at)
    cases = [question(1.0, {"keyword": 1, "vector": 1}),  # not missed
             question(0.5, {"keyword": 2, "vector": 9, "graph": 0}), question(0.6, {"keyword": 3, "vector": 1}),
             question(0.0, {"keyword": 0, "vector": 0}), question(0.7, {"keyword": 40, "vector": 7}),
             question(0.0, {"keyword": 0, "vector": 0}, "B")]
    assert bench_fusion.losses(cases, "A") == {
        "in the top 3 of keyword": (1, pytest.approx(0.5)), "in the top 3 of keyword+vector": (1, pytest.approx(0.4)),
        "in no list": (1, pytest.approx(1.0)), "best place 4-10": (1, pytest.approx(0.3))}
