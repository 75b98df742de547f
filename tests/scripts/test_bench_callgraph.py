"""scripts/bench_callgraph.py: the call graph against a type-aware tool computes its figures on a
small repository (not their values), and a missing tool is reported, not a crash."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
SAMPLE = Path(__file__).resolve().parents[2] / "sample_repos" / "python"
sys.path.insert(0, str(SCRIPTS))
_spec = importlib.util.spec_from_file_location("bench_callgraph", SCRIPTS / "bench_callgraph.py")
assert _spec is not None and _spec.loader is not None
bench_callgraph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_callgraph)

from callgraph_oracles import OracleMissing, name_column  # noqa: E402  (scripts/ is on the path now)


def test_the_python_figures_are_computed(tmp_path: Path) -> None:
    pytest.importorskip("jedi")
    result = bench_callgraph.measure("python", SAMPLE, tmp_path / "index", 500, 0)
    assert result["sampled"] > 0 and result["missing_oracles"] == {}
    overall = result["groups"]["all"]
    assert overall["sites"] == result["sampled"] > overall["unknown"]
    assert overall["in_repo"] > 0 and overall["links"] > 0
    assert overall["precision"] is not None and overall["recall"] is not None
    assert overall["name_only_share"] is not None
    assert "language:python" in result["groups"]
    assert any(group.startswith("kind:") for group in result["groups"])
    assert result["name_only_share_all_sites"] is not None


def test_a_missing_tool_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(root: Path, sites: list) -> dict:
        raise OracleMissing("install it")

    monkeypatch.setitem(bench_callgraph.ORACLES, "python", ("jedi", missing))
    result = bench_callgraph.measure("python", SAMPLE, tmp_path / "index", 50, 0)
    assert result["missing_oracles"] == {"python": "jedi: install it"}
    assert result["groups"] == {}


@pytest.mark.parametrize(("line", "name", "column"), [
    ("    x = load(path)", "load", 8),
    ("    self.loader.load (p)", "load", 16),
    ("    return Map<string>(x)", "Map", 11),
    ("    fmt.Println(load)", "load", 16),
    ("    nothing here", "load", None),
])
def test_the_called_name_is_found_on_its_line(line: str, name: str, column: int | None) -> None:
    assert name_column(line, name) == column
