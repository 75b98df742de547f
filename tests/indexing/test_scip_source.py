"""A SCIP index made by scip-typescript (sample_repos/scip) replaces the name-based call edges of
the files it covers: a call of a same-named method of another class goes to the right one, a call
into the standard library links nothing, a file edited since falls back to codesearch's own
resolution, a bad SCIP file is one line and leaves the index usable, and `index.scip` at the
root is found without being named. Real tree-sitter, SQLite and SCIP bytes throughout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import SAMPLES, optional_tool, run_cli

from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.indexing.scip_source import read_state
from codesearch.ingest.scip import read_index
from codesearch.store.call_graph import CallGraph
from codesearch.store.scip_edges import apply_scip_edges

FIXTURE = SAMPLES / "scip"
SCIP_TYPESCRIPT = optional_tool("scip-typescript")
HOUR_NS = 3600 * 10**9


def _copy(tmp_path: Path, with_index: bool = True) -> Path:
    """The fixture project, its SCIP index made after its files (as a fresh checkout may not say)."""
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns(".codesearch"))
    newest = max(p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file())
    if with_index:
        os.utime(root / "index.scip", ns=(newest + HOUR_NS, newest + HOUR_NS))
    else:
        (root / "index.scip").unlink()
    return root


def _indexed(root: Path, **overrides) -> Index:
    index = Index(root, load_settings(root, overrides), create=True)
    Indexer(index).run(embed=False)
    return index


def _callees(index: Index, qualified: str) -> dict[str, str]:
    """What a chunk calls or references: target's qualified name -> how the edge was resolved."""
    db = index.catalog.db
    rows = db.execute("SELECT rid, COALESCE(qualified_name, name) FROM chunks").fetchall()
    names = dict(rows)
    rid = next(r for r, q in rows if q == qualified)
    from codesearch.store.schema import RESOLUTIONS
    return {names[other]: RESOLUTIONS[how] for _, other, _, how in CallGraph(index.catalog).calls([rid], "callees")}


def test_scip_edges_replace_the_guesses_by_name(tmp_path: Path) -> None:
    by_name = _indexed(_copy(tmp_path / "a", with_index=False))
    precise = _indexed(_copy(tmp_path / "b"))
    try:
        # by name: `square.area()` goes to every `area` (`Math.max`, a built-in global's member, and
        # `sizes.push`, an array's method on a receiver of unknown type, link nothing even by name)
        assert {"Shape.area", "Circle.area", "Square.area"} <= set(_callees(by_name, "total"))
        assert "Stack.max" not in _callees(by_name, "total") and "Stack.push" not in _callees(by_name, "report")
        # the SCIP index: the one `area` a Square has, and nothing for the standard library's max and push
        assert _callees(precise, "total") == {"Square.area": "scip", "makeSquare": "scip"}
        assert _callees(precise, "report") == {"Circle": "scip", "Circle.area": "scip", "Circle.describe": "scip",
                                               "collect": "scip", "Stack.max": "scip"}
        assert _callees(precise, "Circle.describe") == {"Circle.area": "scip"}
        state = read_state(precise.catalog)
        assert (state.files, state.stale, state.problem) == (3, 0, "")
        assert state.path == str(precise.root / "index.scip")
    finally:
        by_name.close()
        precise.close()


def test_overloads_local_functions_and_getters(tmp_path: Path) -> None:
    """`stack.peek(0)` goes to each of peek's three declarations (two overloads, one body), a
    function defined inside another (a local symbol to the SCIP index) is linked where it is
    called, and `stack.size` reaches the getter the index names `<get>size`."""
    index = _indexed(_copy(tmp_path))
    try:
        assert _callees(index, "summary") == {"summary.describeTop": "scip", "Stack": "scip", "Stack.size": "scip"}
        assert _callees(index, "summary.describeTop") == {"Stack.peek": "scip"}
        rid = index.catalog.db.execute("SELECT rid FROM chunks WHERE qualified_name = 'summary.describeTop'").fetchone()
        assert len(CallGraph(index.catalog).calls([rid[0]], "callees")) == 3
    finally:
        index.close()


def test_a_use_that_is_no_call_is_a_reference(tmp_path: Path) -> None:
    """`const measure = circle.describe` is a method used as a value: the parser records no call
    there, the SCIP index a reference, which `references` lists as such."""
    index = _indexed(_copy(tmp_path))
    try:
        sites = index.catalog.graph.call_sites("describe", 10)
        assert [(s.path, s.line, s.reference, s.resolution) for s in sites] == [
            ("src/main.ts", 20, True, "scip"), ("src/main.ts", 21, False, "scip")]
    finally:
        index.close()


