"""Workspace search (api/workspace_service.py, workspace.py) on real indexes of sample repositories:
results from each, the boosted RRF order as `merge` defines it, names and paths, relations
across repositories, and repositories that cannot answer (missing, not indexed, locked).

Keyword and graph only: the embedding model is not what is under test here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import SAMPLES, run_cli

from codesearch.api.local import LocalService
from codesearch.api.protocol import ServiceUnavailable
from codesearch.api.types import DefinitionRequest, IndexRequest, RelationsRequest, SearchRequest
from codesearch.api.workspace_service import WorkspaceService
from codesearch.cli.services import open_workspace
from codesearch.config import load_settings
from codesearch.indexing.index import Index, IndexLock
from codesearch.indexing.indexer import Indexer
from codesearch.wire import RequestError
from codesearch.workspace import RepoSpec, Workspace, WorkspaceError, load_workspace, workspace_of_paths

CLIENT = '''from inventory import compute_backoff


def fetch_with_retry(url):
    """Fetch a URL, sleeping between attempts."""
    for attempt in range(3):
        wait = compute_backoff(attempt)
        print(url, wait)


def run():
    fetch_with_retry("http://example.com")
'''
QUERY = "retry delay backoff attempt"


def _index(root: Path) -> None:
    index = Index(root, load_settings(root), create=True)
    try:
        Indexer(index).run(embed=False)
    finally:
        index.close()


@pytest.fixture(scope="module")
def repos(tmp_path_factory) -> Path:
    """python, go and typescript samples and a small client of the python one, indexed (keyword
    index and graph); `unindexed` is a copy without an index."""
    base = tmp_path_factory.mktemp("workspace")
    for name in ("python", "go", "typescript"):
        shutil.copytree(SAMPLES / name, base / name, ignore=shutil.ignore_patterns(".codesearch"))
    (base / "client").mkdir()
    (base / "client" / "app.py").write_text(CLIENT)
    for name in ("python", "go", "typescript", "client"):
        _index(base / name)
    shutil.copytree(SAMPLES / "rust", base / "unindexed", ignore=shutil.ignore_patterns(".codesearch"))
    (base / "notes").mkdir()
    (base / "notes" / "todo.txt").write_text("")  # indexed, and nothing to embed: no model loads
    _index(base / "notes")
    return base


def _service(base: Path, *specs: tuple[str, float]) -> WorkspaceService:
    workspace = Workspace(tuple(RepoSpec(name, (base / name).resolve(), boost) for name, boost in specs))
    return open_workspace(workspace, load_settings, use_daemons=False)


def _single(base: Path, name: str, request: SearchRequest):
    index = Index(base / name, load_settings(base / name))
    try:
        return LocalService(index).search(request)
    finally:
        index.close()


def test_results_come_from_each_repository_with_their_names_and_paths(repos):
    service = _service(repos, ("python", 1.0), ("go", 1.0), ("typescript", 1.0))
    answer = service.search(SearchRequest(query=QUERY, mode="keyword", limit=12))
    assert {r.repo for r in answer.results} == {"python", "go", "typescript"}
    tops = {r.repo: r.name for r in answer.results if r.repo_rank == 0}
    assert tops == {"python": "compute_backoff", "go": "ComputeBackoff", "typescript": "computeBackoff"}
    for r in answer.results:
        assert (repos / r.repo / r.path).is_file(), r  # relative to its own repository
        assert not r.path.startswith("/")
    assert answer.note is None


@pytest.mark.parametrize("boosts", [(1.0, 1.0, 1.0), (2.0, 1.0, 0.5), (0.2, 1.0, 1.3)])
def test_the_order_is_the_boosted_rrf_of_each_repositorys_list(repos, boosts):
    """Each result's score is boost / (60 + its 0-based rank in its repository's list), the
    answer is sorted by it (ties: repository order, then rank), and the per-repository order is
    exactly that repository's own answer."""
    names = ("python", "go", "typescript")
    service = _service(repos, *zip(names, boosts, strict=True))
    request = SearchRequest(query=QUERY, mode="keyword", limit=15)
    answer = service.search(request)
    singles = {name: [r.id for r in _single(repos, name, request).results] for name in names}
    expected = sorted(((boost / (60 + rank), -names.index(name), -rank, name, cid)
                       for name, boost in zip(names, boosts, strict=True)
                       for rank, cid in enumerate(singles[name])), reverse=True)[:15]
    assert [(r.repo, r.id) for r in answer.results] == [(name, cid) for *_, name, cid in expected]
    for r in answer.results:
        assert r.fused_score == pytest.approx(1 / (60 + r.repo_rank), rel=1e-12)
        assert r.score == pytest.approx(r.fused_score * dict(zip(names, boosts, strict=True))[r.repo], rel=1e-12)
        assert singles[r.repo][r.repo_rank] == r.id


