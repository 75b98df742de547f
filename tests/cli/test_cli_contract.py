"""The same options everywhere, JSON for every `--json` (errors included), shell completion
from the parser, and index progress: bars on a terminal, JSON lines for editors, silence on a pipe."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli
from daemon_helpers import SUITE_SETTINGS

from codesearch.api.types import EmbeddingProgress, Status
from codesearch.cli.commands import main
from codesearch.cli.parser import build_parser
from codesearch.cli.render import format_status

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE = REPO_ROOT / "sample_repos" / "python"


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_") or k in SUITE_SETTINGS}
    out["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + out.get("PYTHONPATH", "")
    return out


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """sample_repos/python with a keyword index and graph (no model needed)."""
    root = tmp_path_factory.mktemp("contract") / "repo"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".codesearch"))
    assert main(["index", str(root), "--no-vectors", "-q"]) == 0
    return root


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# --- callers and callees take the query's options ------------------------------------------------

def test_callers_take_limit_lang_path_and_json(repo, capsys):
    code, out, _ = run_main(capsys, "callers", "clamp", "--repo", str(repo), "--json", "--depth", "3")
    assert code == 0
    everything = json.loads(out)["results"]
    assert len(everything) >= 2
    code, out, _ = run_main(capsys, "callers", "clamp", "--repo", str(repo), "--json", "--depth", "3", "--limit", "1")
    assert code == 0 and json.loads(out)["results"] == everything[:1]
    code, out, _ = run_main(capsys, "callees", "compute_backoff", "--repo", str(repo), "--json", "--lang", "python",
                            "--path", "config*", "-n", "5")
    assert code == 0
    assert {r["path"] for r in json.loads(out)["results"]} == {"config.py"}
    code, out, _ = run_main(capsys, "callers", "clamp", "--repo", str(repo), "--json", "--path", "nowhere/*")
    assert code == 0 and json.loads(out)["results"] == []


# --- every --json prints JSON, errors included ----------------------------------------------------

ERRORS = {
    "query, empty": (["query", "", "--json"], 2),
    "query, bad limit": (["query", "x", "--json", "--limit", "0", "--mode", "keyword"], 2),
    "query, unknown language": (["query", "x", "--json", "--lang", "cobol"], 2),
    "query, unknown option": (["query", "x", "--json", "--frobnicate"], 2),
    "callers, no name": (["callers", "--json"], 2),
    "callees, bad depth": (["callees", "f", "--json", "--depth", "0"], 2),
    "grep, bad pattern": (["grep", "(", "--json"], 2),
    "stats, no folder": (["stats", "--json", "--repo", "/no/such/folder"], 2),
    "index, no folder": (["index", "/no/such/folder", "--json"], 2),
    "eval, no file": (["eval", "/no/such/queries.json", "--json"], 2),
    "daemon, no folder": (["daemon", "status", "/no/such/folder", "--json"], 2),
    "doctor, no folder": (["doctor", "/no/such/folder", "--json"], 2),
    "chunks, no file": (["chunks", "/no/such/file.py", "--json"], 1),
}


@pytest.mark.parametrize("argv, exit_code", list(ERRORS.values()), ids=list(ERRORS))
def test_every_json_error_is_json_on_stdout(repo, capsys, monkeypatch, argv, exit_code):
    monkeypatch.chdir(repo)
    code, out, err = run_main(capsys, *argv)
    assert code == exit_code
    last = json.loads(out.strip().splitlines()[-1])
    assert last.get("error") or last == {"chunks": []}
    if "error" in last:
        assert last["exit_code"] == exit_code and "\n" not in last["error"]
    assert "Traceback" not in err


def test_a_device_the_model_cannot_use_is_one_line(repo, capsys, monkeypatch):
    """--device cuda on a machine whose onnxruntime has no CUDA: exit 1, one sentence that says what
    to install; nothing of the index is lost (keyword search still answers)."""
    import onnxruntime
    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("this onnxruntime has CUDA")
    code, out, err = run_main(capsys, "index", str(repo), "--device", "cuda", "--json")
    assert code == 1 and "Traceback" not in err
    assert "pip install onnxruntime-gpu" in json.loads(out)["error"]
    code, out, _ = run_main(capsys, "query", "retry", "--repo", str(repo), "--mode", "keyword", "--json")
    assert code == 0 and json.loads(out)["results"]


def test_every_json_success_parses(repo, capsys, monkeypatch):
    monkeypatch.chdir(repo)
    commands = [["query", "backoff", "--json", "--mode", "keyword"],
                ["search", "backoff", "--json", "--mode", "keyword"], ["callers", "clamp", "--json"],
                ["callees", "compute_backoff", "--json"], ["impact", "clamp", "--json"], ["grep", "clamp", "--json"],
                ["stats", "--json", "--fast"],
                ["chunks", "config.py", "--json"], ["daemon", "status", ".", "--json"], ["daemon", "list", "--json"],
                ["doctor", ".", "--json", "--fast"], ["index", ".", "--json", "--no-vectors"]]
    for argv in commands:
        code, out, _ = run_main(capsys, *argv)
        assert code == 0, argv
        assert isinstance(json.loads(out), dict), argv
    assert build_parser()  # every command that has --json is in the list above
    with_json = {name for name, sub in _subparsers().items()
                 if any("--json" in a.option_strings for a in sub._actions)}
    assert with_json - {argv[0] for argv in commands} == {"eval"}  # needs a query file: its error is tested


def _subparsers() -> dict:
    import argparse
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


# --- shell completion ------------------------------------------------------------------------------

def completion(shell: str) -> str:
    done = subprocess.run([sys.executable, "-m", "codesearch.cli", "completion", shell], env=env(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_bash_completion_completes_commands_options_and_choices(tmp_path):
    script = tmp_path / "codesearch.bash"
    script.write_text(completion("bash"))
    probe = f"""
