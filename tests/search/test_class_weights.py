"""The content-class step of ranking (search/class_weights.py): the project's code as it came, other
classes down, the class a question names spared, a report's documentation down as far as tests."""

from __future__ import annotations

import pytest

from codesearch.model import Chunk
from codesearch.search.class_weights import asked_classes, class_of
from codesearch.search.query import Query
from codesearch.search.ranking import RankingOptions, rank


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
              chunk("generated", "shop/cart_pb2.py"), chunk("vendored", "shop/_vendor/six.py")]


def test_each_class_is_weighed_by_its_factor():
    got = scores("how is the cart total computed", CANDIDATES, options(), frozenset({"shop/_vendor"}))
    assert got == pytest.approx({"code": 1.0, "test": 0.5, "example": 0.5, "doc": 0.5, "generated": 0.5,
                                 "vendored": 0.5})


@pytest.mark.parametrize("query, spared", [("an example of a cart total", "example"),
                                           ("how are the cart tests set up", "test"),
                                           ("where do the docs explain the cart", "doc")])
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
