"""The team store end to end on a real Milvus Lite file: index, update, delete, rename, two
repositories, filters, relations."""

from __future__ import annotations

import pytest
from team_helpers import BILLING, SHIPPING, index, store_fixture, write  # noqa: F401 - the store fixture

from codesearch.config import Settings
from codesearch.filters import Filters
from codesearch.search.requests import RelationsRequest, SearchRequest
from codesearch.team.team_search import Scope, TeamSearcher


def search(store, text: str, scope: Scope | None = None, filters: Filters | None = None, limit: int = 10):
    searcher = TeamSearcher(store, Settings(), None)
    answer = searcher.search(SearchRequest(query=text, mode="keyword", limit=limit, filters=filters or Filters()),
                             scope)
    return [(r.repo, r.path, r.name) for r in answer.results]


def test_a_repository_is_indexed_and_found_by_its_words(store, tmp_path):
    report = index(store, write(tmp_path / "billing", BILLING), "billing")
    assert (report.added, report.generation) == (2, 1)
    found = search(store, "retry backoff")
    assert found[0] == ("billing", "billing/retry.py", "retry_with_backoff")
    again = index(store, tmp_path / "billing", "billing")
    assert (again.added, again.modified, again.unchanged, again.generation) == (0, 0, 2, 1)


def test_only_changed_files_are_written_and_old_rows_go(store, tmp_path):
    root = write(tmp_path / "billing", BILLING)
    index(store, root, "billing")
    (root / "billing/retry.py").write_text("def retry_forever(call):\n    return call()\n")
    report = index(store, root, "billing")
    assert (report.added, report.modified, report.unchanged, report.generation) == (0, 1, 1, 2)
    assert search(store, "backoff") == []
    assert search(store, "retry forever")[0][2] == "retry_forever"
    rows = store.chunks_where('repo == "billing"', 100, ("path", "gen"))
    assert {r["gen"] for r in rows if r["path"] == "billing/retry.py"} == {2}  # the old generation's rows are gone
    assert store.state("billing", "main").chunks == len(rows)  # the state record's count follows the rows


def test_a_deleted_file_leaves_the_store_and_a_renamed_one_moves(store, tmp_path):
    root = write(tmp_path / "billing", BILLING)
    index(store, root, "billing")
    (root / "billing/retry.py").rename(root / "billing/backoff.py")
    (root / "billing/invoice.py").unlink()
    report = index(store, root, "billing")
    assert (report.added, report.deleted) == (1, 2)
    paths = [p for _, p, _ in search(store, "retry backoff")]
    assert paths and set(paths) == {"billing/backoff.py"}
    assert search(store, "invoice total") == []
    state = store.state("billing", "main")
    assert (state.files, state.cleaned) == (1, True)


def test_two_repositories_and_branches_are_searched_together_or_apart(store, tmp_path):
    index(store, write(tmp_path / "billing", BILLING), "billing")
    index(store, write(tmp_path / "ship", SHIPPING), "shipping")
    index(store, write(tmp_path / "ship2", {"ship/route.go": "package ship\n\nfunc PlanRouteByAir() {}\n"}),
          "shipping", branch="air")
    everything = {repo for repo, _, _ in search(store, "route parcel cheapest retry")}
    assert everything == {"billing", "shipping"}
    assert {r for r, _, _ in search(store, "route parcel cheapest retry", Scope(repo="billing"))} == {"billing"}
    names = {n for _, _, n in search(store, "plan route", Scope(repo="shipping", branch="air"))}
    assert "PlanRouteByAir" in names and "PlanRoute" not in names


def test_filters_become_store_expressions(store, tmp_path):
    index(store, write(tmp_path / "billing", BILLING), "billing")
    index(store, write(tmp_path / "ship", SHIPPING), "shipping")
    assert {p for _, p, _ in search(store, "route tax retry", filters=Filters(language="go"))} == {"ship/route.go"}
    assert {p for _, p, _ in search(store, "tax retry invoice", filters=Filters(path_glob="billing/inv*"))} \
        == {"billing/invoice.py"}
    kinds = search(store, "invoice tax retry", filters=Filters(kind="file"))
    assert kinds and all(n.endswith(".py") for _, _, n in kinds)


def test_callers_and_callees_come_from_the_call_sites(store, tmp_path):
    index(store, write(tmp_path / "billing", BILLING), "billing")
    searcher = TeamSearcher(store, Settings(), None)
    callers = searcher.relations(RelationsRequest(name="apply_tax", direction="callers"))
    assert [(r.name, r.repo, r.branch, r.resolution) for r in callers.results] == [
        ("compute_invoice_total", "billing", "main", "exact")]
    callees = searcher.relations(RelationsRequest(name="retry_with_backoff", direction="callees"))
    assert "wait_exponentially" in {r.name for r in callees.results}
    assert searcher.relations(RelationsRequest(name="nothing_here", direction="callers")).note


@pytest.mark.parametrize("text", ["mysql://x", "milvus://", "milvus://relative.db", "milvus:///tmp/x.txt",
                                  "milvus://user:pw@host", "milvus://host:99999"])
def test_a_bad_uri_is_one_line(text):
    from codesearch.team.uri import StoreUriError, parse_store_uri
    with pytest.raises(StoreUriError) as caught:
        parse_store_uri(text)
    assert "\n" not in str(caught.value) and "milvus" in str(caught.value)


def test_the_graph_list_walks_from_the_named_definition_to_what_it_calls(store, tmp_path):
    index(store, write(tmp_path / "billing", BILLING), "billing")
    answer = TeamSearcher(store, Settings(), None).search(SearchRequest(query="compute_invoice_total", mode="graph"))
    names = [r.name for r in answer.results]
    assert names[:1] == ["compute_invoice_total"] and "apply_tax" in names
    assert "retry_with_backoff" not in names and all(r.sources["graph"] for r in answer.results)


def test_a_query_names_a_definition_in_any_case():
    from codesearch.team.team_graph import BranchGraph, definitions_named
    rows = [{"uid": "u1", "chunk_id": "c1", "parent_id": "", "kind": "class", "part": 1, "name": "HTTPException",
             "path": "a.py", "ordinal": 0},
            {"uid": "u2", "chunk_id": "c2", "parent_id": "", "kind": "function", "part": 1, "name": "parse_config",
             "path": "a.py", "ordinal": 1}]
    graph = BranchGraph(rows, [])
    assert definitions_named([graph], ["httpexception"]) == ["u1"]
    assert definitions_named([graph], ["parse_config", "other"]) == ["u2"]
    assert definitions_named([graph], ["parseconfig"]) == []  # as the local lookup: case, not separators