source {script}
complete_line() {{
    COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _codesearch_complete; echo "${{COMPREPLY[*]}}"
}}
complete_line codesearch do
complete_line codesearch callers --li
complete_line codesearch query x --mode ""
complete_line codesearch daemon ""
"""
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "doctor"
    assert lines[1] == "--limit"
    assert lines[2].split() == ["hybrid", "vector", "keyword", "graph"]
    assert {"start", "stop", "status", "list", "run"} <= set(lines[3].split())


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_completion_are_valid_scripts(tmp_path, shell):
    text = completion(shell)
    for option in ("--limit", "--no-daemon", "--progress-json") if shell == "zsh" else ("-l limit", "-l no-daemon"):
        assert option in text
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    script = tmp_path / f"codesearch.{shell}"
    script.write_text(text)
    done = subprocess.run([shell, "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    if shell == "fish":  # fish completes a command line on request
        probe = f"source {script}; complete -C 'codesearch callers --li'; complete -C 'codesearch query x --mode '"
        done = subprocess.run(["fish", "-c", probe], capture_output=True, text=True, timeout=30)
        lines = done.stdout.splitlines()
        assert lines[0].split("\t")[0] == "--limit"
        assert sorted(lines[1:]) == ["graph", "hybrid", "keyword", "vector"]


# --- progress ----------------------------------------------------------------------------------------

def fresh_copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".codesearch"))
    return root


def test_index_progress_is_drawn_on_a_terminal(tmp_path):
    root = fresh_copy(tmp_path)
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "codesearch.cli", "index", str(root), "--no-vectors"],
                            env={**env(), "COLUMNS": "100"}, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    drawn = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            drawn += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    text = drawn.decode(errors="replace")
    assert "files parsed" in text and "chunks written" in text
    assert "files/s" in text and "\r" in text
    assert "indexed in" in out


def test_index_progress_is_silent_on_a_pipe_and_json_when_asked(tmp_path):
    root = fresh_copy(tmp_path)
    done = subprocess.run([sys.executable, "-m", "codesearch.cli", "index", str(root), "--no-vectors"], env=env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    assert "files parsed" not in done.stderr and "\r" not in done.stderr

    shutil.rmtree(root / ".codesearch")
    done = subprocess.run([sys.executable, "-m", "codesearch.cli", "index", str(root), "--no-vectors",
                           "--progress-json", "--json"], env=env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    events = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    parse = [e for e in events if e["stage"] == "parse"]
    assert parse[0]["phase"] == "begin" and parse[-1]["phase"] == "end"
    assert parse[-1]["done"] == parse[-1]["total"] == 4 and parse[-1]["unit"] == "files"
    assert {e["stage"] for e in events} == {"parse", "write"}
    assert all(e["event"] == "progress" for e in events)
    assert json.loads(done.stdout)["added"] == 4


# --- daemon status: an ETA only while embedding ----------------------------------------------------

def status(**embedding) -> Status:
    return Status(pid=1, root="/r", uptime_seconds=5, ready=True, model_ready=True, files=1, chunks=100, vectors=40,
                  edges=0, skipped={}, pending_changes=0, last_reindex=None, reindex_count=1,
                  embedding=EmbeddingProgress(**{"chunks_without_vectors": 60, "rate_per_second": 0.0,
                                                 "eta_seconds": None, **embedding}),
                  watcher="native", watcher_note="", embedded_share=0.4, stale=False)


def test_status_shows_no_eta_while_nothing_is_embedded():
    idle = format_status(status())
    assert "ETA" not in idle and "not embedding right now" in idle
    busy = format_status(status(rate_per_second=12.0, eta_seconds=5.0, active=True))
    assert "12/s, ETA 5s" in busy
    almost = format_status(status(rate_per_second=80.0, eta_seconds=0.2, active=True))
    assert "ETA <1s" in almost and "ETA 0s" not in almost


@pytest.mark.parametrize("command, code", [("query", 1), ("grep", 2)])
def test_a_busy_daemon_is_reported_in_one_sentence(tmp_path, command, code):
    """A daemon that answers every request with "busy" (a real socket where the repository's
    daemon listens): the fast path asks again for a while, then says so, as JSON too, with the
    command's error code (grep's is 2), and does not ask again by the full path."""
    import socket
    import threading

    from codesearch.daemon.client import socket_file
    root = tmp_path / "repo"
    (root / ".codesearch").mkdir(parents=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(socket_file(root, None))
    server.listen(16)
    asked = []
    busy = json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "busy: 2 requests running",
                                                             "data": {"retry_after_ms": 200}}}).encode() + b"\n"

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                asked.append(connection.recv(65536))
                connection.sendall(busy)
    threading.Thread(target=serve, daemon=True).start()
    try:
        done = run_cli(command, "retry", "--repo", str(root), "--json")
    finally:
        server.close()
    assert done.returncode == code, done.stderr
    assert json.loads(done.stdout) == {"error": json.loads(done.stdout)["error"], "exit_code": code}
    assert "the daemon is busy (busy: 2 requests running); try again" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert 3 <= len(asked) <= 40  # asked again for BUSY_RETRY_SECONDS, not for ever
    assert all(json.loads(a)["method"] == ("search" if command == "query" else "grep") for a in asked)
