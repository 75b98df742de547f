"""Hostile trees and requests: nothing outside the root is ever indexed, any file name is
indexed and printed losslessly, and one file that cannot be written fails nothing else."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from index_helpers import copy_sample, run_main

from codesearch.api.local import LocalService
from codesearch.api.types import IndexRequest
from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.paths import OutsideRoot, escape_name
from codesearch.store.sqlite import sqlite3


def indexed_paths(repo: Path) -> dict[str, str | None]:
    with sqlite3.connect(repo / ".codesearch" / "catalog.sqlite3") as db:
        return dict(db.execute("SELECT path, skip_reason FROM files"))


def chunk_texts(repo: Path) -> str:
    """What the catalog says of the code it holds: names, signatures, docstrings (no text: that
    stays in the files)."""
    with sqlite3.connect(repo / ".codesearch" / "catalog.sqlite3") as db:
        return "\n".join(" ".join(map(str, r)) for r in db.execute(
            "SELECT name, qualified_name, signature, docstring FROM chunks"))


@pytest.fixture
def repo_with_outside(tmp_path):
    repo = copy_sample("python", tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def leaked_secret_function():\n    return 'hunter2'\n")
    os.symlink(outside, repo / "linkdir")
    os.symlink(outside / "secret.py", repo / "link.py")
    return repo, outside


def test_links_that_leave_the_root_are_skipped_with_a_reason(repo_with_outside):
    repo, _ = repo_with_outside
    code, out, err = run_main("index", repo, "--no-vectors", "--json")
    assert code == 0, err
    assert json.loads(out)["skipped"]["outside_root"] == 2
    paths = indexed_paths(repo)
    assert paths["linkdir"] == paths["link.py"] == "outside_root"
    assert "leaked_secret_function" not in chunk_texts(repo)


@pytest.mark.parametrize("path, refused", [("../outside/secret.py", True), ("linkdir/secret.py", True),
                                           ("ABSOLUTE", True), ("linkdir", False), ("link.py", False)])
def test_explicit_paths_outside_the_root_are_never_indexed(repo_with_outside, path, refused):
    """A path that leaves the root is refused; a link inside the root that points out of it is
    itself inside, and recorded as skipped."""
    repo, outside = repo_with_outside
    path = str(outside / "secret.py") if path == "ABSOLUTE" else path
    index = Index(repo, load_settings(repo), create=True)
    try:
        Indexer(index).run(embed=False)
        Indexer(index).run([path], embed=False)  # as the watcher or the daemon would
        if refused:
            with pytest.raises(OutsideRoot, match="outside the repository"):
                LocalService(index).index(IndexRequest(paths=(path,)))
        else:
            assert LocalService(index).index(IndexRequest(paths=(path,))).ok
            assert indexed_paths(repo)[path] == "outside_root"
    finally:
        index.close()
    assert "leaked_secret_function" not in chunk_texts(repo)
    assert not any("secret" in p or p.startswith("..") or p.startswith("/") for p in indexed_paths(repo))


NAMES = {b"caf\xe9.py": "caf\\xe9.py", b"new\nline.py": "new\\x0aline.py", b"back\\slash.py": "back\\\\slash.py"}


@pytest.fixture
def odd_names(tmp_path):
    repo = copy_sample("python", tmp_path / "repo")
    for i, raw in enumerate(NAMES):
        (repo / os.fsdecode(raw)).write_text(f"def odd_name_function_{i}():\n    return {i}\n")
    return repo


def test_any_file_name_is_indexed_losslessly_in_one_batch(odd_names):
    code, out, err = run_main("index", odd_names, "--no-vectors", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["added"] == 4 + len(NAMES) and not report["skipped"].get("failed")
    paths = indexed_paths(odd_names)
    for escaped in NAMES.values():
        assert paths[escaped] is None  # indexed, not skipped
    for i, escaped in enumerate(NAMES.values()):
        code, out, err = run_main("query", f"odd_name_function_{i}", "--repo", odd_names, "--mode", "keyword",
                                  "--json", "--limit", "1")
        assert code == 0, err
        assert json.loads(out)["results"][0]["path"] == escaped


def test_vimgrep_prints_one_line_per_result_whatever_the_names(odd_names):
    run_main("index", odd_names, "--no-vectors")
    code, out, err = run_main("query", "odd name function", "--repo", odd_names, "--mode", "keyword", "--vimgrep")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) >= len(NAMES)
    assert {line.split(":", 1)[0] for line in lines} >= set(NAMES.values())


def test_an_edited_file_with_an_odd_name_is_reindexed(odd_names):
    run_main("index", odd_names, "--no-vectors")
    target = odd_names / os.fsdecode(b"caf\xe9.py")
    target.write_text("def renamed_inside_cafe():\n    return 9\n")
    index = Index(odd_names, load_settings(odd_names))
    try:
        report = Indexer(index).run([escape_name(target.name)], embed=False)
    finally:
        index.close()
    assert report.modified == 1
    assert "renamed_inside_cafe" in chunk_texts(odd_names)


def test_a_file_that_cannot_be_written_is_skipped_and_the_batch_goes_on(tmp_path, monkeypatch):
    repo = copy_sample("python", tmp_path / "repo")
    from codesearch.store.files import Files
    real = Files.insert_calls

    def fail_for_config(self, db, rows, rids):
        if any(row[1] == "config.py" for row in rows):
            raise sqlite3.IntegrityError("simulated failure")
        return real(self, db, rows, rids)

    monkeypatch.setattr(Files, "insert_calls", fail_for_config)
    code, out, err = run_main("index", repo, "--no-vectors", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["skipped"]["failed"] == 1 and report["added"] == 3
    paths = indexed_paths(repo)
    assert paths["config.py"] == "failed" and paths["inventory.py"] is None
    with sqlite3.connect(repo / ".codesearch" / "catalog.sqlite3") as db:
        assert not db.execute("SELECT 1 FROM chunks c JOIN files f ON f.fid = c.fid "  # nothing half written
                              "WHERE f.path = 'config.py'").fetchone()
