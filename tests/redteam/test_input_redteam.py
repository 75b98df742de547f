"""Red team: input a user or client controls. Settings out of range (a SIGSEGV, NaN in --json, an
"unexpected error" after a build), `merge` input with NaN or deep nesting, workspace files, text
that is not UTF-8 or holds a NUL (CLI arguments, JSON-RPC on the daemon's socket), file names
that drive a terminal (C1 CSI, RIGHT-TO-LEFT OVERRIDE), a FIFO given to `chunks`, a workspace
none of whose repositories can answer. Each test reproduces a defect found by probing;
the real CLI and a real daemon throughout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import REPO_ROOT, SAMPLES, run_cli
from daemon_helpers import Conn, assert_error, start_daemon

from codesearch.text import for_terminal

CSI = "\u009b"  # C1 "control sequence introducer": ESC [ on many terminals
RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: the rest of the name is shown reversed
NOT_UTF8 = "a\udcffb"  # how Python hands over the argument b"a\xffb"


def one_line_error(done: subprocess.CompletedProcess, code: int = 2) -> str:
    """The contract's failure: the exit code, one line on stderr, no traceback."""
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("codesearch: "), done.stderr
    assert "Traceback" not in done.stderr and "unexpected error" not in done.stderr, done.stderr
    return lines[0]


@pytest.fixture
def sample(tmp_path) -> Path:
    """A copy of sample_repos/python, not indexed."""
    root = tmp_path / "repo"
    shutil.copytree(SAMPLES / "python", root, ignore=shutil.ignore_patterns(".codesearch"))
    return root


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> Path:
    """sample_repos/python with a keyword index and graph, and two files whose names would drive
    a terminal."""
    root = tmp_path_factory.mktemp("input") / "repo"
    shutil.copytree(SAMPLES / "python", root, ignore=shutil.ignore_patterns(".codesearch"))
    (root / f"csi{CSI}31m.py").write_text("def zqcsiname():\n    return zqrloname()\n")
    (root / f"evil{RLO}yp.py").write_text("def zqrloname():\n    return 1\n")
    done = run_cli("index", str(root), "--no-vectors", "-q")
    assert done.returncode == 0, done.stderr
    return root


# --- settings: checked as they are read, with the key, the value and the range --------------------

@pytest.mark.parametrize(("line", "key"), [
    ("hnsw_m = 0", "hnsw_m"),  # Chroma's HNSW took the index process down with SIGSEGV
    ("text_window_lines = 0", "text_window_lines"),  # unexpected error, after the walk
    ("embed_batch_size = -3", "embed_batch_size"),
    ("rrf_k = -60", "rrf_k"),  # unexpected error on every query
    ('file_aggregation = "best"', "file_aggregation"),  # unexpected error on --files
    ("weight_keyword = nan", "weight_keyword"),  # --json printed NaN
])
def test_a_bad_setting_stops_index_before_any_work(sample, line, key):
    (sample / ".codesearch.toml").write_text(line + "\n")
    message = one_line_error(run_cli("index", str(sample), "--no-vectors", "-q"))
    assert f"{key!r}" in message and ".codesearch.toml" in message
    assert not (sample / ".codesearch").exists()  # refused at load time, before a build


def test_nan_weight_never_reaches_json(indexed):
    (indexed / ".codesearch.toml").write_text("weight_keyword = nan\n")
    try:
        done = run_cli("query", "clamp", "--repo", str(indexed), "--json", "--mode", "keyword")
    finally:
        (indexed / ".codesearch.toml").unlink()
    message = one_line_error(done)
    assert "NaN" not in done.stdout and json.loads(done.stdout)["exit_code"] == 2
    assert "'weight_keyword' must be from 0 to 1000, not nan" in message


def test_a_bad_setting_from_the_environment_names_the_variable(indexed):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_")}
    env.update(PYTHONPATH=str(REPO_ROOT), CODESEARCH_AUTO_DAEMON="0", CODESEARCH_RRF_K="-60")
    done = subprocess.run([sys.executable, "-m", "codesearch.cli", "query", "clamp", "--repo", str(indexed),
                           "--mode", "keyword"], env=env, capture_output=True, text=True, timeout=60)
    assert "CODESEARCH_RRF_K: setting 'rrf_k' must be from 0 to" in one_line_error(done)


def test_a_bad_setting_stops_daemon_start_in_one_line(sample):
    (sample / ".codesearch.toml").write_text("hnsw_m = 0\n")
    message = one_line_error(run_cli("daemon", "start", str(sample), "--timeout", "30"))
    assert "'hnsw_m' must be from 2 to 512, not 0" in message  # not the daemon's log, with a traceback


