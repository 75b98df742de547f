"""First run to first answer: a query in a repository without an index answers at once from
keyword and graph (partial), starts a daemon that embeds, and the next query goes through it;
--no-daemon leaves nothing running; an auto-started daemon stops once idle; `daemon list` shows
the daemons that run and forgets the dead. Real processes, real sockets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from daemon_helpers import REPO_ROOT, Daemon, _env, copy_sample, new_base, pid_gone, wait_for

from codesearch.daemon.lifecycle import lock_is_held


@pytest.fixture
def runtime(tmp_path) -> Path:
    """A registry of daemons of the test's own."""
    return Path(tempfile.mkdtemp(prefix="csrt-", dir=tmp_path))


def auto_env(runtime: Path, **extra: str) -> dict[str, str]:
    return {**_env(), "CODESEARCH_AUTO_DAEMON": "1", "CODESEARCH_RUNTIME_DIR": str(runtime), **extra}


def run(env: dict[str, str], *args: str, cwd: Path, flags: tuple[str, ...] = (), timeout: float = 180):
    return subprocess.run([sys.executable, *flags, "-m", "codesearch.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def fresh(request) -> tuple[Path, Daemon]:
    """A copy of sample_repos/python without an index, and the daemon a query may start on it
    (stopped, or killed, when the test ends)."""
    repo = copy_sample(new_base() / "repo")
    daemon = Daemon(repo)
    request.addfinalizer(daemon.cleanup)
    return repo, daemon


def test_first_query_answers_partially_starts_a_daemon_and_the_next_goes_through_it(fresh, runtime):
    repo, daemon = fresh
    env = auto_env(runtime)
    first = run(env, "query", "retry delay with exponential backoff", "--json", cwd=repo)
    assert first.returncode == 0, first.stderr
    answer = json.loads(first.stdout)
    assert "compute_backoff" in [r["name"] for r in answer["results"]][:3]
    assert answer["partial"] is True and "daemon" in answer["note"]
    assert "has no index yet" in first.stderr and "Traceback" not in first.stderr
    assert len(answer["note"].splitlines()) == 1

    wait_for(lambda: daemon.read_pid() is not None and daemon.sock.exists(), timeout=60, what="the daemon")
    pid = daemon.pid
    listed = json.loads(run(env, "daemon", "list", "--json", cwd=repo).stdout)["daemons"]
    assert [(d["root"], d["pid"], d["auto"]) for d in listed] == [(str(repo.resolve()), pid, True)]

    # the next query is answered by the daemon: this process never imports the search machinery
    second = run(env, "query", "retry delay with exponential backoff", "--json", cwd=repo,
                 flags=("-X", "importtime"))
    assert second.returncode == 0, second.stderr
    assert "compute_backoff" in [r["name"] for r in json.loads(second.stdout)["results"]][:3]
    imported = second.stderr
    assert "networkx" not in imported and "chromadb" not in imported and "codesearch.search.searcher" not in imported
    assert daemon.pid == pid  # the same daemon, not a second one
    status = daemon.status()
    assert status["idle_stop_minutes"] == 60

    daemon.stop()
    assert pid_gone(pid) or wait_for(lambda: pid_gone(pid), timeout=30, what="the daemon to stop")
    assert json.loads(run(env, "daemon", "list", "--json", cwd=repo).stdout)["daemons"] == []


def test_no_daemon_builds_everything_here_and_leaves_no_process(fresh, runtime):
    repo, _ = fresh
    env = auto_env(runtime)
    done = run(env, "query", "clamp", "--no-daemon", "--mode", "keyword", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["results"] and not answer.get("partial")
    assert not lock_is_held(repo / ".codesearch" / "daemon.lock")
    assert not (repo / ".codesearch" / "daemon.sock").exists()
    assert not list(runtime.glob("*.json"))
    stats = json.loads(run(env, "stats", "--json", "--repo", str(repo), cwd=repo).stdout)
    assert stats["chunks_without_vectors"] == 0 and stats["vectors"] > 0  # made in the foreground


def test_auto_daemon_false_in_settings_opts_out(fresh, runtime):
    repo, _ = fresh
    env = auto_env(runtime)
    assert run(env, "index", str(repo), "--no-vectors", "-q", cwd=repo).returncode == 0
    (repo / ".codesearch.toml").write_text("auto_daemon = false\n")
    del env["CODESEARCH_AUTO_DAEMON"]  # the environment would win over the file
    done = run(env, "callers", "clamp", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"]
    assert not lock_is_held(repo / ".codesearch" / "daemon.lock")


def test_an_auto_started_daemon_stops_when_idle(fresh, runtime):
    repo, daemon = fresh
    env = auto_env(runtime, CODESEARCH_DAEMON_IDLE_MINUTES="0.05",  # 3 seconds
                   CODESEARCH_MODEL=str(repo / "no-such-model"))  # nothing to embed for long
    assert run(env, "index", str(repo), "--no-vectors", "-q", cwd=repo).returncode == 0
    done = run(env, "callers", "clamp", "--json", cwd=repo)  # an index, no daemon: one is started
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"]
    pid = daemon.pid
    assert wait_for(lambda: pid_gone(pid), timeout=60, what="the idle daemon to stop")
    assert "idle for" in daemon.log_file.read_text()
    assert not list(runtime.glob("*.json"))


def test_daemon_list_forgets_dead_and_unreadable_entries(runtime, tmp_path):
    dead_index = tmp_path / "gone" / ".codesearch"
    dead_index.mkdir(parents=True)
    (runtime / "0123456789abcdef.json").write_text(json.dumps(
        {"root": str(dead_index.parent), "index_dir": str(dead_index), "pid": 999999, "started": time.time(),
         "auto": True, "idle_minutes": 60}))
    (runtime / "fedcba9876543210.json").write_text("{not json")
    env = auto_env(runtime)
    done = run(env, "daemon", "list", "--json", cwd=tmp_path)
    assert done.returncode == 0 and json.loads(done.stdout) == {"daemons": []}
    assert not list(runtime.glob("*.json"))
    human = run(env, "daemon", "list", cwd=tmp_path)
    assert human.stdout.strip() == "no codesearch daemon is running"


def test_the_suite_starts_no_daemon_by_itself():
    """The guard every other test relies on (conftest.py)."""
    assert os.environ["CODESEARCH_AUTO_DAEMON"] == "0"
    assert Path(os.environ["CODESEARCH_RUNTIME_DIR"]).is_dir()
    assert REPO_ROOT.is_dir()
