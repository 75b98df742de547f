"""Integration tests of indexing with the real stack: SQLite catalog, Chroma, all-MiniLM-L6-v2.

The model loads once in this process (module fixture `model`) and once in each CLI subprocess
that has something to embed; tests that need a fresh index copy one that is already built.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from index_helpers import (
    CALL_ROWS,
    CHUNK_ROWS,
    EDGE_ROWS,
    IMPORT_ROWS,
    IS_ROOT,
    CliProcess,
    assert_vectors_mirror_catalog,
    build_large_tree,
    catalog_chunk_ids,
    chroma_ids,
    copy_sample,
    copy_tree,
    free_port,
    open_index,
    query_catalog,
    run_cli,
    run_indexer,
    run_main,
    shared_embedders,
    snapshot,
    try_count,
    wait_for_http,
)

from codesearch.analysis.embed_text import embed_text_of, worth_embedding
from codesearch.config import load_settings
from codesearch.indexing.index import IndexLock
from codesearch.ingest.extract import extract
from codesearch.ingest.languages import language_for_path
from codesearch.store.files import Files
from codesearch.store.schema import CHUNKS_DELETED_TRIGGER, SCHEMA_VERSION
from codesearch.store.sqlite import sqlite3

CATALOG = "catalog.sqlite3"


# --- fixtures ---------------------------------------------------------------------------------
@pytest.fixture(scope="module", autouse=True)
def model():
    """One loaded model for every in-process Index of this module (loaded on first use)."""
    with shared_embedders() as loaded:
        yield loaded


@pytest.fixture(autouse=True)
def no_leftover_processes():
    yield
    CliProcess.kill_leftovers()


@pytest.fixture(scope="module")
def python_indexed(tmp_path_factory):
    """A copy of sample_repos/python indexed by `codesearch index PATH --json` in a subprocess."""
    repo = copy_sample("python", tmp_path_factory.mktemp("python-indexed") / "repo")
    proc = run_cli("index", repo, "--json")
    return repo, proc


@pytest.fixture
def python_repo(python_indexed, tmp_path):
    """A fresh copy of the indexed python repository, its index (repo/.codesearch) included."""
    repo, proc = python_indexed
    assert proc.returncode == 0, proc.stderr
    return copy_tree(repo, tmp_path / "repo")


def catalog_of(repo: Path) -> Path:
    return repo / ".codesearch" / CATALOG


def embedded_texts(rel: str, data: bytes, settings) -> dict[str, str]:
    """chunk id -> the text the model sees, computed from the extraction pipeline itself (chunks
    that get a vector: see embed_min_chars)."""
    result = extract(rel, data, language_for_path(rel), settings)
    return {c.id: embed_text_of(c, settings.embed_body_lines, settings.embed_words)
            for c in result.chunks if worth_embedding(c.kind, c.docstring, c.text, settings.embed_min_chars)}


def chunk_rows(catalog: Path, path: str) -> list[tuple]:
    return query_catalog(catalog, f"SELECT id, kind, qualified_name FROM ({CHUNK_ROWS}) WHERE path = ?", (path,))


# --- 1. full index through the CLI ------------------------------------------------------------
def test_full_index_via_cli(python_indexed):
    repo, proc = python_indexed
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    report = json.loads(proc.stdout)
    assert report["added"] == 4 and report["modified"] == report["deleted"] == 0
    wanted = query_catalog(catalog_of(repo), "SELECT COUNT(*) FROM chunks WHERE embed_hash IS NOT NULL")[0][0]
    assert report["vectors_embedded"] + report["vectors_from_cache"] == wanted > 0

    stats = run_cli("stats", "--repo", repo, "--json")
    assert stats.returncode == 0, stats.stderr
    data = json.loads(stats.stdout)
    for key in ("files", "chunks", "vectors", "edges"):
        assert type(data[key]) is int, key
    # .gitignore has no language: skipped as such; build/ and *.log are ignored, not "skipped"
    assert data["skipped"] == {"unsupported_type": 1}
    assert data["files"] == 4
    assert data["vectors"] == wanted and data["chunks"] == report["chunks_written"] >= wanted
    assert data["vectors_in_store"] == wanted and data["chunks_without_vectors"] == 0
    assert data["edges"] > 0

    files = {r[0]: r[1] for r in query_catalog(catalog_of(repo), "SELECT path, skip_reason FROM files")}
    assert files == {".gitignore": "unsupported_type", "README.md": None, "config.py": None,
                     "inventory.py": None, "tests/test_inventory.py": None}
    kinds = {r[0] for r in query_catalog(catalog_of(repo), f"SELECT DISTINCT kind FROM ({EDGE_ROWS})")}
    assert {"contains", "calls", "imports"} <= kinds

    gitignore = repo / ".codesearch" / ".gitignore"
    assert gitignore.is_file() and "*" in gitignore.read_text().split()


# --- 2. incremental indexing ------------------------------------------------------------------
def test_edit_one_function_embeds_exactly_the_changed_chunks(python_repo):
    settings = load_settings(python_repo)
    path = python_repo / "inventory.py"
    before = path.read_bytes()
    after = before.replace(b"        return self.items.pop(name)\n",
                           b"        item = self.items.pop(name)\n        return item\n")
    assert after != before
    old_texts = embedded_texts("inventory.py", before, settings)
    new_texts = embedded_texts("inventory.py", after, settings)
    expected = {cid for cid, text in new_texts.items() if old_texts.get(cid) != text}
    method_id = next(r[0] for r in chunk_rows(catalog_of(python_repo), "inventory.py")
                     if r[2] == "Inventory.remove_item")
    assert method_id in expected
    unchanged_before = snapshot(catalog_of(python_repo))["chunks"]
    path.write_bytes(after)

    report = run_indexer(python_repo)

    assert (report.added, report.modified, report.deleted, report.unchanged) == (0, 1, 0, 3)
    assert set(report.embedded_ids) == expected and len(report.embedded_ids) == len(expected)
    assert report.vectors_embedded == len(expected)
    assert report.vectors_from_cache == 0  # the others keep their vectors: not even looked up
    # the other files' chunks were not rewritten
    now = set(snapshot(catalog_of(python_repo))["chunks"])
    others = {c for c in unchanged_before if c[2] != "inventory.py"}
    assert others <= now
    assert_vectors_mirror_catalog(python_repo)
    # and Chroma holds the vector of the new text, not the old one
    index = open_index(python_repo)
    try:
        got = index.vectors.store.collection.get(ids=[method_id], include=["embeddings"])
        stored = np.asarray(got["embeddings"][0])
        fresh = index.embedder.encode_documents([new_texts[method_id]])[0]
        stale = index.embedder.encode_documents([old_texts[method_id]])[0]
    finally:
        index.close()
    assert float(stored @ fresh) > 0.999
    assert float(stored @ fresh) > float(stored @ stale)


def test_added_file_embeds_only_its_chunks(python_repo):
    (python_repo / "shipping.py").write_text(
        '"""Shipping rates for parcels."""\n\nfrom config import clamp\n\n\n'
        "def parcel_rate(weight_kg: float) -> float:\n"
        '    """Price of shipping a parcel of this weight, within the carrier\'s limits."""\n'
        "    return clamp(weight_kg * 1.75, 4.0, 90.0)\n", encoding="utf-8")

    report = run_indexer(python_repo)

    catalog = catalog_of(python_repo)
    new_ids = {r[0] for r in chunk_rows(catalog, "shipping.py")}
    assert len(new_ids) >= 2
    assert (report.added, report.modified, report.deleted, report.unchanged) == (1, 0, 0, 4)
    wanted = {r[0] for r in query_catalog(catalog, "SELECT c.id FROM chunks c JOIN files f ON f.fid = c.fid"
                                                   " WHERE f.path = 'shipping.py' AND c.embed_hash IS NOT NULL")}
    assert set(report.embedded_ids) == wanted and report.vectors_embedded == len(wanted) > 0
    assert report.chunks_written == len(new_ids)
    # the new call resolves: parcel_rate -> config.clamp
    rate = next(r[0] for r in chunk_rows(catalog, "shipping.py") if r[2] == "parcel_rate")
    clamp = next(r[0] for r in chunk_rows(catalog, "config.py") if r[2] == "clamp")
    assert (rate, clamp, "calls") in {edge[:3] for edge in snapshot(catalog)["edges"]}
    assert_vectors_mirror_catalog(python_repo)


