"""The graph as the catalog holds it: resolved calls are edges, calls resolution can only guess at
are answered by name when asked (never stored as edges), and reads go node by node."""

from __future__ import annotations

import numpy as np
import pytest

from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.relations import definitions_named, neighbours
from codesearch.store.call_graph import CallGraph
from codesearch.store.graph_reads import GUESS_WEIGHT, MAX_CANDIDATES
from codesearch.store.schema import CALLS, CONTAINS


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "jobs").mkdir(parents=True)
    for i in range(MAX_CANDIDATES + 1):  # one name, defined once too often to be resolved by guessing
        (root / "jobs" / f"job_{i}.py").write_text(f"class Job{i}:\n    def resume(self):\n        return {i}\n")
    (root / "runner.py").write_text("def run_all(jobs):\n    for job in jobs:\n        resume(job)\n"
                                    "    return helper()\n\n\ndef helper():\n    return 1\n")
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)
    yield index
    index.close()


def ids_named(index: Index, name: str) -> list[str]:
    return definitions_named(index.catalog, name)


def test_a_guessed_call_stores_no_edge_but_answers_callers_and_callees(repo):
    graph = CallGraph(repo.catalog)
    resumes = sorted(ids_named(repo, "resume"), key=lambda i: repo.catalog.files.chunks_by_ids([i])[i].path)
    run_all, helper = ids_named(repo, "run_all")[0], ids_named(repo, "helper")[0]
    stored = repo.catalog.db.execute(f"SELECT COUNT(*) FROM edges WHERE kind = {CALLS}").fetchone()[0]
    assert stored == 1  # run_all -> helper, resolved in its file; the guess is not stored

    callees = {r.id: r.weight for r in neighbours(graph, [run_all], "callees")}
    share = GUESS_WEIGHT / MAX_CANDIDATES
    assert callees[helper] == 1.0
    assert {i: w for i, w in callees.items() if i != helper} == dict.fromkeys(resumes[:MAX_CANDIDATES], share)
    assert next(r.id for r in neighbours(graph, [run_all], "callees")) == helper  # heaviest first

    first, last = resumes[0], resumes[-1]  # candidate order is by path: job_0 first, job_8 ninth
    assert [(r.id, r.weight) for r in neighbours(graph, [first], "callers")] == [(run_all, share)]
    assert neighbours(graph, [last], "callers") == []  # past the first MAX_CANDIDATES: not guessed at
    weights = repo.catalog.graph.caller_weights([first, last, helper])
    assert weights == {first: share, helper: 1.0}


def test_a_new_definition_turns_a_guess_into_an_edge(repo):
    (repo.root / "runner.py").write_text("from jobs.job_3 import Job3\n\n\ndef run_all(jobs):\n"
                                         "    for job in jobs:\n        job.resume()\n")
    Indexer(repo).run(embed=False)
    graph = CallGraph(repo.catalog)
    run_all = ids_named(repo, "run_all")[0]
    callees = neighbours(graph, [run_all], "callees")
    job3 = [i for i in ids_named(repo, "resume") if repo.catalog.files.chunks_by_ids([i])[i].path == "jobs/job_3.py"]
    assert [(r.id, r.weight) for r in callees] == [(job3[0], 1.0)]  # the import says which: resolved


def test_adjacency_reads_edges_either_way_and_containment(repo):
    graph = CallGraph(repo.catalog)
    run_all, helper = ids_named(repo, "run_all")[0], ids_named(repo, "helper")[0]
    rids = graph.rids_of([run_all, helper])
    adjacency = graph.adjacency(np.array([rids[helper]]))
    pairs = {(int(n), int(k)) for n, k in zip(adjacency.neighbour, adjacency.kind)}
    file_rid = repo.catalog.db.execute("SELECT parent FROM chunks WHERE rid = ?", (rids[helper],)).fetchone()[0]
    assert pairs == {(rids[run_all], CALLS), (file_rid, CONTAINS)}


