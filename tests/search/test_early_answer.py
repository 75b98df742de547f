"""The early answer (search/early_answer.py): ripgrep over a question's words, placed in the
definitions the indexer would make, on a copy of sample_repos/python without an index; and the
service of an index whose first build has not finished answering from it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codesearch.api.local import LocalService
from codesearch.api.serving import FIRST_INDEX_NOTE
from codesearch.config import load_settings
from codesearch.filters import Filters
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer, IndexReport
from codesearch.search.early_answer import early_answer, first_index_unfinished, query_words
from codesearch.search.requests import SearchRequest

SAMPLE = Path(__file__).resolve().parents[2] / "sample_repos" / "python"


@pytest.fixture
def repo(tmp_path) -> Path:
    return shutil.copytree(SAMPLE, tmp_path / "repo", ignore=shutil.ignore_patterns(".codesearch")).resolve()


def ask(repo: Path, query: str, **options):
    return early_answer(repo, repo / ".codesearch", load_settings(repo), SearchRequest(query=query, **options),
                        "no index yet")


@pytest.mark.parametrize(("query", "terms"), [
    ("how are retries with exponential backoff computed", ["retries", "exponential", "backoff", "computed"]),
    ("parse_config", ["parse", "config"]),  # `parseconfig` is not how the question spells it
    ("HTTPException", ["httpexception", "http", "exception"]),
    ("coroutine coroutines", ["coroutines"]),  # one word, two forms: the shorter stem finds both
    ("how is it", ["how", "is", "it"]),  # nothing but stopwords: they are the words then
])
def test_query_words(query, terms):
    assert [w.term for w in query_words(query)] == terms


def test_forms_of_a_word_match(repo):
    """`retries` finds `retry`, `computed` finds `compute_backoff`."""
    words = {w.term: w.stem for w in query_words("retries computed")}
    assert words == {"retries": "retr", "computed": "comput"}


def test_the_definition_holding_the_words_comes_first(repo):
    answer = ask(repo, "retry delay with exponential backoff")
    top = answer.results[0]
    assert (top.path, top.kind, top.name) == ("inventory.py", "function", "compute_backoff")
    assert top.sources == {"grep": 1} and "backoff" in top.snippet
    assert top.name_line == 64 and top.start_line <= top.snippet_line <= top.end_line
    assert answer.partial is True and answer.embedded_share == 0.0
    assert answer.note.startswith("no index yet; ") and "retry, delay, exponential, backoff" in answer.note
    assert {"rg", "parse", "total"} <= set(answer.timing_ms)
    assert all(set(r.sources) == {"grep"} for r in answer.results)
    assert [r.sources["grep"] for r in answer.results] == list(range(1, len(answer.results) + 1))


def test_results_carry_the_ids_the_index_gives_the_same_chunks(repo):
    answer = ask(repo, "clamp")
    index = Index(repo, load_settings(repo), None, create=True)
    try:
        Indexer(index).run(embed=False)
        indexed = index.catalog.files.chunks_by_ids([answer.results[0].id])
    finally:
        index.close()
    assert answer.results[0].name == "clamp"
    assert [(c.path, c.name) for c in indexed.values()] == [("config.py", "clamp")]


def test_filters_and_files(repo):
    only_docs = ask(repo, "backoff", filters=Filters(language="markdown"))
    assert only_docs.results and {r.language for r in only_docs.results} == {"markdown"}
    functions = ask(repo, "backoff", filters=Filters(kind="function"))
    assert functions.results and {r.kind for r in functions.results} == {"function"}
    tests_only = ask(repo, "backoff", filters=Filters(path_glob="tests/**"))
    assert tests_only.results and {r.path for r in tests_only.results} == {"tests/test_inventory.py"}
    files = ask(repo, "backoff", files=True)
    paths = [r.path for r in files.results]
    assert len(paths) == len(set(paths)) > 1 and paths[0] == "inventory.py"
    assert len(ask(repo, "backoff", limit=1).results) == 1


def test_tests_and_documents_come_after_the_code(repo):
    paths = [r.path for r in ask(repo, "compute backoff").results]
    assert paths[0] == "inventory.py"
    assert paths.index("tests/test_inventory.py") > paths.index("inventory.py")


def test_nothing_matched(repo):
    answer = ask(repo, "zqxwvy nothingmatcheshere")
    assert answer.results == () and answer.partial is True and "zqxwvy" in answer.note
    assert ask(repo, "?!").results == ()


def test_private_and_secret_files_are_never_searched(repo):
    (repo / ".gitignore").write_text(".env\n")
    (repo / ".env").write_text("ZQSECRET=backoffzq\n")
    (repo / ".git").mkdir()
    (repo / ".git" / "config").write_text("backoffzq = 1\n")
    (repo / "visible.py").write_text("def backoffzq():\n    return 1\n")
    answer = ask(repo, "backoffzq")
    assert [r.path for r in answer.results] == ["visible.py"]


def test_an_index_whose_first_build_has_not_finished_answers_from_ripgrep(repo):
    """What a daemon serves while it builds its first index: the files written so far are in the
    catalog, the run that writes them has not finished; once it has, the index answers."""
    index = Index(repo, load_settings(repo), None, create=True)
    try:
        index.write_meta()
        Indexer(index).update_catalog(IndexReport(), None)  # a run's writes, not its end
        assert first_index_unfinished(index) and not index.catalog.is_empty()
        early = LocalService(index).search(SearchRequest(query="clamp", mode="keyword"))
        assert early.partial is True and early.note is not None and early.note.startswith(FIRST_INDEX_NOTE)
        assert early.results[0].name == "clamp" and set(early.results[0].sources) == {"grep"}

        Indexer(index).run(embed=False)
        assert not first_index_unfinished(index)
        answer = LocalService(index).search(SearchRequest(query="clamp", mode="keyword"))
        assert answer.results[0].name == "clamp" and set(answer.results[0].sources) == {"keyword"}
    finally:
        index.close()