def test_a_file_edited_after_the_scip_index_falls_back(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    index = _indexed(root)
    try:
        main = root / "src" / "main.ts"
        main.write_text(main.read_text().replace("sizes.push(circle.area());", "sizes.push(circle.area(), 2);"))
        later = (root / "index.scip").stat().st_mtime_ns + HOUR_NS
        os.utime(main, ns=(later, later))
        Indexer(index).run(embed=False)
        callees = _callees(index, "report")  # main.ts: resolved by scope, type and name again
        assert "Circle.area" in callees and "scip" not in callees.values(), callees
        assert _callees(index, "Circle.describe") == {"Circle.area": "scip"}  # shapes.ts: still the SCIP index's
        state = read_state(index.catalog)
        assert (state.files, state.stale) == (2, 1)
    finally:
        index.close()


def test_discovery_can_be_turned_off(tmp_path: Path) -> None:
    index = _indexed(_copy(tmp_path), scip_discover=False)
    try:
        assert "scip" not in _callees(index, "total").values()
        assert read_state(index.catalog).path == ""
    finally:
        index.close()


def test_the_scip_flag_is_remembered_and_its_removal_undone(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    given = tmp_path / "elsewhere.scip"
    (root / "index.scip").rename(given)
    done = run_cli("index", str(root), "--no-vectors", "--no-daemon", "--scip", str(given))
    assert done.returncode == 0, done.stderr
    again = run_cli("index", str(root), "--no-vectors", "--no-daemon")  # no flag: the file given before
    assert again.returncode == 0, again.stderr
    stats = json.loads(run_cli("stats", "--repo", str(root), "--json").stdout)
    assert (stats["scip_path"], stats["scip_files"], stats["scip_stale_files"]) == (str(given), 3, 0)
    given.unlink()  # gone: every file back to codesearch's own edges
    assert run_cli("index", str(root), "--no-vectors", "--no-daemon").returncode == 0
    index = Index(root, load_settings(root))
    try:
        assert "Shape.area" in _callees(index, "total") and "scip" not in _callees(index, "total").values()
        assert read_state(index.catalog).path == ""
    finally:
        index.close()


def test_a_given_scip_file_outlives_a_rebuild(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    given = tmp_path / "given.scip"
    (root / "index.scip").rename(given)
    _indexed(root, scip=str(given)).close()
    index = _indexed(root, max_chunk_chars=1400)  # another chunk size: the index is built again
    try:
        assert read_state(index.catalog).path == str(given)
        assert _callees(index, "total") == {"Square.area": "scip", "makeSquare": "scip"}
    finally:
        index.close()


def test_a_missing_scip_file_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli("index", str(_copy(tmp_path)), "--no-vectors", "--no-daemon", "--scip", str(tmp_path / "none"))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "no such file" in done.stderr


@pytest.mark.parametrize("damage", ["truncated", "foreign"])
def test_a_bad_scip_file_is_one_line_and_the_index_stays_usable(tmp_path: Path, damage: str) -> None:
    root = _copy(tmp_path)
    data = (root / "index.scip").read_bytes()
    bad = tmp_path / "bad.scip"
    bad.write_bytes(data[:len(data) // 2] if damage == "truncated" else b"# not a SCIP index\n" * 20)
    done = run_cli("index", str(root), "--no-vectors", "--no-daemon", "--scip", str(bad))
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "SCIP" in line]
    assert len(lines) == 1 and "not used" in lines[0] and "Traceback" not in done.stderr
    index = Index(root, load_settings(root))
    try:
        assert "Shape.area" in _callees(index, "total")  # codesearch's own edges
        state = read_state(index.catalog)
        assert state.problem and state.files == 0
    finally:
        index.close()
    stats = json.loads(run_cli("stats", "--repo", str(root), "--json").stdout)
    assert stats["scip_problem"]
    assert run_cli("callers", "area", "--repo", str(root), "--no-daemon").returncode == 0


def test_a_good_scip_file_after_a_bad_one_is_used(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    good = (root / "index.scip").read_bytes()
    (root / "index.scip").write_bytes(good[:100])
    index = _indexed(root)
    try:
        assert read_state(index.catalog).problem
        (root / "index.scip").write_bytes(good)
        Indexer(index).run(embed=False)
        assert _callees(index, "total") == {"Square.area": "scip", "makeSquare": "scip"}
        assert not read_state(index.catalog).problem
    finally:
        index.close()


@pytest.mark.skipif(not SCIP_TYPESCRIPT, reason="scip-typescript is not installed")
def test_the_fixture_is_what_scip_typescript_makes(tmp_path: Path) -> None:
    """scip-typescript run again on the fixture gives the same edges as the committed index."""
    root = _copy(tmp_path)
    made = tmp_path / "made.scip"
    subprocess.run([SCIP_TYPESCRIPT, "index", "--output", str(made)], cwd=root, check=True, capture_output=True,
                   timeout=300)
    index = _indexed(root, scip_discover=False)
    try:
        edges = []
        for scip in (root / "index.scip", made):
            with index.catalog.transaction() as db:
                apply_scip_edges(db, read_index(scip), 1 << 62)
            edges.append({q: _callees(index, q) for q in ("total", "collect", "report", "Circle.describe")})
        assert edges[0] == edges[1]
        assert edges[0]["total"] == {"Square.area": "scip", "makeSquare": "scip"}
    finally:
        index.close()


SCIP_PYTHON = optional_tool("scip-python")


@pytest.mark.skipif(not SCIP_PYTHON, reason="scip-python is not installed")
def test_an_index_made_by_scip_python(tmp_path: Path) -> None:
    """sample_repos/python with the SCIP index scip-python makes of it: the calls of main go to
    the methods of Inventory, a function defined inside a method is found, all marked scip."""
    root = tmp_path / "repo"
    shutil.copytree(SAMPLES / "python", root, ignore=shutil.ignore_patterns(".codesearch"))
    (tmp_path / "environment.json").write_text("[]")  # no packages: nothing asked of pip
    subprocess.run([SCIP_PYTHON, "index", ".", "--project-name=sample", "--project-version=1",
                    f"--environment={tmp_path / 'environment.json'}"], cwd=root, check=True, capture_output=True,
                   timeout=300)
    index = _indexed(root)
    try:
        main = _callees(index, "main")
        assert {"Inventory.add_item", "Inventory.remove_item", "compute_backoff"} <= set(main)
        assert set(main.values()) == {"scip"}
        assert _callees(index, "Inventory.to_json") == {"Inventory.to_json.encode": "scip"}
        assert read_state(index.catalog).files >= 3
    finally:
        index.close()
