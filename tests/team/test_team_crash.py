"""A killed indexer leaves the previous state searchable, and the next run completes the work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from team_helpers import BILLING, HELPERS, index, write

from codesearch.config import Settings
from codesearch.search.requests import SearchRequest
from codesearch.team.milvus_store import CHUNKS, EDGES, FILES, is_live, live_files
from codesearch.team.team_search import TeamSearcher

HERE = Path(__file__).resolve().parent
RUN = """
import sys
from pathlib import Path
sys.path.insert(0, {here!r})
from team_helpers import index
from codesearch.team.front import open_store
index(open_store({uri!r}), Path({root!r}), {repo!r})
"""


def index_killed_at(point: str, uri: str, root: Path, repo: str = "billing") -> int:
    env = {**os.environ, "CODESEARCH_FAULT": point}
    code = RUN.format(here=str(HERE), uri=uri, root=str(root), repo=repo)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=120)
    return done.returncode


def names(store, text: str) -> tuple[list[str], bool]:
    answer = TeamSearcher(store, Settings(), None).search(SearchRequest(query=text, mode="keyword"))
    return [r.name for r in answer.results], bool(answer.partial)


def first(store, text: str) -> tuple[str | None, bool]:
    found, partial = names(store, text)
    return (found[0] if found else None), partial


@pytest.mark.parametrize("point", ["team-rows-written", "team-switched"])
def test_a_killed_indexer_leaves_a_searchable_store_that_the_next_run_completes(tmp_path, point):
    from codesearch.team.front import open_store
    uri = f"milvus://{tmp_path}/team.db"
    root = write(tmp_path / "billing", BILLING)
    store = open_store(uri)
    index(store, root, "billing")
    store.close()
    (root / "billing/retry.py").write_text("def retry_forever(call):\n    return call()\n")
    assert index_killed_at(point, uri, root) == -9
    store = open_store(uri)
    found, partial = names(store, "retry backoff forever")
    if point == "team-rows-written":  # not switched: the previous generation answers, flagged partial
        assert "retry_with_backoff" in found and "retry_forever" not in found and partial
    else:  # switched, not cleaned: the new generation answers; the replaced rows are invisible
        assert "retry_forever" in found and "retry_with_backoff" not in found and not partial
    report = index(store, root, "billing")
    assert report.generation == 2  # written again after a kill before the switch; nothing new after it
    rows = store.chunks_where('repo == "billing" and path == "billing/retry.py"', 100, ("name", "gen"))
    assert {r["gen"] for r in rows} == {2} and "retry_with_backoff" not in {r["name"] for r in rows}
    found, partial = names(store, "retry backoff forever")
    assert found[0] == "retry_forever" and "retry_with_backoff" not in found and not partial
    store.close()


def test_a_run_marks_its_branch_partial_only_from_its_first_write(tmp_path):
    """Answered while a run parses, a branch is not partial: with nothing changed it never is,
    with changes not before the run writes (its killed run's mark goes with its rows)."""
    from codesearch.team.front import open_store
    uri = f"milvus://{tmp_path}/team.db"
    root = write(tmp_path / "billing", BILLING)
    store = open_store(uri)
    index(store, root, "billing")
    store.close()
    assert index_killed_at("team-parsed", uri, root) == -9  # nothing changed
    store = open_store(uri)
    assert first(store, "retry backoff") == ("retry_with_backoff", False)
    store.close()
    (root / "billing/retry.py").write_text("def retry_forever(call):\n    return call()\n")
    assert index_killed_at("team-parsed", uri, root) == -9  # a change found, not yet written
    store = open_store(uri)
    assert first(store, "retry backoff") == ("retry_with_backoff", False)
    store.close()
    assert index_killed_at("team-rows-written", uri, root) == -9
    store = open_store(uri)
    assert first(store, "retry backoff") == ("retry_with_backoff", True)
    assert index(store, root, "billing").generation == 2
    assert first(store, "retry forever") == ("retry_forever", False)
    store.close()


def test_a_row_is_live_where_its_files_live_generation_is_its_own(tmp_path):
    """A chunk is live at its file's content generation, an edge and a file row at the file's
    newest row's: an unchanged caller rewired by a change elsewhere keeps its chunks and has new
    edges; the rows the switch replaced (left by a run killed after it) are live in no map."""
    from codesearch.team.front import open_store
    uri = f"milvus://{tmp_path}/team.db"
    root = write(tmp_path / "helpers", HELPERS)
    store = open_store(uri)
    index(store, root, "helpers")
    store.close()
    write(root, {"pkg/helpers.py": "def assist():\n    return 1\n\n\ndef helper():\n    return 3\n"})
    assert index_killed_at("team-switched", uri, root, "helpers") == -9
    store = open_store(uri)
    state = store.state("helpers", "main")
    live = live_files(store.file_rows("helpers", "main", state.live_gen))
    for name, stored, alive in ((CHUNKS, {1}, {1}), (EDGES, {1, 2}, {2}), (FILES, {1, 2}, {2})):
        rows = list(store.rows(name, 'repo == "helpers" and path == "pkg/main.py"', ("path", "gen")))
        assert ({r["gen"] for r in rows}, {r["gen"] for r in rows if is_live(r, live, name)}) == (stored, alive)
    assert not is_live({"path": "pkg/main.py", "gen": 1}, None)  # a branch not covered
    store.close()
