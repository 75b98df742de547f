"""A name's references say, site by site, whether the name is called or only used there (a method
value, a function passed on) and how the site's link to a definition was resolved; a site that
links to nothing here says nothing of it."""

from __future__ import annotations

import pytest
from conftest import keyword_indexed_files

from codesearch.search.relations import parse_relation
from codesearch.search.requests import ReferencesRequest
from codesearch.search.searcher import Searcher

FILES = {
    "app.py": ("import json\n\n\n"
               "class App:\n"
               "    def run(self):\n"
               "        self.helper()\n"
               "        register(self.helper)\n"
               "        return json.loads('1')\n\n"
               "    def helper(self):\n"
               "        return 1\n\n\n"
               "def register(callback):\n"
               "    return callback\n"),
    "a.py": "def parse(text):\n    return text\n",
    "b.py": "def parse(text):\n    return text\n",
    "main.py": "def main(x):\n    return parse(x)\n",
}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    index = keyword_indexed_files(tmp_path_factory.mktemp("references") / "repo", FILES)
    yield Searcher(index)
    index.close()


def _references(searcher: Searcher, name: str) -> list[dict]:
    return [r.to_dict() for r in searcher.references(ReferencesRequest(name=name)).references]


def test_calls_and_references_with_their_resolution(searcher):
    found = {(r["line"], r["column"]): (r["use"], r["resolution"]) for r in _references(searcher, "App.helper")}
    assert found == {(6, 14): ("call", "exact"), (7, 23): ("reference", "exact")}


def test_a_guess_is_name_only_and_an_outside_call_has_no_resolution(searcher):
    assert [(r["use"], r["resolution"]) for r in _references(searcher, "parse")] == [("call", "name-only")]
    outside = _references(searcher, "loads")
    assert [r["use"] for r in outside] == ["call"] and "resolution" not in outside[0]


@pytest.mark.parametrize(("query", "expected"), [
    ("who calls parse_config", ("callers", "parse_config")),
    ("what does `Router.route` call", ("callees", "Router.route")),
    ("named arguments for use in format strings", None),  # `in` is a word of the sentence
    ("for use in templates, which uses render_page", ("callers", "render_page")),
    ("what does it mean when a request is retried", None),
])
def test_a_relation_names_a_name_not_a_word_of_the_sentence(query, expected):
    assert parse_relation(query) == expected