def _edges(index: Index) -> tuple[list, list]:
    db = index.catalog.db
    edges = db.execute("SELECT a.id, e.kind, b.id, e.weight FROM edges e JOIN chunks a ON a.rid = e.src "
                       "JOIN chunks b ON b.rid = e.dst ORDER BY 1, 2, 3").fetchall()
    guesses = db.execute("SELECT c.id, n.name, k.line, k.guess FROM calls k JOIN chunks c ON c.rid = k.caller "
                         "JOIN names n ON n.nid = k.nid ORDER BY 1, 2, 3").fetchall()
    return edges, guesses


def _read_with_and_without_crowding(root, index_root, monkeypatch, read):
    """`read(index)` of the repository indexed with edges.CROWDED as it is and at 0 (every name
    crowded): what a crowded name's shortcuts must not change."""
    from codesearch.store import edges
    found = {}
    for crowded in (edges.CROWDED, 0):
        monkeypatch.setattr(edges, "CROWDED", crowded)
        index = Index(root, load_settings(root), index_root / f"index{crowded}", create=True)
        Indexer(index).run(embed=False)
        found[crowded] = read(index)
        index.close()
    return found[edges.CROWDED], found[0]


@pytest.mark.parametrize("language", ["python", "kotlin", "typescript", "rust"])
def test_crowded_names_resolve_as_if_every_definition_were_read(tmp_path, monkeypatch, language):
    """A name defined more than CROWDED times is read only in the files a slice's calls reach:
    the same edges and the same guesses as reading all of its definitions, here with every name
    crowded, on copies of a sample repository (each name defined once a copy, and called from each)."""
    import shutil
    from pathlib import Path

    sample = Path(__file__).resolve().parents[2] / "sample_repos" / language
    root = tmp_path / "tree"
    for copy in range(3):
        shutil.copytree(sample, root / f"copy{copy}")
    (root / "main.py").write_text("from copy0 import x\n\n\ndef main():\n    return helper() + run()\n")
    usual, all_crowded = _read_with_and_without_crowding(root, tmp_path, monkeypatch, _edges)
    assert all_crowded == usual and all_crowded[0]


def test_a_definition_is_read_once_whatever_case_variants_are_asked_with_it(tmp_path):
    """`Map` and `map` in two slices of an IN list both match a row in any case: it was counted
    twice, and a call resolved to it in its file got half the weight."""
    from codesearch.store.graph_reads import definitions_in_order
    from codesearch.store.sql import SQL_IN_SLICE
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def map(x):\n    return x\n\n\ndef use():\n    return map(1)\n")
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)
    names = ["Map", *(f"N{i}" for i in range(SQL_IN_SLICE)), "map"]  # sorted: Map, N..., map
    rows = definitions_in_order(index.catalog.db, names)
    assert [r.name for r in rows] == ["map"]
    use, mapped = ids_named(index, "use")[0], ids_named(index, "map")[0]
    assert [(r.id, r.weight) for r in neighbours(CallGraph(index.catalog), [use], "callees")] == [(mapped, 1.0)]
    index.close()


def test_a_crowded_name_resolves_through_imports_and_a_lone_name_uniquely(tmp_path, monkeypatch):
    """The two choices that need more than a crowded name's definitions in the caller's file: the
    files the caller imports (its import statement does not mention the name), and a name with
    one definition anywhere."""
    from codesearch.store import edges
    root = tmp_path / "repo"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "tools.py").write_text("def helper():\n    return 1\n")
    (root / "lib" / "single.py").write_text("def only_here():\n    return 2\n")
    for i in range(4):
        (root / f"copy{i}").mkdir()
        (root / f"copy{i}" / "other.py").write_text("def helper():\n    return 3\n")
    (root / "app.py").write_text("import lib.tools as t\n\n\ndef main():\n    return t.helper() + only_here()\n")
    for crowded in (edges.CROWDED, 0):
        monkeypatch.setattr(edges, "CROWDED", crowded)
        index = Index(root, load_settings(root), tmp_path / f"index{crowded}", create=True)
        Indexer(index).run(embed=False)
        main = ids_named(index, "main")[0]
        chunks = index.catalog.files.chunks_by_ids(ids_named(index, "helper") + ids_named(index, "only_here"))
        callees = {(chunks[r.id].path, chunks[r.id].name): r.weight
                   for r in neighbours(CallGraph(index.catalog), [main], "callees") if r.id in chunks}
        assert callees == {("lib/tools.py", "helper"): 1.0, ("lib/single.py", "only_here"): 1.0}, crowded
        index.close()


