"""The graph as the catalog holds it: resolved calls are edges, calls resolution can only guess at
are answered by name when asked (never stored as edges), and reads go node by node."""

from __future__ import annotations

import numpy as np
import pytest

from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.relations import definitions_named, neighbours
from codesearch.store.catalog import GUESS_WEIGHT, MAX_CANDIDATES
from codesearch.store.graph import CALLS, CONTAINS, CallGraph


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "jobs").mkdir(parents=True)
    for i in range(MAX_CANDIDATES + 1):  # one name, defined once too often to be resolved by guessing
        (root / "jobs" / f"job_{i}.py").write_text(f"class Job{i}:\n    def resume(self):\n        return {i}\n")
    (root / "runner.py").write_text("def run_all(jobs):\n    for job in jobs:\n        job.resume()\n"
                                    "    return helper()\n\n\ndef helper():\n    return 1\n")
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)
    yield index
    index.close()


def ids_named(index: Index, name: str) -> list[str]:
    return definitions_named(index.catalog, name)


def test_a_guessed_call_stores_no_edge_but_answers_callers_and_callees(repo):
    graph = CallGraph(repo.catalog)
    resumes = sorted(ids_named(repo, "resume"), key=lambda i: repo.catalog.chunks_by_ids([i])[i].path)
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
    weights = repo.catalog.caller_weights([first, last, helper])
    assert weights == {first: share, helper: 1.0}


def test_a_new_definition_turns_a_guess_into_an_edge(repo):
    (repo.root / "runner.py").write_text("from jobs.job_3 import Job3\n\n\ndef run_all(jobs):\n"
                                         "    for job in jobs:\n        job.resume()\n")
    Indexer(repo).run(embed=False)
    graph = CallGraph(repo.catalog)
    run_all = ids_named(repo, "run_all")[0]
    callees = neighbours(graph, [run_all], "callees")
    job3 = [i for i in ids_named(repo, "resume") if repo.catalog.chunks_by_ids([i])[i].path == "jobs/job_3.py"]
    assert [(r.id, r.weight) for r in callees] == [(job3[0], 1.0)]  # the import says which: resolved


def test_adjacency_reads_edges_either_way_and_containment(repo):
    graph = CallGraph(repo.catalog)
    run_all, helper = ids_named(repo, "run_all")[0], ids_named(repo, "helper")[0]
    rids = graph.rids_of([run_all, helper])
    adjacency = graph.adjacency(np.array([rids[helper]]))
    pairs = {(int(n), int(k)) for n, k in zip(adjacency.neighbour, adjacency.kind)}
    file_rid = repo.catalog.db.execute("SELECT parent FROM chunks WHERE rid = ?", (rids[helper],)).fetchone()[0]
    assert pairs == {(rids[run_all], CALLS), (file_rid, CONTAINS)}