def test_a_boost_moves_a_repository_up(repos):
    plain = _service(repos, ("python", 1.0), ("go", 1.0)).search(SearchRequest(query=QUERY, mode="keyword", limit=6))
    lifted = _service(repos, ("python", 1.0), ("go", 1.2)).search(SearchRequest(query=QUERY, mode="keyword", limit=6))
    assert plain.results[0].repo == "python"  # tie at rank 0: the first repository first
    assert [r.repo for r in lifted.results[:3]] == ["go", "go", "go"]  # 1.2/62 > 1/60


def test_files_mode_and_budget_cover_the_whole_answer(repos):
    service = _service(repos, ("python", 1.0), ("go", 1.0))
    files = service.search(SearchRequest(query=QUERY, mode="keyword", limit=10, files=True))
    assert len({(r.repo, r.path) for r in files.results}) == len(files.results)
    small = service.search(SearchRequest(query=QUERY, mode="keyword", limit=10, max_tokens=300))
    assert 0 < len(small.results) < 10


def test_missing_and_unindexed_repositories_are_left_out_with_a_note(repos):
    service = _service(repos, ("python", 1.0), ("nowhere", 1.0), ("unindexed", 1.0))
    answer = service.search(SearchRequest(query=QUERY, mode="keyword"))
    assert answer.results and {r.repo for r in answer.results} == {"python"}
    assert "nowhere" in answer.note and "missing" in answer.note
    assert "unindexed" in answer.note and "codesearch index" in answer.note
    with pytest.raises(ServiceUnavailable, match="nowhere"):
        _service(repos, ("nowhere", 1.0), ("unindexed", 1.0)).search(SearchRequest(query=QUERY, mode="keyword"))


def test_a_locked_repository_is_left_out_of_an_index_run(repos):
    service = _service(repos, ("notes", 1.0), ("go", 1.0))
    lock = IndexLock(Index(repos / "go", load_settings(repos / "go")).dir)
    lock.acquire()
    try:
        answer = service.index(IndexRequest(timeout=0.3))
    finally:
        lock.release()
    assert not answer.ok and "go" in answer.note and "another codesearch process" in answer.note
    assert answer.unchanged == 1  # notes was brought up to date all the same


def test_a_bad_request_is_an_error_not_a_note(repos):
    service = _service(repos, ("python", 1.0), ("go", 1.0))
    with pytest.raises(RequestError):
        service.read(__import__("codesearch.api.types", fromlist=["ReadRequest"]).ReadRequest(path="config.py"))
    with pytest.raises(RequestError, match="no repository named"):
        service.index(IndexRequest(repo="nope"))


def test_callers_and_callees_resolve_names_in_every_repository(repos):
    service = _service(repos, ("python", 1.0), ("client", 1.0))
    callers = service.relations(RelationsRequest(name="compute_backoff", direction="callers", depth=2))
    found = {(r.repo, r.name, r.depth) for r in callers.results}
    assert ("client", "fetch_with_retry", 1) in found  # a call into another repository
    assert ("client", "run", 2) in found  # and its caller, two hops out
    assert ("python", "main", 1) in found
    assert [(t.repo, t.qualified_name) for t in callers.targets] == [("python", "compute_backoff")]
    hit = next(r for r in callers.results if r.name == "fetch_with_retry")
    assert hit.path == "app.py" and hit.sites == (7,)
    callees = service.relations(RelationsRequest(name="fetch_with_retry", direction="callees"))
    assert ("python", "compute_backoff") in {(r.repo, r.name) for r in callees.results}
    impact = service.impact(__import__("codesearch.api.types", fromlist=["ImpactRequest"]).ImpactRequest(
        name="compute_backoff"))
    assert ("client", "app.py") in {(f.repo, f.path) for f in impact.files}
    unknown = service.relations(RelationsRequest(name="no_such_thing", direction="callers"))
    assert not unknown.results and "any repository" in unknown.note
    defs = service.definitions(DefinitionRequest(name="compute_backoff"))
    assert [(d.repo, d.path) for d in defs.definitions] == [("python", "inventory.py")]


