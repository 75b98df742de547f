"""The path and language filters, read the same by the catalog (SQL), grep (ripgrep) and every
front-end: a folder, a path's start or a glob; a language by any common name."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import keyword_indexed_files, run_cli

from codesearch.filters import Filters, rg_globs, sql_globs
from codesearch.search.requests import GrepRequest, SearchRequest
from codesearch.store.sql import filter_clause

FILES = {"binding/y.go": "package y\nvar needle = 1\n", "binding/sub/z.py": "needle = 1\n",
         "src/binding/m.py": "needle = 2\n", "src/bindings.py": "needle = 3\n",
         "top.py": "def needle():\n    return 4\n\n\ndef caller():\n    return needle()\n"}
EVERY = set(FILES)


@pytest.mark.parametrize(("path", "wanted"), [
    ("binding", {"binding/y.go", "binding/sub/z.py"}),
    ("binding/", {"binding/y.go", "binding/sub/z.py"}),
    ("./binding", {"binding/y.go", "binding/sub/z.py"}),
    ("binding/**", {"binding/y.go", "binding/sub/z.py"}),
    ("**/binding/**", {"binding/y.go", "binding/sub/z.py", "src/binding/m.py"}),
    ("src/bind", {"src/binding/m.py", "src/bindings.py"}),
    ("*.py", {"binding/sub/z.py", "src/binding/m.py", "src/bindings.py", "top.py"}),
    ("src/binding/m.py", {"src/binding/m.py"}),
    ("**/*.go", {"binding/y.go"}),
    ("nothing", set())])
def test_the_catalog_reads_a_folder_a_start_or_a_glob(path, wanted):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE files (path TEXT, language TEXT)")
    db.executemany("INSERT INTO files VALUES (?, 'x')", [(p,) for p in FILES])
    where, params = filter_clause(Filters(path_glob=path), file="files")
    assert {p for (p,) in db.execute(f"SELECT path FROM files WHERE 1{where}", params)} == wanted


def test_globs_as_each_engine_reads_them():
    assert sql_globs("**/tests/**") == ("tests/*", "*/tests/*")
    assert sql_globs("src/") == ("src*",)
    assert rg_globs("src/") == ("/src*", "/src*/**")
    assert rg_globs("a{b}") == ("/a\\{b\\}*", "/a\\{b\\}*/**")
    assert rg_globs("**/tests/**") == ("**/tests/**",)


@pytest.mark.parametrize(("given", "name"), [
    ("go", "go"), ("Go", "go"), ("golang", "go"), ("py", "python"), ("Python", "python"), ("ts", "typescript"),
    ("TypeScript", "typescript"), ("js", "javascript"), ("rs", "rust"), ("rb", "ruby"), ("kt", "kotlin"),
    ("cs", "csharp"), ("C#", "csharp"), ("c++", "cpp"), ("cpp", "cpp"), ("yml", "yaml")])
def test_languages_by_their_common_names_on_every_front_end(given, name):
    assert Filters(language=given).language == name
    assert SearchRequest.from_dict({"query": "x", "filters": {"language": given}}).filters.language == name
    assert GrepRequest.from_dict({"pattern": "x", "filters": {"language": given}}).filters.language == name


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("filters") / "repo"
    keyword_indexed_files(root, FILES).close()
    return root


@pytest.mark.parametrize(("path", "wanted"), [
    ("binding", {"binding/y.go", "binding/sub/z.py"}), ("binding/", {"binding/y.go", "binding/sub/z.py"}),
    ("**/binding/**", {"binding/y.go", "binding/sub/z.py", "src/binding/m.py"}), ("*.go", {"binding/y.go"}),
    ("src/bind", {"src/binding/m.py", "src/bindings.py"})])
def test_grep_and_query_agree_on_the_path_filter(repo, path, wanted):
    grep = run_cli("grep", "-l", "needle", "--path", path, "--repo", str(repo), "--no-daemon")
    assert set(grep.stdout.split()) == wanted, grep.stderr
    query = run_cli("query", "needle", "--mode", "keyword", "--path", path, "--repo", str(repo), "--no-daemon",
                    "--vimgrep", "--limit", "20")
    assert {line.split(":")[0] for line in query.stdout.splitlines()} == wanted, query.stderr


def test_a_path_that_matches_nothing_is_said_on_stderr(repo):
    for command in (["grep", "needle"], ["query", "needle", "--mode", "keyword"], ["callers", "needle"]):
        done = run_cli(*command, "--path", "nowhere/", "--repo", str(repo), "--no-daemon")
        assert "--path 'nowhere/' matches no file" in done.stderr, (command, done.stderr)
    grep = run_cli("grep", "zzz_nothing", "--path", "binding", "--repo", str(repo), "--no-daemon")
    assert grep.returncode == 1 and "matches no file" not in grep.stderr


def test_an_answer_says_its_path_matched_no_file_on_every_front_end(repo):
    """The service's own answer carries the line (socket, HTTP, MCP and LSP hand it on), only when
    the filter matched no file at all, not when files matched and nothing in them did."""
    from codesearch.api.local import LocalService
    from codesearch.config import load_settings
    from codesearch.indexing.index import Index
    index = Index(repo, load_settings(repo))
    try:
        service = LocalService(index)
        nowhere = service.search(SearchRequest(query="needle", mode="keyword", filters=Filters(path_glob="nowhere/")))
        assert not nowhere.results and "--path 'nowhere/' matches no file" in (nowhere.note or "")
        elsewhere = service.search(SearchRequest(query="zzz_nothing", mode="keyword",
                                                 filters=Filters(path_glob="binding")))
        assert not elsewhere.results and "matches no file" not in (elsewhere.note or "")
    finally:
        index.close()


def test_the_command_line_takes_any_common_language_name(repo):
    for name in ("Go", "golang", "go"):
        done = run_cli("grep", "-l", "needle", "--lang", name, "--repo", str(repo), "--no-daemon")
        assert done.stdout.split() == ["binding/y.go"], (name, done.stderr)
        done = run_cli("query", "needle", "--lang", name, "--mode", "keyword", "--repo", str(repo), "--no-daemon",
                       "--vimgrep")
        assert {line.split(":")[0] for line in done.stdout.splitlines()} == {"binding/y.go"}, (name, done.stderr)