# --- merge: NaN, Infinity and deep nesting in, one line and exit 2 out -------------------------------

def merge_cli(stdin: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codesearch.cli", "merge", *args], input=stdin, text=True,
                          capture_output=True, timeout=60, cwd=REPO_ROOT,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})


@pytest.mark.parametrize(("stdin", "says"), [
    ('[{"source": "a", "results": [{"id": "x", "score": NaN}]}]', "NaN"),  # was printed back as NaN
    ('[{"source": "a", "results": [{"id": "x", "score": Infinity}]}]', "Infinity"),
    ('[{"source": "a", "results": [{"id": "x", "score": 1e999}]}]', "1e999"),  # read as inf
    ("[" * 100_000 + "]" * 100_000, "nests deeper"),  # was exit 1, "unexpected error: RecursionError"
    ('[{"source": "\\ud800", "results": [{"id": "x"}]}]', "not valid UTF-8"),  # was UnicodeEncodeError
])
def test_merge_refuses_input_it_could_not_write_back(stdin, says):
    done = merge_cli(stdin)
    assert says in one_line_error(done) and done.stdout == ""


@pytest.mark.parametrize("args", [("--k", "1e-320"), ("--k", "1e9"), ("--boost-sources", "a:1e300")])
def test_merge_options_are_range_checked(args):
    """--k 1e-320 made the first rank's share infinite, and the answer said Infinity."""
    done = merge_cli('[{"source": "a", "results": [{"id": "x"}]}]', *args)
    assert "Infinity" not in done.stdout
    one_line_error(done)


# --- workspace files ------------------------------------------------------------------------------

@pytest.mark.parametrize("table", ['name = "docs\\u202etxt.exe"', 'name = "x\\u009b2J"', "boost = 1e300"])
def test_a_workspace_file_with_a_bad_name_or_boost_is_refused(tmp_path, sample, table):
    file = tmp_path / "ws.toml"
    file.write_text(f'[[repo]]\npath = "{sample}"\n{table}\n')
    assert "ws.toml:1" in one_line_error(run_cli("query", "x", "--workspace", str(file), "--mode", "keyword"))


def test_a_workspace_none_of_whose_repositories_can_answer_says_why(tmp_path):
    """Was "unexpected error: ServiceUnavailable: ..." (rerun with --debug)."""
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    repos = ("--repo", str(tmp_path / "one"), "--repo", str(tmp_path / "two"))
    message = one_line_error(run_cli("query", "x", *repos, "--mode", "keyword"), code=1)
    assert message.startswith("codesearch: no repository of the workspace could answer: one: ")
    one_line_error(run_cli("grep", "x", *repos), code=2)  # grep's errors exit 2


# --- text that is not UTF-8, or holds a NUL -------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("query", "\udcff", "--mode", "keyword"),  # was "no results", the byte lost on the way
    ("query", "\udcff", "--json"),
    ("callers", "\udcff"),  # was "unexpected error: UnicodeEncodeError"
    ("grep", NOT_UTF8, "--json"),  # was "unexpected error: UnicodeEncodeError"
    ("grep", NOT_UTF8),  # was "ripgrep failed"
])
def test_cli_text_that_is_not_utf8_is_refused_in_a_line(indexed, args):
    done = run_cli(*args, "--repo", str(indexed))
    assert "is not valid UTF-8 text" in one_line_error(done)


def test_a_batch_answers_a_bad_line_in_its_place(indexed, tmp_path):
    """A line with a NUL ended the batch with exit 2; a byte that was not UTF-8 was "unexpected
    error: UnicodeDecodeError" before any line was answered."""
    batch = tmp_path / "queries.txt"
    batch.write_bytes(b"clamp\na\x00b\nr\xffy\nclamp\n")
    done = run_cli("query", "--batch", str(batch), "--repo", str(indexed), "--json", "--mode", "keyword")
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a.get("error") for a in answers] == [None, "the query holds a NUL character",
                                                 "the query is not valid UTF-8 text", None]
    assert answers[0]["results"] and answers[3]["results"] == answers[0]["results"]


@pytest.fixture(scope="module")
def daemon(request):
    """A daemon on a small repository of its own (short path: a socket's is bounded)."""
    base = Path(tempfile.mkdtemp(prefix="csr-"))
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    root = base / "repo"
    shutil.copytree(SAMPLES / "python", root, ignore=shutil.ignore_patterns(".codesearch"))
    return start_daemon(request, root)