def test_identical_texts_in_one_run_are_embedded_once(python_repo, monkeypatch):
    from codesearch.embedding.onnx import OnnxEmbedder
    encoded: list[str] = []
    real_encode = OnnxEmbedder.encode_documents

    def counting_encode(self, texts):
        encoded.extend(texts)
        return real_encode(self, texts)

    monkeypatch.setattr(OnnxEmbedder, "encode_documents", counting_encode)
    # the same (documented: it gets a vector) definition in two files
    body = 'def shared_helper(value):\n    """Add forty-one."""\n    return value + 41\n'
    (python_repo / "first_copy.py").write_text(body)
    (python_repo / "second_copy.py").write_text(body)

    report = run_indexer(python_repo)

    catalog = catalog_of(python_repo)
    new_ids = {r[0] for path in ("first_copy.py", "second_copy.py") for r in chunk_rows(catalog, path)}
    assert report.added == 2 and len(new_ids) == 4
    assert_vectors_mirror_catalog(python_repo)
    assert len(encoded) == len(set(encoded)), "the same text was encoded more than once"
    wanted = query_catalog(catalog, "SELECT COUNT(*) FROM chunks c JOIN files f ON f.fid = c.fid WHERE f.path IN"
                                    " ('first_copy.py', 'second_copy.py') AND c.embed_hash IS NOT NULL")[0][0]
    assert report.vectors_embedded + report.vectors_from_cache == wanted
    assert len(report.embedded_ids) == report.vectors_embedded


