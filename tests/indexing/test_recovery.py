"""Stores that heal: a damaged or missing vector store, or a damaged catalog, is detected without
a crash, reported in one line, answered around (keyword and graph, `partial`), and rebuilt from
what the catalog (and its embedding cache) holds, by `codesearch index` or by a daemon.

The tree is large enough (1,500 vectors) that Chroma keeps most of them in its HNSW files: small
stores live in Chroma's log, which shrugs off damage to those files."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from index_helpers import build_large_tree, run_cli

from codesearch.store.schema import LAYOUT_VERSION
from codesearch.store.sqlite import sqlite3

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))
from daemon_helpers import Daemon, wait_for

QUERY = "helper module imports"


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    """A tree of 1,500 small modules, indexed with vectors once (copied by each test)."""
    repo = build_large_tree(tmp_path_factory.mktemp("embedded") / "repo", generated=1500, languages=("python",))
    done = run_cli("index", repo, "--json", "-q", timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["vectors_embedded"] > 1000
    segments = list((repo / ".codesearch" / "chroma").glob("*/data_level0.bin"))
    assert segments and segments[0].stat().st_size > 1_000_000  # the vectors are in the HNSW files
    return repo


@pytest.fixture
def repo(embedded, tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(embedded, copy, symlinks=True)
    return copy


def segment(repo: Path) -> Path:
    return next((repo / ".codesearch" / "chroma").glob("*-*-*-*-*"))


def garbage_in_hnsw(repo: Path) -> None:
    data = segment(repo) / "data_level0.bin"
    size = data.stat().st_size
    with open(data, "r+b") as handle:
        handle.seek(size // 3)
        handle.write(os.urandom(size // 3))


def truncated_hnsw_header(repo: Path) -> None:
    os.truncate(segment(repo) / "header.bin", 10)


def missing_hnsw_links(repo: Path) -> None:
    (segment(repo) / "link_lists.bin").unlink()


def deleted_vector_folder(repo: Path) -> None:
    shutil.rmtree(repo / ".codesearch" / "chroma")


DAMAGE = {"garbage in the HNSW data (a segfault)": garbage_in_hnsw,
          "a truncated HNSW header (an abort)": truncated_hnsw_header,
          "missing HNSW links (InternalError)": missing_hnsw_links}


def hybrid(repo: Path) -> dict:
    done = run_cli("query", QUERY, "--repo", repo, "--json", "--no-daemon", timeout=300)
    assert done.returncode == 0, done.stderr  # never a crash (exit 139 or 134 before)
    return json.loads(done.stdout)


def index(repo: Path, *flags: str) -> dict:
    done = run_cli("index", repo, "--json", "-q", *flags, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("damage", list(DAMAGE.values()), ids=list(DAMAGE))
def test_a_damaged_vector_store_is_answered_around_and_rebuilt_by_index(repo, damage):
    damage(repo)

    answer = hybrid(repo)
    assert answer["results"] and answer["partial"] is True
    assert "vector store is damaged" in answer["note"]
    stats = json.loads(run_cli("stats", "--repo", repo, "--json").stdout)
    assert "damaged" in stats["vector_store_error"]

    report = index(repo)  # no flag: index repairs what it finds
    assert "damaged" in report["vectors_repaired"]
    assert report["vectors_embedded"] == 0 and report["vectors_from_cache"] > 1000  # from the cache

    answer = hybrid(repo)
    assert answer["results"] and "partial" not in answer and "note" not in answer
    assert any(r["sources"]["vector"] for r in answer["results"])
    verified = index(repo, "--verify")
    assert verified["verified"] is True and verified["vectors_reconciled"] == 0 and not verified["vectors_repaired"]


def test_doctor_names_a_damaged_vector_store_and_its_fix(repo):
    garbage_in_hnsw(repo)
    done = run_cli("doctor", repo, "--json", "--fast", timeout=300)
    assert done.returncode == 1, done.stderr  # something needs action
    report = json.loads(done.stdout)
    vectors = [c for c in report["checks"] if c["area"] == "vectors"]
    assert report["healthy"] is False and vectors[0]["status"] == "fail"
    assert "damaged" in vectors[0]["detail"] and f"codesearch index {repo}" in vectors[0]["fix"]
    index(repo)  # the fix it names
    done = run_cli("doctor", repo, "--json", "--fast", timeout=300)
    assert done.returncode == 0 and json.loads(done.stdout)["healthy"]


def test_a_deleted_vector_folder_is_restored_from_the_cache(repo):
    deleted_vector_folder(repo)
    answer = hybrid(repo)
    assert answer["results"]
    report = index(repo)
    assert report["vectors_embedded"] == 0 and report["vectors_from_cache"] > 1000
    assert index(repo, "--verify")["vectors_reconciled"] == 0
    assert "partial" not in hybrid(repo)


def test_verify_finds_vectors_the_store_lost(repo):
    from codesearch.config import load_settings
    from codesearch.indexing.index import Index
    index_ = Index(repo, load_settings(repo))
    try:
        lost = sorted(index_.vectors.store.ids())[:25]
        index_.vectors.store.delete(lost)
    finally:
        index_.close()
    report = index(repo, "--verify")
    assert report["verified"] is True and report["vectors_reconciled"] == 25
    assert report["vectors_embedded"] == 0 and report["vectors_from_cache"] == 25
    assert index(repo, "--verify")["vectors_reconciled"] == 0


def test_a_truncated_catalog_gets_a_clear_message_and_rebuild_keeps_the_cache(repo):
    catalog = repo / ".codesearch" / "catalog.sqlite3"
    os.truncate(catalog, catalog.stat().st_size // 3)
    done = run_cli("query", QUERY, "--repo", repo, "--mode", "keyword", "--no-daemon")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "damaged" in lines[0] and "--rebuild" in lines[0] and "Traceback" not in done.stderr
    verify = run_cli("index", repo, "--verify")
    assert verify.returncode == 1 and "--rebuild" in verify.stderr

    report = index(repo, "--rebuild")
    assert report["rebuilt"] and report["added"] > 1500
    answer = hybrid(repo)
    assert answer["results"] and "partial" not in answer
    assert index(repo, "--verify")["verified"] is True


def test_verify_removes_vectors_the_catalog_does_not_name(repo):
    from codesearch.config import load_settings
    from codesearch.indexing.index import Index
    index_ = Index(repo, load_settings(repo))
    try:
        stray = np.ones((1, index_.vector_dimension()), dtype=np.float32)
        index_.vectors.store.upsert(["0123456789abcdef"], stray,
                                    [{"path": "gone.py", "language": "python", "kind": "file"}])
    finally:
        index_.close()
    report = index(repo, "--verify")
    assert report["verified"] is True and report["vectors_reconciled"] == 1
    assert index(repo, "--verify")["vectors_reconciled"] == 0


def test_verify_reads_the_stores_whole_list_only_when_it_holds_strays(repo, monkeypatch):
    """The ids the catalog names are looked up; listing the store (by offset, slow in a big one)
    is for finding strays, which its count shows there are none of."""
    from codesearch.config import load_settings
    from codesearch.indexing.index import Index
    from codesearch.indexing.indexer import Indexer
    from codesearch.store.chroma import VectorStore
    listed = []
    monkeypatch.setattr(VectorStore, "ids", lambda store: listed.append(store) or set())
    index_ = Index(repo, load_settings(repo))
    try:
        assert Indexer(index_).vectors.verify() == (0, 0)
        assert not listed
    finally:
        index_.close()


def test_a_daemon_rebuilds_a_damaged_vector_store_by_itself(repo, request):
    garbage_in_hnsw(repo)
    daemon = Daemon(repo)
    request.addfinalizer(daemon.cleanup)
    daemon.start()
    assert daemon.search(QUERY, mode="keyword")["results"]  # served while it repairs
    # the share answers report is the status's own (counted again at most once a second)
    wait_for(lambda: (status := daemon.status())["embedding"]["chunks_without_vectors"] == 0
             and status["model_ready"] and status["embedded_share"] == 1.0,
             timeout=300, what="the vectors to be rebuilt")
    answer = daemon.search(QUERY, mode="hybrid", timeout=120)
    assert answer["results"] and "partial" not in answer
    assert "rebuilding it from the catalog" in daemon.log_file.read_text()
    verified = daemon.call("index", {"verify": True, "timeout": 300}, timeout=330)
    assert verified["verified"] is True and verified["vectors_reconciled"] == 0


def test_a_daemon_rebuilds_a_damaged_catalog_by_itself(repo, request):
    catalog = repo / ".codesearch" / "catalog.sqlite3"
    with open(catalog, "r+b") as handle:  # damage pages in the middle; the header stays
        handle.seek(catalog.stat().st_size // 2)
        handle.write(b"\xde\xad" * 8192)
    daemon = Daemon(repo)
    request.addfinalizer(daemon.cleanup)
    daemon.start(timeout=300)
    assert daemon.search("mod_0007")["results"]
    assert "index database is damaged" in daemon.log_file.read_text()
    assert daemon.status()["files"] > 1500


def test_a_daemon_upgrading_an_older_layout_keeps_the_vectors_the_store_holds(repo, request):
    """The daemon rebuilds a catalog of layout 2 while its embedder runs beside: Chroma keeps the
    vectors of the chunks that come back, and ends holding exactly what the catalog says."""
    catalog = repo / ".codesearch" / "catalog.sqlite3"
    db = sqlite3.connect(catalog)
    try:
        (held,), = db.execute("SELECT COUNT(*) FROM chunks WHERE vector_hash IS NOT NULL").fetchall()
        db.execute("PRAGMA user_version = 2")  # its chunks name their vectors as layout 3's do
    finally:
        db.close()
    daemon = Daemon(repo)
    request.addfinalizer(daemon.cleanup)
    daemon.start(timeout=300)
    wait_for(lambda: daemon.status()["embedding"]["chunks_without_vectors"] == 0 and daemon.status()["model_ready"],
             timeout=300, what="the vectors to be settled")
    log = daemon.log_file.read_text()
    assert f"format 2, now {LAYOUT_VERSION}" in log
    kept = int(re.search(r"kept ([\d,]+) vectors the store already held; 0 to delete", log)[1].replace(",", ""))
    assert kept == held  # the embedder waited: none stored again from the cache meanwhile
    verified = daemon.call("index", {"verify": True, "timeout": 300}, timeout=330)
    assert verified["verified"] is True and verified["vectors_reconciled"] == 0
    answer = daemon.search(QUERY, mode="hybrid", timeout=120)
    assert answer["results"] and "partial" not in answer


def test_a_store_a_killed_process_had_open_is_probed_before_use(repo):
    """A marker left by a dead process makes the next one probe first (here the store is fine)."""
    marker = repo / ".codesearch" / "vectors.open.999999"
    marker.touch()
    started = time.monotonic()
    assert hybrid(repo)["results"]
    assert not marker.exists()  # probed, found sound, forgotten
    assert time.monotonic() - started < 120