def test_the_cli_answers_a_workspace_file(repos, tmp_path):
    file = tmp_path / "codesearch-workspace.toml"
    file.write_text(f'[[repo]]\npath = "{repos / "python"}"\nname = "svc"\n\n'
                    f'[[repo]]\npath = "{repos / "go"}"\nboost = 1.5\n\n[[repo]]\npath = "{repos / "gone"}"\n')
    # from a folder with no index: a workspace query is not a first query of the folder it runs in
    done = run_cli("query", QUERY, "--workspace", str(file), "--mode", "keyword", "--json", "--limit", "4",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "no index yet" not in done.stderr and not (tmp_path / ".codesearch").exists(), done.stderr
    answer = json.loads(done.stdout)
    assert [r["repo"] for r in answer["results"]][:2] == ["go", "go"]  # 1.5/61 > 1/60
    assert {"svc", "go"} >= {r["repo"] for r in answer["results"]}
    assert "gone" in answer["note"]
    human = run_cli("callers", "clamp", "--repo", str(repos / "python"), "--repo", str(repos / "go"))
    assert human.returncode == 0 and "[python] inventory.py" in human.stdout


BAD_FILES = [
    ('[[repo]]\npath = "a"\n\n[[repo]]\npath = 3\n', ":4:", "needs a path"),
    ('[[repo]]\npath = "a"\nboost = -1\n', ":1:", "boost"),
    ('[[repo]]\npath = "a"\nboost = "high"\n', ":1:", "boost"),
    ('[[repo]]\npath = "a"\nweight = 2\n', ":1:", "unknown key 'weight'"),
    ('[[repo]]\npath = "a"\n[[repo]]\npath = "b/a"\n', ":3:", "second repository named 'a'"),
    ('[[repo]]\npath = "a"\nname = "two words"\n', ":1:", "name"),
    ('[[repo]]\npath = "a"\nname = "evil\\u202eyp.sh"\n', ":1:", "printable"),  # shown reversed
    ('[[repo]]\npath = "a"\nname = "csi\\u009b2J"\n', ":1:", "printable"),  # a terminal's escape
    ('[[repo]]\npath = "a"\nname = "bell\\u0007"\n', ":1:", "printable"),
    ('[[repo]]\npath = "a"\nboost = 1e300\n', ":1:", "boost 1e+300 must be a number from 0 to"),
    ('[[repo]]\npath = "a"\nboost = nan\n', ":1:", "boost nan must be a number from 0 to"),
    ('[[repo]]\npath = "a"\nboost = inf\n', ":1:", "boost inf must be a number from 0 to"),
    ('[[repo]\npath = "a"\n', "line 1", "not valid TOML"),
    ('title = "x"\n', "", "unknown key 'title'"),
    ('', "", "no repositories"),
]


@pytest.mark.parametrize(("text", "line", "words"), BAD_FILES)
def test_a_bad_workspace_file_names_its_line(tmp_path, text, line, words):
    file = tmp_path / "ws.toml"
    file.write_text(text)
    with pytest.raises(WorkspaceError) as caught:
        load_workspace(file)
    assert words in str(caught.value) and line in str(caught.value) and "ws.toml" in str(caught.value)


def test_a_bad_workspace_file_is_one_line_and_exit_2(tmp_path):
    file = tmp_path / "ws.toml"
    file.write_text(BAD_FILES[0][0])
    done = run_cli("query", "x", "--workspace", str(file))
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0 and "ws.toml:4:" in done.stderr


def test_workspace_files_and_paths(tmp_path):
    (tmp_path / "sub").mkdir()
    file = tmp_path / "sub" / "ws.toml"
    file.write_text('[[repo]]\npath = "../a"\n\n[[repo]]\npath = "b"\nname = "bee"\nboost = 2\n')
    workspace = load_workspace(file)
    assert [(r.name, r.root, r.boost) for r in workspace.repos] == [
        ("a", (tmp_path / "a").resolve(), 1.0), ("bee", (tmp_path / "sub" / "b").resolve(), 2.0)]
    same = Workspace(tuple(reversed(workspace.repos)))
    assert same.key() == workspace.key() and same.state_dir() == workspace.state_dir()
    assert workspace_of_paths([tmp_path / "a", tmp_path / "c"]).boosts == {"a": 1.0, "c": 1.0}
    with pytest.raises(WorkspaceError, match="second repository named 'a'"):
        workspace_of_paths([tmp_path / "a", tmp_path / "sub" / "a"])


def test_grep_and_symbols_across_repositories(repos):
    from codesearch.api.types import GrepRequest, SymbolsRequest
    service = _service(repos, ("python", 1.0), ("client", 1.0), ("gone", 1.0))
    answer = service.grep(GrepRequest(pattern="compute_backoff", word=True))
    assert {(m.repo, m.path) for m in answer.matches} >= {("python", "inventory.py"), ("client", "app.py")}
    assert answer.total == sum(f.count for f in answer.files) and "gone" in answer.note
    order = list(dict.fromkeys((m.repo, m.path) for m in answer.matches))
    assert [(f.repo, f.path) for f in answer.files] == order  # files in the matches' order
    symbols = service.symbols(SymbolsRequest(query="fetch_with_retry"))
    assert (symbols.symbols[0].repo, symbols.symbols[0].name) == ("client", "fetch_with_retry")