def test_deleted_file_leaves_nothing_behind(python_repo):
    catalog = catalog_of(python_repo)
    gone_ids = {r[0] for r in chunk_rows(catalog, "config.py")}
    assert gone_ids and gone_ids <= chroma_ids(python_repo)
    (python_repo / "config.py").unlink()

    report = run_indexer(python_repo)

    assert (report.added, report.modified, report.deleted) == (0, 0, 1)
    assert report.vectors_embedded == 0 and report.vectors_deleted == len(gone_ids)
    marks = ",".join("?" * len(gone_ids))
    ids = tuple(gone_ids)
    assert query_catalog(catalog, "SELECT COUNT(*) FROM files WHERE path = 'config.py'")[0][0] == 0
    assert query_catalog(catalog, f"SELECT COUNT(*) FROM ({CHUNK_ROWS}) WHERE path = 'config.py'")[0][0] == 0
    assert query_catalog(catalog, f"SELECT COUNT(*) FROM ({CALL_ROWS}) WHERE path = 'config.py'")[0][0] == 0
    assert query_catalog(catalog, f"SELECT COUNT(*) FROM ({CALL_ROWS}) WHERE caller_id IN ({marks})", ids)[0][0] == 0
    assert query_catalog(catalog, f"SELECT COUNT(*) FROM ({IMPORT_ROWS}) WHERE path = 'config.py'")[0][0] == 0
    assert query_catalog(catalog, f"SELECT COUNT(*) FROM ({EDGE_ROWS}) WHERE src IN ({marks}) OR dst IN ({marks})",
                         ids + ids)[0][0] == 0
    assert query_catalog(catalog, "SELECT COUNT(*) FROM calls WHERE caller NOT IN (SELECT rid FROM chunks)")[0][0] == 0
    assert query_catalog(catalog, "SELECT COUNT(*) FROM edges WHERE src NOT IN (SELECT rid FROM chunks) "
                                  "OR dst NOT IN (SELECT rid FROM chunks)")[0][0] == 0
    assert query_catalog(catalog, "SELECT COUNT(*) FROM chunks_fts")[0][0] == len(catalog_chunk_ids(catalog))
    assert not gone_ids & chroma_ids(python_repo)
    assert_vectors_mirror_catalog(python_repo)


def test_renamed_file_is_counted_as_a_rename_and_its_vectors_move(python_repo):
    catalog = catalog_of(python_repo)
    old_ids = {r[0] for r in chunk_rows(catalog, "config.py")}
    (python_repo / "config.py").rename(python_repo / "settings_loader.py")

    report = run_indexer(python_repo)

    assert report.renamed == 1
    assert (report.added, report.deleted) == (1, 1)
    new_ids = {r[0] for r in chunk_rows(catalog, "settings_loader.py")}
    assert len(new_ids) == len(old_ids)
    ids = chroma_ids(python_repo)
    assert new_ids <= ids and not old_ids & ids
    # every definition's vector comes from the cache (their embedded text has no path)
    definitions = {r[0] for r in chunk_rows(catalog, "settings_loader.py") if r[1] != "file"}
    assert not definitions & set(report.embedded_ids)
    assert_vectors_mirror_catalog(python_repo)


def test_renamed_file_embeds_only_its_file_chunk(python_repo):
    """A renamed file's definitions keep their vectors (from the cache); only the file chunk,
    whose text starts with the path, is embedded again."""
    (python_repo / "config.py").rename(python_repo / "settings_loader.py")
    report = run_indexer(python_repo)
    assert report.renamed == 1
    file_chunk = next(r[0] for r in chunk_rows(catalog_of(python_repo), "settings_loader.py") if r[1] == "file")
    assert report.embedded_ids == [file_chunk], f"embedded {report.embedded_ids}"


def test_no_change_rerun_touches_nothing(python_repo):
    catalog = catalog_of(python_repo)
    before = snapshot(catalog)
    rows = query_catalog(catalog, "SELECT rid, id FROM chunks")  # a rewritten chunk gets a new row

    report = run_indexer(python_repo)

    assert (report.added, report.modified, report.deleted, report.renamed) == (0, 0, 0, 0)
    assert report.unchanged == 4
    assert report.chunks_written == 0
    assert report.vectors_embedded == report.vectors_from_cache == report.vectors_deleted == 0
    assert snapshot(catalog) == before
    assert query_catalog(catalog, "SELECT rid, id FROM chunks") == rows

    # a touched file (new mtime, same bytes) is read again but nothing is rewritten
    os.utime(python_repo / "config.py", ns=(time.time_ns(), time.time_ns()))
    report = run_indexer(python_repo)
    assert (report.added, report.modified, report.deleted, report.unchanged) == (0, 0, 0, 4)
    assert report.chunks_written == report.vectors_embedded == 0
    assert snapshot(catalog) == before


def test_branch_switch_back_embeds_nothing(python_repo):
    catalog = catalog_of(python_repo)
    a_snapshot = snapshot(catalog)
    a_inventory = (python_repo / "inventory.py").read_bytes()
    a_config = (python_repo / "config.py").read_bytes()
    # branch B: one file changed, one deleted, one added
    (python_repo / "inventory.py").write_bytes(a_inventory.replace(
        b"return self.price * self.quantity", b"return round(self.price * self.quantity, 2)"))
    (python_repo / "config.py").unlink()
    (python_repo / "feature.py").write_text("def feature_flag(name):\n    return name.startswith('beta_')\n")
    b_report = run_indexer(python_repo)
    assert (b_report.added, b_report.modified, b_report.deleted) == (1, 1, 1)
    assert b_report.vectors_embedded > 0

    # back to A
    (python_repo / "inventory.py").write_bytes(a_inventory)
    (python_repo / "config.py").write_bytes(a_config)
    (python_repo / "feature.py").unlink()
    report = run_indexer(python_repo)

    assert (report.added, report.modified, report.deleted) == (1, 1, 1)
    assert report.vectors_embedded == 0 and report.embedded_ids == []
    assert report.vectors_from_cache > 0
    assert snapshot(catalog) == a_snapshot
    assert_vectors_mirror_catalog(python_repo)


# --- 3. kill -9 at several moments, then recovery ---------------------------------------------
@pytest.fixture(scope="module")
def large_tree(tmp_path_factory):
    """Three sample projects plus 300 generated modules: a few seconds of indexing."""
    return build_large_tree(tmp_path_factory.mktemp("large") / "repo")


count = try_count  # a count from a catalog that an indexer may be writing right now


