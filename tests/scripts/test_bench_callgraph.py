"""scripts/bench_callgraph.py: the call graph against a type-aware tool computes its figures on a
small repository, scores a link the tool confirms or contradicts as such on a repository whose
answer is known, and a missing tool is reported, not a crash."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest
from conftest import optional_tool

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
SAMPLE = Path(__file__).resolve().parents[2] / "sample_repos" / "python"
SCIP_FIXTURE = Path(__file__).resolve().parents[2] / "sample_repos" / "scip"
SCIP_TYPESCRIPT = optional_tool("scip-typescript")
sys.path.insert(0, str(SCRIPTS))
_spec = importlib.util.spec_from_file_location("bench_callgraph", SCRIPTS / "bench_callgraph.py")
assert _spec is not None and _spec.loader is not None
bench_callgraph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_callgraph)

from callgraph_oracles import Answer, OracleMissing, name_column  # noqa: E402  (scripts/ is on the path now)

# `load` defined twice; main.py imports and calls pkg/loader.py's, and os.path.join (outside code)
KNOWN = {
    "pkg/__init__.py": "",
    "pkg/loader.py": "def load(path):\n    \"\"\"Read a file.\"\"\"\n    return open(path).read()\n",
    "pkg/other.py": "def load(path):\n    \"\"\"Another load, never called.\"\"\"\n    return path\n",
    "pkg/main.py": "import os\n\nfrom pkg.loader import load\n\n\ndef run(path):\n"
                   "    text = load(path)\n    return os.path.join(text, \"x\")\n",
}


def _known_repo(root: Path) -> Path:
    for name, text in KNOWN.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


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


def test_a_link_the_tool_confirms_scores_full_marks(tmp_path: Path) -> None:
    pytest.importorskip("jedi")
    result = bench_callgraph.measure("known", _known_repo(tmp_path / "repo"), tmp_path / "index", 500, 0)
    overall = result["groups"]["all"]
    assert (overall["in_repo"], overall["links"], overall["confirmed"], overall["truth"], overall["found"]) == (
        1, 1, 1, 1, 1)
    assert (overall["precision"], overall["recall"], overall["name_only_share"]) == (1.0, 1.0, 0.0)
    assert overall["false_outside_sites"] == 0 and overall["outside"] == overall["sites"] - 1
    assert result["groups"]["kind:resolved"]["sites"] == 1 and result["groups"]["how:import"]["confirmed"] == 1


def test_a_link_the_tool_contradicts_scores_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool that places `load(path)` on pkg/other.py's definition (and the rest outside):
    codesearch's link to pkg/loader.py's is wrong, and the one it should have made is missing."""
    def elsewhere(root: Path, sites: list) -> dict:
        return {site: Answer(frozenset({("pkg/other.py", 1)}) if site.name == "load" else frozenset(), True)
                for site in sites}

    monkeypatch.setitem(bench_callgraph.ORACLES, "python", ("fake", elsewhere))
    result = bench_callgraph.measure("known", _known_repo(tmp_path / "repo"), tmp_path / "index", 500, 0)
    overall = result["groups"]["all"]
    assert (overall["links"], overall["confirmed"], overall["truth"], overall["found"]) == (1, 0, 1, 0)
    assert (overall["precision"], overall["recall"]) == (0.0, 0.0)


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


@pytest.mark.skipif(not SCIP_TYPESCRIPT, reason="scip-typescript is not installed")
def test_with_the_scip_index_the_links_are_the_tools(tmp_path: Path) -> None:
    """sample_repos/scip measured by name and with the SCIP index scip-typescript makes of it: by
    name, `square.area()` on a value of unknown type is a guess among the classes' `area`; with
    the index no call into the standard library links anything here, and only `new Circle()` and
    `new Square()` differ (linked to the class, where the tool names the constructor)."""
    root = tmp_path / "repo"
    shutil.copytree(SCIP_FIXTURE, root, ignore=shutil.ignore_patterns(".codesearch", "index.scip"))
    by_name = bench_callgraph.measure("scip", root, tmp_path / "plain", 500, 0)
    precise = bench_callgraph._measure_with_scip("scip", root, tmp_path, 500, 0)
    plain, scip = by_name["groups"]["all"], precise["groups"]["all"]
    assert scip["false_outside_sites"] == 0
    assert scip["links"] - scip["confirmed"] == 2 and scip["precision"] > plain["precision"]
    assert set(precise["groups"]) >= {"how:scip"} and precise["scip_typescript_seconds"] > 0


@pytest.mark.skipif(not SCIP_TYPESCRIPT, reason="scip-typescript is not installed")
def test_a_nested_functions_overloads_are_all_answered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """scip-typescript names each declaration of a nested function's overloads with a symbol of its
    own, all at the call: the answer holds every one of them, not the first; a parameter called is
    a value (as a local symbol is), though the tool places it on its function's line."""
    from callgraph_links import CallSite
    from callgraph_oracles import scip_answers
    monkeypatch.setenv("SCIP_TYPESCRIPT", SCIP_TYPESCRIPT)
    (tmp_path / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}, "include": ["*.ts"]}\n')
    (tmp_path / "clone.ts").write_text("export function enable() {\n  function clone<T>(value: T): T\n"
                                       "  function clone(value: any) {\n    return value;\n  }\n"
                                       "  return clone(1);\n}\n"
                                       "export function run(callback: () => void) {\n  callback();\n}\n")
    site, parameter = CallSite("clone.ts", 6, "clone"), CallSite("clone.ts", 9, "callback")
    answers = scip_answers(tmp_path, [site, parameter])
    assert answers[site].targets == {("clone.ts", 2), ("clone.ts", 3)}
    assert answers[parameter].local
