"""`callers` and `callees` show each call site as grep shows a match (`path:line: the line`), read
from the file as it is now; a site whose line changed or whose file is gone shows its location."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codesearch.cli.commands import main

SAMPLE = Path(__file__).resolve().parents[2] / "sample_repos" / "python"


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".codesearch"))
    assert main(["index", str(root), "--no-vectors", "-q"]) == 0
    return root


def _out(capsys, *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_callers_show_their_call_sites_like_grep(repo, capsys):
    out = _out(capsys, "callers", "clamp", "--repo", str(repo), "--no-daemon")
    lines = out.splitlines()
    at = lines.index("inventory.py:64  function compute_backoff")
    assert lines[at + 1] == "  inventory.py:67: return clamp(delay, 0.0, cap)"


def test_callees_show_the_targets_lines(repo, capsys):
    out = _out(capsys, "callees", "compute_backoff", "--repo", str(repo), "--no-daemon")
    assert "config.py:35  function clamp\n  inventory.py:67: return clamp(delay, 0.0, cap)\n" in out


def test_a_changed_or_vanished_file_shows_the_location_alone(repo, capsys):
    source = repo / "inventory.py"
    lines = source.read_text().split("\n")
    lines[66] = "    return 0"
    source.write_text("\n".join(lines))
    assert "\n  inventory.py:67\n" in _out(capsys, "callers", "clamp", "--repo", str(repo), "--no-daemon")
    (repo / "tests" / "test_inventory.py").unlink()
    out = _out(capsys, "callers", "clamp", "--repo", str(repo), "--no-daemon")
    assert "\n  tests/test_inventory.py:37\n" in out


def test_json_keeps_its_shape(repo, capsys):
    answer = json.loads(_out(capsys, "callers", "clamp", "--repo", str(repo), "--no-daemon", "--json"))
    direct = [r for r in answer["results"] if r["depth"] == 1]
    assert direct and all(isinstance(r["sites"], list) and r["resolution"] for r in direct)


def test_impact_lists_the_callers_of_callers_by_file_nearest_first(repo, capsys):
    """`impact`: who may break if a function changes, its callers and theirs, grouped by file."""
    out = _out(capsys, "impact", "clamp", "--repo", str(repo), "--no-daemon")
    lines = out.splitlines()
    assert lines[0] == "5 callers of clamp in 2 files, up to 3 hops away", out
    at = lines.index("inventory.py")
    assert lines[at + 1:at + 3] == ["  inventory.py:64  function compute_backoff  (1 hop)",
                                    "  inventory.py:70  function main  (2 hops)"]
    answer = json.loads(_out(capsys, "impact", "clamp", "--repo", str(repo), "--no-daemon", "--json", "--depth", "1"))
    assert answer["depth"] == 1 and {r["depth"] for f in answer["files"] for r in f["callers"]} == {1}


def test_a_call_site_is_shown_under_the_definitions_it_may_call_only(tmp_path, capsys):
    """One function calls its callback's own `build` and the imported one: each call site is
    shown under the definition it calls, not under both (the edges are the caller's)."""
    root = tmp_path / "ts"
    root.mkdir()
    (root / "lib.ts").write_text("export function build() { return 1; }\n")
    (root / "app.ts").write_text('import { build } from "./lib";\n\nexport function mixed() {\n'
                                 "  [1].map(() => { const build = () => 2; return build(); });\n"
                                 "  return build();\n}\n")
    assert main(["index", str(root), "--no-vectors", "-q"]) == 0
    answer = json.loads(_out(capsys, "callers", "build", "--repo", str(root), "--no-daemon", "--json"))
    assert len(answer["targets"]) == 2
    sites = {(r["qualified_name"], tuple(r["sites"])) for r in answer["results"] if r["depth"] == 1}
    assert sites == {("mixed", (4, 5))}, sites  # both targets together: each line is one of theirs
    out = _out(capsys, "callers", "mixed.build", "--repo", str(root), "--no-daemon")
    assert "app.ts:4:" in out and "app.ts:5:" not in out, out
    answer = json.loads(_out(capsys, "callees", "mixed", "--repo", str(root), "--no-daemon", "--json"))
    assert {(r["path"], tuple(r["sites"])) for r in answer["results"]} == {("app.ts", (4,)), ("lib.ts", (5,))}