def test_kill9_recovery_matches_a_clean_index(large_tree, tmp_path):
    repo = large_tree
    crash_dir, clean_dir = tmp_path / "crash-index", tmp_path / "clean-index"
    catalog = crash_dir / CATALOG
    logs = tmp_path / "logs"
    args = ("index", repo, "--index-dir", crash_dir, "--json")

    # A: just started (the index folder exists, nothing is written yet)
    run = CliProcess(logs, *args)
    run.wait_for(catalog.exists)
    assert run.kill9() == -signal.SIGKILL
    assert count(catalog, "SELECT COUNT(*) FROM files WHERE skip_reason IS NULL") == 0

    # B: the catalog is complete, the model is loading, no vector exists yet
    run = CliProcess(logs, *args)
    # edges_stale turns '0' in the transaction that completes the catalog (edges resolved)
    assert run.wait_for(lambda: count(catalog, "SELECT COUNT(*) FROM meta WHERE key = 'edges_stale' "
                                               "AND value = '0'") > 0)
    assert run.kill9() == -signal.SIGKILL, run.stderr()
    total = count(catalog, "SELECT COUNT(*) FROM chunks")
    assert total > 256  # more than one embedding batch
    assert count(catalog, "SELECT COUNT(*) FROM chunks WHERE vector_hash = embed_hash") < total

    # C: during embedding, as soon as the first batch of vectors exists
    run = CliProcess(logs, *args)
    assert run.wait_for(lambda: count(catalog, "SELECT COUNT(*) FROM embed_cache") > 0, timeout=240)
    assert run.kill9() == -signal.SIGKILL, run.stderr()
    cached = count(catalog, "SELECT COUNT(*) FROM embed_cache")
    assert count(catalog, "SELECT COUNT(*) FROM chunks WHERE vector_hash = embed_hash") < total

    # run again to completion
    code, out, err = run_main(*args)
    assert code == 0, err
    report = json.loads(out)
    assert report["added"] == report["modified"] == report["deleted"] == 0
    assert report["vectors_embedded"] <= total - cached  # what was embedded before the kill is kept
    code, _, err = run_main(*args, "--verify")
    assert code == 0, err
    assert "0 stray removed, 0 missing re-added" in err

    # a clean index of the same tree, elsewhere
    run_indexer(repo, clean_dir)
    recovered, clean = snapshot(catalog), snapshot(clean_dir / CATALOG)
    assert recovered["files"] == clean["files"]
    assert recovered["chunks"] == clean["chunks"]
    assert recovered["edges"] == clean["edges"]
    assert recovered["calls"] == clean["calls"] and recovered["imports"] == clean["imports"]
    assert_vectors_mirror_catalog(repo, crash_dir)
    assert_vectors_mirror_catalog(repo, clean_dir)


@pytest.fixture(scope="module")
def killed_between_write_batches(tmp_path_factory):
    """An indexed tree where every generated module then changes (a big branch switch); the
    `codesearch index --no-vectors` that follows is killed after its first write batch
    committed, and run again. Also a clean index of the changed tree (vectors play no part)."""
    base = tmp_path_factory.mktemp("mid-catalog")
    repo = build_large_tree(base / "repo", generated=600, languages=("python",), definitions=True)
    crash_dir, clean_dir = base / "crash-index", base / "clean-index"
    catalog = crash_dir / CATALOG
    run_indexer(repo, crash_dir, embed=False)
    for module in sorted((repo / "gen").rglob("mod_*.py")):
        module.write_text(module.read_text().replace("(value) * ", "(value) + "))
    started = time.time()
    rewritten = f"SELECT COUNT(*) FROM files WHERE skip_reason IS NULL AND indexed_at > {started}"
    run = CliProcess(base / "logs", "index", repo, "--index-dir", crash_dir, "--no-vectors")
    run.wait_for(lambda: count(catalog, rewritten) > 0, interval=0.002)
    code = run.kill9()
    written = count(catalog, rewritten)
    resumed = run_indexer(repo, crash_dir, embed=False)
    run_indexer(repo, clean_dir, embed=False)
    return code, written, resumed, snapshot(catalog), snapshot(clean_dir / CATALOG)


def test_kill9_between_write_batches_recovers_files_and_chunks(killed_between_write_batches):
    code, written, resumed, recovered, clean = killed_between_write_batches
    assert code == -signal.SIGKILL
    assert 0 < written < 600  # the kill landed between two write batches
    assert not resumed.rebuilt and resumed.modified == 600 - written
    assert recovered["files"] == clean["files"]
    assert recovered["chunks"] == clean["chunks"]
    assert recovered["calls"] == clean["calls"] and recovered["imports"] == clean["imports"]
    assert {e: n for e, n in recovered["edges"].items() if e[2] != "calls"} == \
        {e: n for e, n in clean["edges"].items() if e[2] != "calls"}


def test_kill9_between_write_batches_recovers_call_edges(killed_between_write_batches):
    code, written, _resumed, recovered, clean = killed_between_write_batches
    assert code == -signal.SIGKILL and 0 < written < 600
    missing = clean["edges"] - recovered["edges"]
    assert not missing, f"{sum(missing.values())} call edges missing after recovery"
    assert recovered["edges"] == clean["edges"]


