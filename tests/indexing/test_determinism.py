"""The same tree gives the same index however it was reached: fresh, or by incremental runs."""

from __future__ import annotations

import shutil
from pathlib import Path

from index_helpers import copy_sample

from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.store.catalog import Catalog
from codesearch.store.graph_reads import MAX_CANDIDATES


def index(root: Path) -> None:
    idx = Index(root, load_settings(root), create=True)
    try:
        Indexer(idx).run(embed=False)
    finally:
        idx.close()


def snapshot(root: Path) -> dict:
    catalog = Catalog(root / ".codesearch" / "catalog.sqlite3", readonly=True)
    try:
        return catalog.stats.contents()
    finally:
        catalog.close()


def define_handler(root: Path, name: str) -> None:
    (root / "handlers").mkdir(exist_ok=True)
    (root / "handlers" / f"{name}.py").write_text(f"def handle(event):\n    return '{name}', event\n")


def test_incremental_runs_give_the_fresh_index_of_the_same_tree(tmp_path):
    work = copy_sample("python", tmp_path / "work")
    (work / "dispatch.py").write_text("def dispatch(event):\n    return handle(event)\n")
    for name in ("z1", "z2", "z3", "z4", "z5"):  # `handle` defined often: the call is ambiguous
        define_handler(work, name)
    index(work)
    # later, more definitions of the name, sorting before the first ones: an incremental run
    # writes them after, a fresh walk before (past MAX_CANDIDATES the order picked the edges)
    for name in ("a1", "a2", "a3", "a4", "a5", "a6"):
        define_handler(work, name)
    (work / "config.py").write_text((work / "config.py").read_text() + "\n\ndef handle(event):\n    return event\n")
    (work / "handlers" / "z3.py").unlink()
    index(work)
    assert len(list((work / "handlers").glob("*.py"))) > MAX_CANDIDATES

    fresh = tmp_path / "fresh"
    shutil.copytree(work, fresh, ignore=shutil.ignore_patterns(".codesearch"))
    index(fresh)
    assert snapshot(work) == snapshot(fresh)


def test_edits_that_keep_or_change_definitions_give_the_fresh_index(tmp_path):
    """A rewritten file keeps the calls and imports into its definitions that keep their ids (no
    re-resolution of their callers); a definition renamed, added or removed sends its callers
    through resolution again. Each step's index equals a fresh one of the same tree."""
    work = copy_sample("python", tmp_path / "work")
    index(work)
    config = work / "config.py"
    steps = [
        lambda text: text + "\n# a comment: the definitions stay\n",
        lambda text: text.replace("def clamp(", "def clamp_value("),  # its callers resolve to nothing now
        lambda text: text + "\n\ndef clamp(value, low, high):\n    return max(low, min(high, value))\n",
        lambda text: text.replace("return", "return  ", 1),  # a body edit inside a definition
    ]
    for number, step in enumerate(steps):
        config.write_text(step(config.read_text()))
        index(work)
        fresh = tmp_path / f"fresh{number}"
        shutil.copytree(work, fresh, ignore=shutil.ignore_patterns(".codesearch"))
        index(fresh)
        assert snapshot(work) == snapshot(fresh), f"step {number}"
        edges = snapshot(work)["edges"]
        assert any(dst_kind == "calls" for _, _, dst_kind, _ in edges)


def test_a_rewritten_file_keeps_the_rows_of_its_unchanged_chunks_and_the_edges_into_them(tmp_path):
    """Saving a file that others call rewrites none of the calls into it: its chunks keep their
    row ids; what came from the old text (keyword rows, call sites) is replaced."""
    work = copy_sample("python", tmp_path / "work")
    index(work)
    catalog_path = work / ".codesearch" / "catalog.sqlite3"
    into_config = ("SELECT e.src, e.dst FROM edges e JOIN chunks d ON d.rid = e.dst JOIN files df ON df.fid = d.fid "
                   "JOIN chunks s ON s.rid = e.src JOIN files sf ON sf.fid = s.fid "
                   "WHERE df.path = 'config.py' AND sf.path != 'config.py'")

    def read() -> tuple[dict[str, int], set[tuple[int, int]], set[int], set[int]]:
        catalog = Catalog(catalog_path, readonly=True)
        try:
            db = catalog.db
            rids = {r[0]: r[1] for r in db.execute("SELECT c.id, c.rid FROM chunks c JOIN files f ON f.fid = c.fid "
                                                   "WHERE f.path = 'config.py'")}
            matching = [{r[0] for r in db.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (word,))}
                        for word in ("isdigit", "isdecimal")]
            return rids, {(r[0], r[1]) for r in db.execute(into_config)}, matching[0], matching[1]
        finally:
            catalog.close()

    rids, edges_in, old_word, new_word = read()
    assert edges_in and old_word and not new_word
    config = work / "config.py"
    config.write_text(config.read_text().replace("value.isdigit()", "value.isdecimal()")
                      .replace("def clamp(", "def clamp_value("))
    index(work)
    rids_after, edges_after, old_after, new_after = read()
    kept = set(rids) & set(rids_after)
    assert kept and all(rids[cid] == rids_after[cid] for cid in kept)
    gone_rid = {rids[cid] for cid in set(rids) - kept}
    assert gone_rid  # clamp's chunk went, and the calls into it with it
    assert edges_after == {(src, dst) for src, dst in edges_in if dst not in gone_rid}
    assert not old_after & set(rids_after.values()) and new_after == old_word


def test_only_callers_of_definitions_that_came_or_went_are_resolved_again(tmp_path, monkeypatch):
    work = copy_sample("python", tmp_path / "work")
    index(work)
    from codesearch.indexing import indexer
    seen: list[set[str]] = []
    real = indexer.resolve_call_edges

    def spy(db, changed_paths, dirty_names, everything=False):
        seen.append(set(dirty_names))
        return real(db, changed_paths, dirty_names, everything)

    monkeypatch.setattr(indexer, "resolve_call_edges", spy)
    config = work / "config.py"
    config.write_text(config.read_text() + "\n# a comment: the definitions stay\n")
    index(work)
    config.write_text(config.read_text().replace("def clamp(", "def clamp_value("))
    index(work)
    assert seen == [set(), {"clamp", "clamp_value"}]
