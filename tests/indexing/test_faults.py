"""Fault injection: kill -9 at named points of indexing and of the daemon's writer and embedder
(hooks in codesearch/faults.py, not timing luck), then `index --verify`; the index must then be
consistent and equal to a fresh index of the same tree: files, chunks, edges, vector ids."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from index_helpers import (
    REPO_ROOT,
    assert_vectors_mirror_catalog,
    build_large_tree,
    catalog_chunk_ids,
    cli_command,
    cli_env,
    run_cli,
    snapshot,
)

CATALOG = "catalog.sqlite3"


_FRESH: dict[str, tuple[dict, set[str], set[str]]] = {}  # by the tree's content: cases share few trees


def index_names(catalog: Path) -> set[str]:
    """The catalog's indexes (a first index killed half way was writing without some of them)."""
    db = sqlite3.connect(catalog)
    try:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    finally:
        db.close()


def tree_digest(tree: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(p for p in tree.rglob("*") if p.is_file() and ".codesearch" not in p.parts):
        digest.update(path.relative_to(tree).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def fresh_state(tree: Path, work: Path) -> tuple[dict, set[str], set[str]]:
    """What a clean index of `tree` holds (built on a copy, once per distinct tree)."""
    key = tree_digest(tree)
    if key not in _FRESH:
        clean = work / "clean"
        shutil.copytree(tree, clean, ignore=shutil.ignore_patterns(".codesearch"))
        done = run_cli("index", clean, "-q")
        assert done.returncode == 0, done.stderr
        catalog = clean / ".codesearch" / CATALOG
        _FRESH[key] = snapshot(catalog), catalog_chunk_ids(catalog), index_names(catalog)
    return _FRESH[key]


def faulted(*args: object, fault: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**cli_env(), "CODESEARCH_FAULT": fault}
    return subprocess.run(cli_command(*args), cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def verify_and_compare(repo: Path, work: Path) -> None:
    """`index --verify` reports a sound index, and it is the fresh index of the tree."""
    done = run_cli("index", repo, "--verify", "--json", "-q")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verified"] is True
    expected, expected_ids, expected_indexes = fresh_state(repo, work)
    recovered = snapshot(repo / ".codesearch" / CATALOG)
    for part in ("files", "chunks", "edges", "calls", "imports"):
        assert recovered[part] == expected[part], part
    assert catalog_chunk_ids(repo / ".codesearch" / CATALOG) == expected_ids
    assert index_names(repo / ".codesearch" / CATALOG) == expected_indexes
    assert_vectors_mirror_catalog(repo)  # every chunk has its vector, and Chroma holds no other


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """250 files: five write batches, call edges across them, ~550 chunks to embed."""
    return build_large_tree(tmp_path_factory.mktemp("faults") / "tree", generated=200,
                            languages=("python", "go"), definitions=True)


@pytest.fixture(scope="module")
def indexed_tree(tree, tmp_path_factory):
    """The tree with its finished index, built once (cases that start from it copy it)."""
    copy = Path(shutil.copytree(tree, tmp_path_factory.mktemp("faults-indexed") / "tree"))
    done = run_cli("index", copy, "-q")
    assert done.returncode == 0, done.stderr
    return copy


@pytest.fixture
def repo(tree, tmp_path):
    return Path(shutil.copytree(tree, tmp_path / "repo"))


@pytest.fixture
def indexed_repo(indexed_tree, tmp_path):
    return Path(shutil.copytree(indexed_tree, tmp_path / "repo"))


def delete_some(repo: Path) -> None:
    for path in sorted((repo / "gen").rglob("mod_1*.py"))[:20]:
        path.unlink()


# (checkpoint, what to do before the faulted run: "" for a fresh tree)
INDEXER_FAULTS = [
    ("index.walked", ""),
    ("index.batch.midway:2", ""),  # inside the second write transaction
    ("index.batch.written:3", ""),
    ("index.edges.midway", ""),  # import edges rebuilt, call edges not
    ("vectors.upserting@40", ""),  # killed inside Chroma's write of the first slice
    ("vectors.upserted:2", ""),  # a slice in Chroma, not recorded in the catalog
    ("vectors.marked:1", ""),
    ("index.finishing", ""),
    ("vectors.deleted", "delete"),  # vectors of deleted chunks gone from Chroma, still listed
    ("index.batch.midway", "edit"),  # an incremental run over an indexed tree
]


@pytest.mark.parametrize("fault, before", INDEXER_FAULTS, ids=[f for f, _ in INDEXER_FAULTS])
def test_kill_9_in_the_indexer_then_verify_gives_the_fresh_index(request, tmp_path, fault, before):
    repo = request.getfixturevalue("indexed_repo" if before else "repo")
    if before == "delete":
        delete_some(repo)
    elif before == "edit":
        for path in sorted((repo / "gen").rglob("mod_0*.py"))[:80]:
            path.write_text(path.read_text() + "\n\ndef extra_helper():\n    return 1\n")
    done = faulted("index", repo, "-q", fault=fault)
    assert done.returncode == -signal.SIGKILL, f"the fault {fault} was not reached: {done.stderr[-500:]}"
    verify_and_compare(repo, tmp_path)


def start_daemon(repo: Path, fault: str) -> int:
    env = {**cli_env(), "CODESEARCH_FAULT": fault}
    done = subprocess.run(cli_command("daemon", "start", repo, "--json"), cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["pid"]


def wait_killed(pid: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] \
            if Path(f"/proc/{pid}/stat").exists() else "X"
        if state in ("Z", "X"):
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError("the daemon did not reach its fault point")


DAEMON_FAULTS = ["daemon.applying:2", "daemon.applied:2", "vectors.upserting@30", "vectors.marked:2"]


@pytest.mark.parametrize("fault", DAEMON_FAULTS)
def test_kill_9_in_the_daemon_then_verify_gives_the_fresh_index(indexed_repo, tmp_path, fault):
    """The daemon serves an indexed tree; a burst of new files makes its writer apply a batch and
    its embedder embed it; the fault kills it on the way."""
    repo = indexed_repo
    pid = start_daemon(repo, fault)
    try:
        burst = repo / "burst"
        burst.mkdir()
        for i in range(120):
            (burst / f"b{i:03d}.py").write_text(f"def burst_function_{i}(x):\n    return x + {i}\n")
        wait_killed(pid)
    finally:
        run_cli("daemon", "stop", repo)
    verify_and_compare(repo, tmp_path)