# --- 4. concurrent indexers -------------------------------------------------------------------
def test_second_indexer_fails_fast_or_waits_for_the_lock(python_repo, tmp_path):
    index_dir = python_repo / ".codesearch"
    catalog = index_dir / CATALOG
    (python_repo / "config.py").unlink()  # work for the indexer that gets the lock
    before = snapshot(catalog)
    lock = IndexLock(index_dir)
    lock.acquire()
    waiting = None
    try:
        busy = run_cli("index", python_repo, "--wait", "0")
        assert busy.returncode == 1
        lines = busy.stderr.strip().splitlines()
        assert len(lines) == 1, busy.stderr
        assert "Traceback" not in busy.stderr
        assert f"pid {os.getpid()}" in lines[0] and "another codesearch process" in lines[0]
        assert snapshot(catalog) == before

        waiting = CliProcess(tmp_path / "logs", "index", python_repo, "--wait", "30", "--json")
        waiting.wait_for(lambda: "waiting for another codesearch process" in waiting.stderr(), timeout=60)
        time.sleep(0.5)
        assert waiting.running()
        assert snapshot(catalog) == before
    finally:
        lock.release()
    assert waiting.wait(120) == 0, waiting.stderr()
    assert "Traceback" not in waiting.stderr()
    report = json.loads(waiting.stdout())
    assert report["deleted"] == 1
    assert query_catalog(catalog, f"SELECT COUNT(*) FROM ({CHUNK_ROWS}) WHERE path = 'config.py'")[0][0] == 0
    assert_vectors_mirror_catalog(python_repo)
    # the lock is free again
    again = IndexLock(index_dir)
    again.acquire(0)
    again.release()


# --- 5. schema and settings changes -----------------------------------------------------------
def set_meta(catalog: Path, key: str, value: str) -> None:
    db = sqlite3.connect(catalog)
    try:
        with db:
            db.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
    finally:
        db.close()


def test_old_schema_version_rebuilds(python_repo):
    catalog = catalog_of(python_repo)
    before = snapshot(catalog)
    (vectors,), = query_catalog(catalog, "SELECT COUNT(*) FROM chunks WHERE vector_hash IS NOT NULL")
    set_meta(catalog, "schema_version", "0")

    code, out, err = run_main("index", python_repo, "--json")

    assert code == 0, err
    assert "rebuilding" in err and "format 0" in err
    answer = json.loads(out)
    assert answer["rebuilt"]
    # Chroma already holds every vector: none is stored again, none deleted
    assert (answer["vectors_embedded"], answer["vectors_from_cache"], answer["vectors_deleted"]) == (0, 0, 0)
    assert f"kept {vectors:,} vectors the store already held; 0 to delete" in err
    assert query_catalog(catalog, "SELECT value FROM meta WHERE key = 'schema_version'")[0][0] == str(SCHEMA_VERSION)
    assert snapshot(catalog) == before
    assert_vectors_mirror_catalog(python_repo)
    code, out, err = run_main("index", python_repo, "--json")
    assert code == 0 and "rebuilding" not in err and not json.loads(out)["rebuilt"]


def test_outdated_delete_trigger_is_replaced_on_open(python_repo):
    """A catalog whose delete trigger is not this code's gets this code's on open, and a
    modified file still leaves no stale keyword rows, edges or call sites behind."""
    catalog = catalog_of(python_repo)
    db = sqlite3.connect(catalog)
    db.executescript("DROP TRIGGER chunks_deleted;"
                     "CREATE TRIGGER chunks_deleted AFTER DELETE ON chunks BEGIN "
                     "DELETE FROM chunks_fts WHERE rowid = old.rid; END;")
    db.close()
    before = snapshot(catalog)
    inventory = python_repo / "inventory.py"
    original = inventory.read_text()
    inventory.write_text(original + "\n")
    code, _, err = run_main("index", python_repo, "--json")
    assert code == 0, err
    (sql,), = query_catalog(catalog, "SELECT sql FROM sqlite_master WHERE name = 'chunks_deleted'")
    assert sql == CHUNKS_DELETED_TRIGGER
    inventory.write_text(original)
    code, _, err = run_main("index", python_repo, "--json")
    assert code == 0, err
    assert snapshot(catalog) == before
    assert query_catalog(catalog, "SELECT COUNT(*) FROM chunks_fts")[0][0] == \
        query_catalog(catalog, "SELECT COUNT(*) FROM chunks")[0][0]


def test_rebuild_leaves_no_stale_vectors(python_repo):
    catalog = catalog_of(python_repo)
    gone = {r[0] for r in chunk_rows(catalog, "config.py")}
    (python_repo / "config.py").unlink()
    held = chroma_ids(python_repo)
    set_meta(catalog, "schema_version", "0")
    code, out, err = run_main("index", python_repo, "--json")
    assert code == 0 and "rebuilding" in err
    assert not gone & chroma_ids(python_repo)
    answer = json.loads(out)
    assert answer["vectors_deleted"] == len(gone & held) > 0 and answer["vectors_from_cache"] == 0
    assert_vectors_mirror_catalog(python_repo)


def test_changed_index_setting_rebuilds(python_repo, tmp_path):
    catalog = catalog_of(python_repo)
    before = snapshot(catalog)
    (python_repo / ".codesearch.toml").write_text("max_chunk_chars = 250\n")  # small enough to split here

    code, out, err = run_main("index", python_repo, "--json")

    assert code == 0, err
    assert "rebuilding the index" in err and "settings" in err
    assert json.loads(out)["rebuilt"]
    after = snapshot(catalog)
    assert after["chunks"] != before["chunks"]
    assert max(r[0] for r in query_catalog(catalog, "SELECT part FROM chunks")) > 1  # smaller budget: splits
    # complete: the same as a clean index built with these settings
    run_indexer(python_repo, tmp_path / "clean-index", embed=False)
    clean = snapshot(tmp_path / "clean-index" / CATALOG)
    assert after == clean
    assert_vectors_mirror_catalog(python_repo)
    code, out, err = run_main("index", python_repo, "--json")
    assert code == 0 and not json.loads(out)["rebuilt"]


