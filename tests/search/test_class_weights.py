"""The content-class step of ranking (search/class_weights.py): the project's code as it came, other
classes down, the class a question names spared, a report's documentation down as far as tests."""

from __future__ import annotations

import pytest
from conftest import keyword_indexed_files

from codesearch.analysis.content_class import CLASS_NUMBERS
from codesearch.model import Chunk
from codesearch.search.class_weights import asked_classes, class_of
from codesearch.search.query import Query
from codesearch.search.ranking import RankingOptions, rank
from codesearch.search.requests import SearchRequest
from codesearch.search.searcher import Searcher


def chunk(cid: str, path: str, language: str = "python") -> Chunk:
    return Chunk(cid, None, path, language, "function", cid, cid, "", "", 1, 3, cid, "", "")


def options() -> RankingOptions:
    opts = RankingOptions.off()
    opts.test_penalty = True
    return opts


def scores(query: str, chunks: list[Chunk], opts: RankingOptions, vendored: frozenset[str] = frozenset()):
    return {r.chunk.id: r.score for r in rank(Query.parse(query), [(c, 1.0) for c in chunks], opts, vendored)}


CANDIDATES = [chunk("code", "shop/cart.py"), chunk("test", "tests/test_cart.py"),
              chunk("example", "examples/cart_demo.py"), chunk("doc", "README.md", "markdown"),
              chunk("generated", "shop/cart_pb2.py"), chunk("vendored", "shop/_vendor/six.py"),
              chunk("config", ".github/workflows/cart.yml", "yaml")]


def test_each_class_is_weighed_by_its_factor():
    got = scores("how is the cart total computed", CANDIDATES, options(), frozenset({"shop/_vendor"}))
    assert got == pytest.approx({"code": 1.0, "test": 0.5, "example": 0.5, "doc": 0.5, "generated": 0.5,
                                 "vendored": 0.5, "config": 0.5})


@pytest.mark.parametrize("query, spared", [("an example of a cart total", "example"),
                                           ("how are the cart tests set up", "test"),
                                           ("where do the docs explain the cart", "doc"),
                                           ("the CI workflow that builds the cart", "config")])
def test_only_the_class_a_question_names_is_spared(query, spared):
    got = scores(query, CANDIDATES, options(), frozenset({"shop/_vendor"}))
    assert got[spared] == 1.0 and got["code"] == 1.0
    assert all(score < 1.0 for cid, score in got.items() if cid not in (spared, "code"))


def test_a_report_names_no_class():
    report = ("Cart total is wrong when a coupon is applied. The test in tests/test_cart.py fails:\n"
              "Traceback (most recent call last):\n  File \"shop/cart.py\", line 12, in total\n"
              "ValueError: negative total")
    assert asked_classes(Query.parse(report)) == frozenset()
    got = scores(report, CANDIDATES, options())
    assert got["doc"] == pytest.approx(0.5) and got["test"] == pytest.approx(0.5)


def test_structure_makes_a_folder_vendored():
    assert class_of("shop/_vendor/six.py", "python", frozenset({"shop/_vendor"})) == "vendored"
    assert class_of("shop/_vendor/six.py", "python", frozenset()) == "code"


def test_a_build_file_is_configuration_as_indexed_shown_and_weighed(tmp_path):
    """End to end on a real keyword index: a CI workflow is stored and shown as configuration, and
    weighed down unless the question names its class."""
    index = keyword_indexed_files(tmp_path, {
        "shop/cart.py": "def apply_coupon(cart, coupon):\n    \"\"\"A coupon's discount off the cart total.\"\"\"\n"
                        "    return max(0, cart.total - coupon.discount)\n",
        ".github/workflows/ci.yml": "name: cart coupon discount total\non: [push]\n",
    })
    try:
        def workflow(query: str):
            answer = Searcher(index).search(SearchRequest(query=query, mode="keyword", explain=True))
            return next(r for r in answer.results if r.path == ".github/workflows/ci.yml")

        found = workflow("cart coupon discount total")
        assert found.content_class == "configuration" and "content class configuration x0.5" in found.explain
        named = workflow("the CI workflow of cart coupon discount total")
        assert not any(note.startswith("content class") for note in named.explain)
        assert [tuple(row) for row in index.catalog.db.execute(
            "SELECT DISTINCT c.content_class FROM chunks c JOIN files f USING (fid) WHERE f.path = ?",
            (".github/workflows/ci.yml",))] == [(CLASS_NUMBERS["configuration"],)]
    finally:
        index.close()