def test_a_full_resolution_on_the_workers_gives_what_one_process_gives(tmp_path, monkeypatch):
    """The slices of a full resolution worked out on the extraction workers, each reading the
    catalog as committed, are the edges and guesses of one process resolving them in turn."""
    import shutil
    from pathlib import Path

    from codesearch.ingest import extract
    from codesearch.store import edges
    sample = Path(__file__).resolve().parents[2] / "sample_repos" / "python"
    root = tmp_path / "tree"
    for copy in range(3):
        shutil.copytree(sample, root / f"copy{copy}")
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)
    monkeypatch.setattr(edges, "RESOLVE_SLICE", 7)  # many slices
    monkeypatch.setattr(edges, "FANNED_SLICE", 1)
    found = {}
    try:
        for fan_out in (None, extract.map_on_workers):
            with index.catalog.transaction() as db:
                edges.resolve_call_edges(db, set(), set(), everything=True, fan_out=fan_out)
            found[fan_out is None] = _edges(index)
        assert extract._pool is not None  # the workers did it: they did not break
        index.close()
        # the workers keep no connection open: the last one closed took the WAL file with it
        assert not index.catalog.path.with_name(index.catalog.path.name + "-wal").exists()
    finally:
        index.close()
        extract.shutdown_pool()
    edges, guesses = found[True]
    assert found[False] == found[True] and edges and guesses


def test_a_full_resolution_on_the_workers_is_cut_into_a_slice_for_each_core(tmp_path, monkeypatch):
    """A repository whose callers fit in one slice is still resolved a slice a core where the
    slices go to the workers (one slice left every core but one idle), and in one slice where not."""
    from pathlib import Path

    from codesearch.store import edges
    sample = Path(__file__).resolve().parents[2] / "sample_repos" / "python"
    index = Index(sample, load_settings(sample), tmp_path / "index", create=True)
    Indexer(index).run(embed=False)
    monkeypatch.setattr(edges, "FANNED_SLICE", 1)
    monkeypatch.setattr(edges.os, "cpu_count", lambda: 2)
    db = index.catalog.db
    callers = db.execute("SELECT COUNT(DISTINCT caller) FROM calls").fetchone()[0]
    fanned = list(edges._caller_slices(db, edges._fanned_slice(db)))
    assert callers > 2 and len(fanned) == 2 and sum(map(len, fanned)) == callers
    assert len(list(edges._caller_slices(db, edges.RESOLVE_SLICE))) == 1
    index.close()


def test_a_crowded_name_drops_the_definitions_a_later_one_replaces_in_files_its_slice_does_not_reach(
        tmp_path, monkeypatch):
    """`@overload` stubs, then the method a call reaches: read for a crowded name two imports
    away from the caller (past the files its slice holds), the stubs are dropped as they are
    where every definition is read."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "shapes.py").write_text("from typing import overload\n\n\nclass Shape:\n    @overload\n"
                                    "    def area(self, x: int) -> int: ...\n    @overload\n"
                                    "    def area(self, x: str) -> str: ...\n    def area(self, x):\n"
                                    "        return x\n")
    (root / "middle.py").write_text("import shapes\n")
    (root / "app.py").write_text("import middle\n\n\ndef main(shape):\n    return shape.area(1)\n")
    usual, all_crowded = _read_with_and_without_crowding(
        root, tmp_path, monkeypatch,
        lambda index: [(r.id, r.weight)
                       for r in neighbours(CallGraph(index.catalog), ids_named(index, "main"), "callees")])
    assert all_crowded == usual and len(all_crowded) == 1