def test_vector_key_names_what_changes_a_vector(tmp_path):
    """Cached vectors are keyed by text and model name: a backend, token limit or quantization that
    gives other vectors must give another name, or a changed setting would reuse the old vectors."""
    from codesearch.indexing.index import Index
    names = {}
    torch = {"embedder": "sentence-transformers"}
    for label, overrides in {"default": {}, "onnx, 256 tokens": {"embed_max_tokens": 256}, "torch": torch,
                             "torch, full precision": {**torch, "embed_quantize": False},
                             "torch, 256 tokens": {**torch, "embed_max_tokens": 256}}.items():
        index = Index(tmp_path, load_settings(tmp_path, overrides), tmp_path / label, create=True)
        names[label] = index.vector_key
        index.close()
    assert names["default"] == "all-MiniLM-L6-v2:onnx-q8:t64"
    assert names["torch"] == "all-MiniLM-L6-v2:q8:t64"  # the sentence-transformers backend, int8
    assert names["torch, 256 tokens"] == "all-MiniLM-L6-v2:q8"  # the name that caches from before 128 use
    assert len(set(names.values())) == 5


def test_a_changed_embedder_re_embeds_every_chunk_once(python_repo, monkeypatch):
    """An index whose vectors another embedder made (an older default, a changed setting) is
    read again (the catalog keeps no chunk text to hash anew) and every chunk embedded once by
    the new one; the old vectors go, their cache stays (keyed by model and text, so going back
    costs nothing). Both ways: the default to torch, and back."""
    catalog = catalog_of(python_repo)
    files = query_catalog(catalog, "SELECT COUNT(*) FROM files WHERE skip_reason IS NULL")[0][0]
    keys = []
    for embedder in ("sentence-transformers", "onnx"):
        monkeypatch.setenv("CODESEARCH_EMBEDDER", embedder)
        old_key = query_catalog(catalog, "SELECT value FROM meta WHERE key = 'model'")[0][0]

        report = run_indexer(python_repo)

        new_key = query_catalog(catalog, "SELECT value FROM meta WHERE key = 'model'")[0][0]
        wanted = query_catalog(catalog, "SELECT COUNT(*) FROM chunks WHERE embed_hash IS NOT NULL")[0][0]
        assert new_key != old_key and report.vectors_rekeyed == old_key and report.rebuilt
        assert report.unchanged == 0 and report.chunks_written and files  # every file read again
        assert report.vectors_embedded + report.vectors_from_cache == wanted
        assert bool(report.vectors_embedded) == (embedder != "onnx")  # back to the first: all cached
        assert_vectors_mirror_catalog(python_repo)
        assert query_catalog(catalog, "SELECT COUNT(*) FROM chunks WHERE embed_hash IS NOT NULL AND "
                                      "embed_hash NOT IN (SELECT text_hash FROM embed_cache)") == [(0,)]
        again = run_indexer(python_repo)
        assert not again.vectors_rekeyed and again.vectors_embedded == again.vectors_from_cache == 0
        if embedder != "onnx":  # a query process with the default settings: not these vectors
            proc = run_cli("query", "retry delay with capped exponential growth", "--repo", python_repo,
                           "--json", "--mode", "hybrid", "--no-daemon")
            assert proc.returncode == 0, proc.stderr
            answer = json.loads(proc.stdout)
            assert answer["partial"] and "was embedded by all-MiniLM-L6-v2:q8:t64" in answer["note"]
            assert answer["results"]  # from keyword and graph
        keys.append(new_key)
    assert keys == ["all-MiniLM-L6-v2:q8:t64", "all-MiniLM-L6-v2:onnx-q8:t64"]
    # (a process of its own: an in-process query keeps Chroma's client of a store a test deletes)
    proc = run_cli("query", "retry delay with capped exponential growth", "--repo", python_repo,
                   "--json", "--mode", "vector", "--no-daemon")
    assert proc.returncode == 0, proc.stderr
    assert "compute_backoff" in [r["name"] for r in json.loads(proc.stdout)["results"][:3]]


def test_chunks_with_nothing_to_say_get_no_vector(python_repo, monkeypatch):
    """embed_min_chars: short undocumented chunks are left out of the vector store (the vectors of
    the rest come from the cache), the index counts as fully embedded, and keyword search still
    finds them."""
    monkeypatch.setenv("CODESEARCH_EMBED_MIN_CHARS", "80")  # not the default: the index is rebuilt

    report = run_indexer(python_repo)

    catalog = catalog_of(python_repo)
    skipped = dict(query_catalog(catalog, "SELECT id, name FROM chunks WHERE embed_hash IS NULL"))
    assert report.rebuilt and "test_clamp" in skipped.values() and report.vectors_embedded == 0
    assert_vectors_mirror_catalog(python_repo)
    assert not set(skipped) & chroma_ids(python_repo)
    index = open_index(python_repo)
    try:
        assert not index.catalog.vectors.needed() and index.catalog.stats.counts()["without_vectors"] == 0
    finally:
        index.close()
    proc = run_cli("query", "test_clamp", "--repo", python_repo, "--json", "--mode", "hybrid", "--no-daemon")
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["results"][0]["name"] == "test_clamp" and not answer.get("partial")