@pytest.mark.parametrize(("method", "params", "says"), [
    ("search", {"query": "\ud800", "mode": "keyword"}, "the query is not valid UTF-8 text"),
    ("callers", {"name": "\udcff"}, "the name is not valid UTF-8 text"),
    ("grep", {"pattern": "a\udcffb"}, "the pattern is not valid UTF-8 text"),
    ("read", {"path": "config.py\0.txt"}, "the path holds a NUL character"),  # was an internal error
    ("index", {"paths": ["\ud800"]}, "paths[0] is not valid UTF-8 text"),
])
def test_the_socket_refuses_bad_text_as_invalid_params(daemon, method, params, says):
    line = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})  # "\ud800" escaped
    with Conn(daemon.sock, timeout=60) as conn:
        conn.send_raw(line.encode() + b"\n")
        error = assert_error(conn.recv(), (-32602,), request_id=7)
        assert says in error["message"]
        assert conn.request("health")["result"]["ok"]  # the connection goes on


def test_an_id_that_cannot_be_written_back_gets_an_answer(daemon):
    """A lone surrogate as the id: the search ran, then writing the reply failed and the client
    was dropped without one."""
    with Conn(daemon.sock, timeout=60) as conn:
        conn.send_raw(b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "health"}\n')
        assert "an id is a number or a string" in assert_error(conn.recv(), (-32600,))["message"]
        assert conn.request("health")["result"]["ok"]


def test_grep_json_through_the_daemon_refuses_bytes_in_a_line(daemon):
    """The fast path through a running daemon printed a traceback (UnicodeEncodeError)."""
    assert "the pattern is not valid UTF-8 text" in one_line_error(
        run_cli("grep", NOT_UTF8, "--json", "--repo", str(daemon.root)))


# --- names that drive a terminal --------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("grep", "zqcsiname|zqrloname"),
    ("grep", "zqcsiname|zqrloname", "-l"),
    ("grep", "zqcsiname|zqrloname", "--vimgrep"),
    ("query", "zqcsiname zqrloname", "--mode", "keyword"),
    ("query", "zqcsiname zqrloname", "--mode", "keyword", "--vimgrep"),
    ("callers", "zqrloname"),
])
def test_printed_paths_escape_c1_and_bidi_controls(indexed, args):
    done = run_cli(*args, "--repo", str(indexed))
    assert done.returncode == 0, done.stderr
    assert CSI not in done.stdout and RLO not in done.stdout
    assert for_terminal(f"csi{CSI}31m.py") in done.stdout
    if args[0] != "callers":
        assert for_terminal(f"evil{RLO}yp.py") in done.stdout


def test_json_keeps_names_as_stored(indexed):
    """JSON is for programs: its strings are the names as the index stores them."""
    done = run_cli("grep", "zqrloname", "--json", "--repo", str(indexed))
    assert f"evil{RLO}yp.py" in {m["path"] for m in json.loads(done.stdout)["matches"]}


def test_chunks_escapes_names_and_says_what_a_fifo_is(indexed, tmp_path):
    done = run_cli("chunks", str(indexed / f"evil{RLO}yp.py"))
    assert done.returncode == 0 and RLO not in done.stdout and "evil\\u202eyp.py" in done.stdout
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    done = run_cli("chunks", str(fifo))  # never opened: nobody writes to it, an open would block
    assert one_line_error(done, code=1).endswith("pipe.py: not a regular file")
    assert one_line_error(run_cli("chunks", str(tmp_path / "gone.py")), code=1).endswith("gone.py: no such file")


@pytest.mark.parametrize("args", [("index", "--wait", "nan"), ("index", "--wait", "-3"), ("index", "--wait", "inf"),
                                  ("daemon", "start", "--timeout", "nan"), ("daemon", "start", "--timeout", "-1")])
def test_times_to_wait_are_finite_and_not_negative(tmp_path, args):
    """`index --wait nan` and `daemon start --timeout -1` were taken (a NaN wait never ends)."""
    result = run_cli(*args, str(tmp_path))
    assert result.returncode == 2
    assert "seconds" in result.stderr.strip().splitlines()[-1]


def test_indexing_messages_escape_what_would_drive_a_terminal(capsys):
    from codesearch.indexing.indexer import print_log
    print_log("skipped evil\u202etxt.py (binary) and \u009b31m.py")
    err = capsys.readouterr().err
    assert "\u202e" not in err and "\u009b" not in err and "evil" in err
