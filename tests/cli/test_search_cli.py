"""End-to-end search through the real CLI, as subprocesses, on one index of several sample languages.

The index is built once per module. Every process that loads the embedding model (hybrid and vector
queries, eval) is started in the background right after indexing, so they run side by side while
the cheap keyword/graph/relation checks go on; each test then waits for the answer it needs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from daemon_helpers import SUITE_SETTINGS

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES = REPO_ROOT / "sample_repos"
LANGUAGES = ("python", "go", "typescript", "rust", "java")
RESULT_FIELDS = {"path", "start_line", "end_line", "kind", "name", "language", "score", "sources", "snippet"}
RETRIEVERS = {"hybrid": {"vector", "keyword", "graph"}, "vector": {"vector"}, "keyword": {"keyword"},
              "graph": {"graph"}}
BACKOFF = {"compute_backoff", "computeBackoff", "ComputeBackoff"}
DEFINITION_KINDS = {"function", "method"}

pytestmark = pytest.mark.slow


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_") or k in SUITE_SETTINGS}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _argv(args) -> list[str]:
    return [sys.executable, "-m", "codesearch.cli", *map(str, args)]


def cli(*args, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(_argv(args), cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)


class Pending:
    """A CLI process started in the background; result() waits for it (once)."""

    def __init__(self, args, cwd: Path):
        self.args = [str(a) for a in args]
        self.proc = subprocess.Popen(_argv(args), cwd=cwd, env=_env(), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self._done: subprocess.CompletedProcess | None = None

    def result(self, timeout: float = 170) -> subprocess.CompletedProcess:
        if self._done is None:
            out, err = self.proc.communicate(timeout=timeout)
            self._done = subprocess.CompletedProcess(self.args, self.proc.returncode, out, err)
        return self._done

    def ok(self) -> subprocess.CompletedProcess:
        done = self.result()
        assert done.returncode == 0, f"{' '.join(self.args)}: exit {done.returncode}\n{done.stderr}"
        return done

    def jsonl(self) -> list[dict]:
        return [json.loads(line) for line in self.ok().stdout.splitlines()]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


@dataclass
class Env:
    base: Path
    root: Path  # the indexed folder; its subfolders are copies of sample_repos/<language>
    elsewhere: Path  # an unrelated working directory
    index_report: dict
    heavy: dict[str, Pending] = field(default_factory=dict)

    def query(self, *args, cwd: Path | None = None) -> subprocess.CompletedProcess:
        # cwd is the indexed root too: see test_query_repo_option_from_another_directory
        return cli("query", *args, "--repo", self.root, "--no-daemon", cwd=cwd or self.root)

    def query_json(self, *args) -> dict:
        done = self.query(*args, "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def batch_file(self, name: str, lines: list[str]) -> Path:
        path = self.base / f"{name}.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path


HYBRID_BATCH = ["compute_backoff", "computeBackoff", "retry delay with exponential backoff",
                "who calls parse_config", "", "Inventory"]
VECTOR_GO_BATCH = ["retry delay with exponential backoff", "parse a key value config file"]
EVAL_QUERIES = [
    {"query": "compute_backoff", "category": "symbol",
     "relevant": [{"path": "python/inventory.py", "start_line": 64, "end_line": 67}],
     "secondary": ["rust/src/main.rs", "typescript/inventory.ts"]},
    {"query": "parse a key=value config file with defaults", "category": "semantic",
     "relevant": ["python/config.py"], "secondary": []},
    {"query": "remove an item from the inventory by name", "category": "semantic",
     "relevant": ["go/main.go", "python/inventory.py"], "secondary": []},
]


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> Env:
    base = tmp_path_factory.mktemp("search_e2e")
    root = base / "corpus"
    for language in LANGUAGES:
        shutil.copytree(SAMPLES / language, root / language)
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    done = cli("index", root, "--json", "-q", cwd=elsewhere, timeout=170)
    assert done.returncode == 0, done.stderr
    e = Env(base, root, elsewhere, json.loads(done.stdout.strip().splitlines()[-1]))
    queries = base / "queries.json"
    queries.write_text(json.dumps(EVAL_QUERIES), encoding="utf-8")
    q = ["--repo", root, "--no-daemon"]
    e.heavy = {
        "hybrid": Pending(["query", "--batch", e.batch_file("hybrid", HYBRID_BATCH), *q, "--json"], root),
        "vector_go": Pending(["query", "--batch", e.batch_file("vector_go", VECTOR_GO_BATCH), *q, "--json",
                              "--mode", "vector", "--lang", "go", "--kind", "function", "--limit", "4"], root),
        "eval": Pending(["eval", queries, "--repo", root, "--json"], elsewhere),
    }
    try:
        yield e
    finally:
        for pending in e.heavy.values():
            pending.stop()


def check_contract(answer: dict, root: Path, mode: str) -> None:
    assert {"query", "results", "timing_ms"} <= set(answer), answer.keys()
    assert isinstance(answer["query"], str)
    assert isinstance(answer["timing_ms"], dict) and isinstance(answer["timing_ms"].get("total"), (int, float))
    assert isinstance(answer["results"], list)
    for r in answer["results"]:
        assert set(r) >= RESULT_FIELDS, set(r)
        path = r["path"]
        assert isinstance(path, str) and "\\" not in path and not path.startswith("/") and ".." not in path.split("/")
        assert (root / path).is_file(), f"{path} is not relative to the indexed root"
        n_lines = len((root / path).read_text(encoding="utf-8").splitlines())
        assert isinstance(r["start_line"], int) and isinstance(r["end_line"], int)
        assert 1 <= r["start_line"] <= r["end_line"] <= max(n_lines, 1), r
        for key in ("kind", "name", "language", "snippet"):
            assert isinstance(r[key], str), (key, r)
        assert r["kind"] and r["language"]
        assert isinstance(r["score"], (int, float))
        sources = r["sources"]
        assert isinstance(sources, dict) and set(sources) == RETRIEVERS[mode], sources
        assert all(v is None or (isinstance(v, int) and v >= 1) for v in sources.values()), sources
        assert any(v is not None for v in sources.values()), "a result no retriever ranked"
        assert r["snippet"].strip()


def top_names(answer: dict, n: int) -> list[tuple[str, str]]:
    return [(r["name"], r["kind"]) for r in answer["results"][:n]]


# --- index -----------------------------------------------------------------------------------

def test_index_built_with_vectors(env):
    report = env.index_report
    assert report["added"] >= 10
    assert report["chunks_written"] > 50
    assert report["vectors_embedded"] + report["vectors_from_cache"] > 0
    assert (env.root / ".codesearch" / ".gitignore").read_text().strip() == "*"


# --- contract of the cheap modes (no model load) -----------------------------------------------

def test_keyword_mode_contract_and_limit(env):
    path = env.batch_file("keyword", ["compute_backoff", "inventory total value", "who calls parse_config"])
    done = env.query("--batch", path, "--json", "--mode", "keyword", "--limit", "3")
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["query"] for a in answers] == ["compute_backoff", "inventory total value", "who calls parse_config"]
    for answer in answers:
        assert len(answer["results"]) == 3  # each has more than 3 matches: --limit cuts
        check_contract(answer, env.root, "keyword")


def test_graph_mode_contract(env):
    path = env.batch_file("graph", ["compute_backoff", "who calls parse_config"])
    done = env.query("--batch", path, "--json", "--mode", "graph")
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["query"] for a in answers] == ["compute_backoff", "who calls parse_config"]
    for answer in answers:
        assert answer["results"]
        check_contract(answer, env.root, "graph")
    callers = {(r["path"], r["name"]) for r in answers[1]["results"]}
    assert ("python/inventory.py", "main") in callers


# --- relations -------------------------------------------------------------------------------

def test_callers_of_clamp(env):
    done = cli("callers", "clamp", "--repo", env.root, "--json", "--no-daemon", cwd=env.elsewhere)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["direction"] == "callers"
    assert {t["path"] for t in answer["targets"]} >= {"python/config.py", "rust/src/config.rs", "typescript/config.ts"}
    callers = {(r["path"], r["name"]) for r in answer["results"]}
    assert callers >= {("python/inventory.py", "compute_backoff"), ("rust/src/main.rs", "compute_backoff"),
                       ("typescript/inventory.ts", "computeBackoff"),
                       ("java/src/main/java/com/example/inventory/Inventory.java", "computeBackoff")}
    for r in answer["results"]:
        assert (env.root / r["path"]).is_file()  # relative to the indexed root, not the working directory


def test_callees_of_compute_backoff(env):
    done = cli("callees", "compute_backoff", "--repo", env.root, "--json", "--no-daemon", cwd=env.elsewhere)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["direction"] == "callees"
    callees = {(r["path"], r["name"]) for r in answer["results"]}
    assert ("python/config.py", "clamp") in callees
    assert ("rust/src/config.rs", "clamp") in callees


def test_callers_human_output(env):
    done = cli("callers", "parse_config", "--repo", env.root, "--no-daemon", cwd=env.elsewhere)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^python/inventory\.py:\d+\s+function main$", done.stdout, re.MULTILINE), done.stdout


# --- filters ---------------------------------------------------------------------------------

def test_lang_filter_keyword(env):
    answer = env.query_json("inventory item", "--mode", "keyword", "--lang", "go")
    assert answer["results"]
    assert {r["language"] for r in answer["results"]} == {"go"}


def test_kind_filter_keyword(env):
    answer = env.query_json("inventory item value", "--mode", "keyword", "--kind", "function", "--limit", "20")
    assert answer["results"]
    assert {r["kind"] for r in answer["results"]} == {"function"}


def test_path_filter(env):
    done = env.query("clamp", "--mode", "keyword", "--path", "python/*", "--json")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    assert results
    assert all(r["path"].startswith("python/") for r in results)


def test_query_repo_option_from_another_directory(env):
    done = env.query("compute_backoff", "--mode", "keyword", "--json", cwd=env.elsewhere)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    assert results and (env.root / results[0]["path"]).is_file()


def test_relation_query_respects_lang_filter(env):
    answer = env.query_json("who calls parse_config", "--mode", "graph", "--lang", "go")
    assert {r["language"] for r in answer["results"]} <= {"go"}


@pytest.mark.parametrize("flag, value", [("--lang", "cobol"), ("--kind", "banana")])
def test_unknown_filter_value_is_usage_error(env, flag, value):
    done = env.query("inventory", flag, value)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and value in lines[0] and "Traceback" not in done.stderr


@pytest.mark.parametrize("text", [None, "   "])
def test_empty_query_is_usage_error(env, text):
    args = [] if text is None else [text]
    done = env.query(*args)
    assert done.returncode == 2
    assert "empty" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# --- output shapes ---------------------------------------------------------------------------

def test_files_one_result_per_path(env):
    answer = env.query_json("inventory item value", "--mode", "keyword", "--files", "--limit", "20")
    paths = [r["path"] for r in answer["results"]]
    assert len(paths) >= 3
    assert len(paths) == len(set(paths))
    check_contract(answer, env.root, "keyword")


def test_vimgrep_lines(env):
    done = env.query("inventory total value", "--mode", "keyword", "--vimgrep", "--limit", "5")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 5
    named = 0
    for line in lines:
        m = re.fullmatch(r"([^:]+):(\d+):(\d+):(.*)", line)
        assert m, line
        path, number, column, text = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        source = (env.root / path).read_text(encoding="utf-8").splitlines()
        assert 1 <= number <= len(source) and column >= 1
        shown = text.split(": ", 1)[1].rstrip("…").strip()
        assert source[number - 1].strip().startswith(shown), (line, source[number - 1])
        kind, qualified = text.split(": ", 1)[0].split(" ", 1)
        if kind in ("function", "method", "class"):  # the line and column of the name itself
            assert source[number - 1][column - 1:].startswith(qualified.rsplit(".", 1)[-1]), line
            named += 1
    assert named


def test_human_output_with_explain(env):
    done = env.query("compute_backoff", "--mode", "keyword", "--explain", "--limit", "5")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    first = re.search(r"^\s*1\. (\S+):(\d+)-(\d+)\s+(\w+) (\S+)", out, re.MULTILINE)
    assert first, out
    path, start, end, kind, name = first.group(1), int(first.group(2)), int(first.group(3)), first.group(4), \
        first.group(5)
    assert (kind, name) == ("function", "compute_backoff")
    source = (env.root / path).read_text(encoding="utf-8").splitlines()
    assert "compute_backoff" in "\n".join(source[start - 1:end])
    assert len(re.findall(r"^\s*\d+\. ", out, re.MULTILINE)) == 5
    assert re.search(r"^\s+retrievers: keyword #\d+$", out, re.MULTILINE), out
    assert re.search(r"^\s+ranking: defines the symbol", out, re.MULTILINE), out
    assert "Traceback" not in done.stderr


def test_no_results_is_success(env):
    answer = env.query_json("zzqxj", "--mode", "keyword")
    assert answer["results"] == []


# --- answers of the model-loading processes (started in the fixture, run meanwhile) ---

def test_hybrid_batch_contract_one_object_per_line_in_order(env):
    answers = env.heavy["hybrid"].jsonl()
    assert [a["query"] for a in answers] == HYBRID_BATCH
    for text, answer in zip(HYBRID_BATCH, answers):
        if text:
            assert answer["results"], text
            check_contract(answer, env.root, "hybrid")
            assert len(answer["results"]) <= 10
    empty = answers[HYBRID_BATCH.index("")]
    assert empty["results"] == [] and empty.get("error")


def test_vector_mode_contract_and_lang_kind_filters(env):
    """--mode vector --lang go --kind function: the filters are pushed into Chroma."""
    answers = env.heavy["vector_go"].jsonl()
    assert [a["query"] for a in answers] == VECTOR_GO_BATCH
    for answer in answers:
        assert answer["results"]
        assert len(answer["results"]) <= 4
        check_contract(answer, env.root, "vector")
        assert {r["language"] for r in answer["results"]} == {"go"}
        assert {r["kind"] for r in answer["results"]} == {"function"}
        assert all(r["path"].startswith("go/") for r in answer["results"])
    names = {r["name"] for r in answers[0]["results"]}
    assert "ComputeBackoff" in names


def test_symbol_query_top_result_is_the_definition(env):
    answers = {a["query"]: a for a in env.heavy["hybrid"].jsonl()}
    top = answers["compute_backoff"]["results"][0]
    assert (top["name"], top["kind"]) == ("compute_backoff", "function")
    top = answers["computeBackoff"]["results"][0]
    assert top["name"] == "computeBackoff" and top["kind"] in DEFINITION_KINDS
    top = answers["Inventory"]["results"][0]
    assert top["name"] == "Inventory" and top["kind"] in {"class", "struct"}


def test_natural_language_query_finds_backoff(env):
    answers = {a["query"]: a for a in env.heavy["hybrid"].jsonl()}
    top3 = top_names(answers["retry delay with exponential backoff"], 3)
    assert any(name in BACKOFF and kind in DEFINITION_KINDS for name, kind in top3), top3


def test_who_calls_ranks_callers_first_in_hybrid(env):
    done = cli("callers", "parse_config", "--repo", env.root, "--json", "--no-daemon", cwd=env.elsewhere)
    assert done.returncode == 0, done.stderr
    caller_ids = {r["id"] for r in json.loads(done.stdout)["results"]}
    assert len(caller_ids) >= 2
    answers = {a["query"]: a for a in env.heavy["hybrid"].jsonl()}
    top = answers["who calls parse_config"]["results"][:len(caller_ids)]
    assert {r["id"] for r in top} == caller_ids, [(r["path"], r["name"]) for r in top]
    assert all(r["sources"]["graph"] is not None for r in top)


def test_eval_json(env):
    report = json.loads(env.heavy["eval"].ok().stdout)
    overall = report["overall"]
    for metric in ("ndcg@10", "mrr@10", "p@5", "recall@10"):
        assert 0.0 <= overall[metric] <= 1.0
    assert overall["queries"] == len(EVAL_QUERIES)
    assert set(report["categories"]) == {"symbol", "semantic"}
    assert report["categories"]["symbol"]["queries"] == 1
    assert report["categories"]["semantic"]["queries"] == 2
    assert report["categories"]["symbol"]["ndcg@10"] > 0.5
    assert report["categories"]["symbol"]["mrr@10"] == 1.0
    per_query = {q["query"]: q for q in report["queries"]}
    assert per_query["parse a key=value config file with defaults"]["ndcg@10"] > 0
    assert overall["ndcg@10"] > 0