def test_a_rebuild_that_changes_the_vector_key_leaves_no_old_collection(python_repo):
    """A setting that reshapes the index and the vectors at once (the token limit): the catalog is
    rebuilt, and the store keeps only the new key's collection."""
    (python_repo / ".codesearch.toml").write_text("embed_max_tokens = 96\n")

    report = run_indexer(python_repo)

    assert report.rebuilt and report.vectors_rekeyed == "all-MiniLM-L6-v2:onnx-q8:t64"
    assert_vectors_mirror_catalog(python_repo)
    index = open_index(python_repo)
    try:
        assert [c.name for c in index.vectors.store.client.list_collections()] == [index.collection_name]
        assert index.collection_name.startswith("chunks-all-minilm-l6-v2-onnx-q8-t96")
    finally:
        index.close()


# --- 6. a Chroma server -----------------------------------------------------------------------
@pytest.fixture
def chroma_server(tmp_path):
    exe = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    if not Path(exe).is_file():
        pytest.skip("the chroma executable is not installed")
    port = free_port()
    log = open(tmp_path / "chroma-server.log", "w")
    proc = subprocess.Popen([exe, "run", "--path", str(tmp_path / "chroma-server"), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/api/v2/heartbeat", proc)
        yield f"http://127.0.0.1:{port}", port
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(15)
        log.close()


def test_chroma_server_mode(tmp_path, chroma_server):
    url, port = chroma_server
    repo = copy_sample("python", tmp_path / "repo")

    code, out, err = run_main("index", repo, "--chroma-url", url, "--json")

    assert code == 0, err
    assert json.loads(out)["vectors_embedded"] > 0
    assert not (repo / ".codesearch" / "chroma").exists()  # nothing local
    code, out, err = run_main("query", "retry delay with capped exponential growth", "--repo", repo,
                              "--chroma-url", url, "--json", "--mode", "vector", "--no-daemon")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["results"]
    assert all(r["sources"]["vector"] is not None for r in answer["results"])
    assert "compute_backoff" in [r["name"] for r in answer["results"][:3]]

    import chromadb
    client = chromadb.HttpClient(host="127.0.0.1", port=port)
    collections = client.list_collections()
    assert len(collections) == 1
    collection = client.get_collection(collections[0].name)
    ids = {r[0] for r in query_catalog(catalog_of(repo), "SELECT id FROM chunks WHERE embed_hash IS NOT NULL")}
    assert collection.count() == len(ids)
    assert set(collection.get(include=[])["ids"]) == ids
    code, out, err = run_main("stats", "--repo", repo, "--chroma-url", url, "--json")
    assert code == 0, err
    assert json.loads(out)["vectors_in_store"] == len(ids)


# --- 7. a failing run leaves the previous index usable ----------------------------------------
def keyword_query(repo: Path, text: str) -> list[tuple]:
    proc = run_cli("query", text, "--repo", repo, "--mode", "keyword", "--json", "--no-daemon")
    assert proc.returncode == 0, proc.stderr
    return [(r["path"], r["name"], r["start_line"], r["end_line"]) for r in json.loads(proc.stdout)["results"]]


def test_failed_run_keeps_the_previous_index(python_repo, monkeypatch):
    catalog = catalog_of(python_repo)
    before = snapshot(catalog)
    old_results = keyword_query(python_repo, "compute_backoff")
    assert any(name == "compute_backoff" for _, name, _, _ in old_results)
    inventory = python_repo / "inventory.py"
    inventory.write_text(inventory.read_text().replace("compute_backoff", "retry_delay"))
    (python_repo / "shipping.py").write_text("def parcel_rate(weight):\n    return weight * 1.75\n")

    if IS_ROOT:  # root writes to read-only files: simulate a full disk in the middle of the writes
        real_insert = Files.write_chunks
        calls = []

        def insert_then_fail(self, *args, **kwargs):
            calls.append(1)
            if len(calls) == 2:
                raise OSError(28, "No space left on device")
            return real_insert(self, *args, **kwargs)

        monkeypatch.setattr(Files, "write_chunks", insert_then_fail)
        code, _, err = run_main("index", python_repo, "--json")
        monkeypatch.undo()
        assert len(calls) == 2  # the first file's chunks were written before the failure
        assert "is full" in err and len(err.strip().splitlines()) == 1  # one line naming the disk
    else:
        index_dir = python_repo / ".codesearch"
        frozen = [index_dir, *index_dir.rglob("*")]
        modes = {p: p.stat().st_mode for p in frozen}
        for p in frozen:
            p.chmod(modes[p] & ~0o222)
        try:
            proc = run_cli("index", python_repo, "--json")
        finally:
            for p in reversed(frozen):
                p.chmod(modes[p])
        code, err = proc.returncode, proc.stderr
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and err.startswith("codesearch: ") and "Traceback" not in err

    assert snapshot(catalog) == before
    assert keyword_query(python_repo, "compute_backoff") == old_results
    assert not [r for r in keyword_query(python_repo, "parcel_rate") if r[0] == "shipping.py"]

    report = run_indexer(python_repo)
    assert (report.added, report.modified, report.deleted) == (1, 1, 0)
    assert any(name == "retry_delay" for _, name, _, _ in keyword_query(python_repo, "retry_delay"))
    assert not any(name == "compute_backoff" for _, name, _, _ in keyword_query(python_repo, "compute_backoff"))
    assert_vectors_mirror_catalog(python_repo)


def test_query_repo_option_selects_the_index(python_repo):
    proc = run_cli("query", "compute_backoff", "--repo", python_repo, "--mode", "keyword", "--json", "--no-daemon")
    assert proc.returncode == 0, proc.stderr
    assert "compute_backoff" in [r["name"] for r in json.loads(proc.stdout)["results"]]


# --- 8. bad input in the tree -----------------------------------------------------------------
def test_bad_input_is_skipped_with_reasons(tmp_path, monkeypatch):
    import codesearch.indexing.indexer as indexer_module
    repo = copy_sample("python", tmp_path / "repo")
    bad = repo / "bad"
    bad.mkdir()
    (bad / "blob.py").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))
    (bad / "huge.py").write_text("x = 1\n" * 200_000)  # over max_file_bytes (1 MiB)
    (bad / "latin1.py").write_bytes("# caf\xe9\ndef cafe_price(amount):\n    return amount * 2  # \xe9\n"
                                    .encode("latin-1"))
    (bad / "broken.py").write_text("def broken(x) return x\n\n\nclass Fine:\n    def still_parsed(self, x):\n"
                                   "        return x + 1\n")
    (bad / "minified.js").write_text("var a=" + "1+" * 1500 + "1;\n")
    (bad / "vanishing.py").write_text("def soon_gone():\n    return 1\n")
    secret = bad / "secret.py"
    secret.write_text("def hidden():\n    return 2\n")
    secret.chmod(0)
    os.symlink("loop_b.py", bad / "loop_a.py")
    os.symlink("loop_a.py", bad / "loop_b.py")
    os.symlink(".", bad / "here")  # a folder link to the folder that holds it

    real_extract = indexer_module.extract_files

    def vanish_then_extract(jobs, settings, workers=0, finish=None):
        (bad / "vanishing.py").unlink()  # after the walk saw it, before it is read
        yield from real_extract(jobs, settings, workers, finish)

    monkeypatch.setattr(indexer_module, "extract_files", vanish_then_extract)
    if IS_ROOT:  # root reads anything: let os.access answer as it would for a user
        real_access = os.access

        def access_as_user(path, mode, *args, **kwargs):
            if mode & os.R_OK and os.path.exists(path) and not os.stat(path).st_mode & 0o444:
                return False
            return real_access(path, mode, *args, **kwargs)

        monkeypatch.setattr(os, "access", access_as_user)

    code, out, err = run_main("index", repo, "--no-vectors", "--json")

    assert code == 0, err
    expected = {"unsupported_type": 1, "binary": 1, "too_large": 1, "minified": 1, "symlink_loop": 3,
                "vanished": 1, "unreadable": 1}
    assert json.loads(out)["skipped"] == expected
    code, out, err = run_main("stats", "--repo", repo, "--json", "--fast")
    assert code == 0, err
    stats = json.loads(out)
    assert stats["skipped"] == expected
    assert stats["files"] == 6  # the 4 good ones, invalid UTF-8 and the syntax error
    catalog = catalog_of(repo)
    names = {r[0] for r in query_catalog(catalog, f"SELECT name FROM ({CHUNK_ROWS}) WHERE path LIKE 'bad/%'")}
    assert {"cafe_price", "still_parsed"} <= names
    reasons = dict(query_catalog(catalog, "SELECT path, skip_reason FROM files WHERE path LIKE 'bad/%'"))
    assert reasons == {"bad/blob.py": "binary", "bad/huge.py": "too_large", "bad/minified.js": "minified",
                       "bad/vanishing.py": "vanished", "bad/secret.py": "unreadable", "bad/loop_a.py": "symlink_loop",
                       "bad/loop_b.py": "symlink_loop", "bad/here": "symlink_loop", "bad/latin1.py": None,
                       "bad/broken.py": None}

    # the next run forgets the file that vanished and keeps the rest
    monkeypatch.setattr(indexer_module, "extract_files", real_extract)
    code, out, err = run_main("index", repo, "--no-vectors", "--json")
    assert code == 0, err
    assert json.loads(out)["deleted"] == 1
    code, out, _ = run_main("stats", "--repo", repo, "--json", "--fast")
    assert json.loads(out)["skipped"] == {k: v for k, v in expected.items() if k != "vanished"}


def test_files_only_touched_leave_the_edges_resolved(python_repo):
    """Files whose times change but not their content (a copy, a checkout of the same tree) are
    written as touched; the run leaves the edges marked resolved, so the next save resolves
    only what it changes, not the whole graph."""
    for path in python_repo.glob("*.py"):
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    report = run_indexer(python_repo)
    assert report.unchanged and not report.modified
    assert query_catalog(catalog_of(python_repo), "SELECT value FROM meta WHERE key = 'edges_stale'") == [("0",)]


def test_stats_reports_the_bytes_of_the_indexed_files_beside_the_index(tmp_path):
    """`stats --json`: source_bytes is what the indexed files weigh (skipped ones left out), so
    index_bytes / source_bytes is the index's size against its code."""
    repo = copy_sample("python", tmp_path / "repo")
    assert run_cli("index", repo, "--no-vectors", "-q").returncode == 0
    proc = run_cli("stats", "--json", "--repo", repo)
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout)
    indexed = query_catalog(catalog_of(repo), "SELECT path FROM files WHERE skip_reason IS NULL")
    skipped = query_catalog(catalog_of(repo), "SELECT path FROM files WHERE skip_reason IS NOT NULL")
    assert indexed and skipped  # the sample has both
    assert stats["source_bytes"] == sum((repo / p).stat().st_size for (p,) in indexed)
    assert stats["index_bytes"] >= (repo / ".codesearch" / CATALOG).stat().st_size > 0
