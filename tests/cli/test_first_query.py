"""The first query in a repository without an index: answered at once from ripgrep (partial, with
a note), while the daemon it starts builds the index; later queries answer from the index. Real
processes, a real daemon, on copies of sample_repos/python."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from daemon_helpers import Daemon, _env, copy_sample, new_base, pid_gone, wait_for

from codesearch.locations import CATALOG_FILE

QUESTION = "retry delay with exponential backoff"


@pytest.fixture
def fresh(request, tmp_path) -> tuple[Path, Daemon, dict[str, str]]:
    """A copy without an index, the daemon a query may start on it (stopped when the test ends),
    and an environment in which queries start daemons, registered in the test's own folder."""
    repo = copy_sample(new_base() / "repo")
    daemon = Daemon(repo)
    request.addfinalizer(daemon.cleanup)
    env = {**_env(), "CODESEARCH_AUTO_DAEMON": "1", "CODESEARCH_RUNTIME_DIR": str(tmp_path)}
    return repo, daemon, env


def run(env: dict[str, str], *args: str, cwd: Path, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, "-m", "codesearch.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=180)


def finished_once(repo: Path) -> bool:
    with sqlite3.connect(f"file:{repo / '.codesearch' / CATALOG_FILE}?mode=ro", uri=True) as db:
        return db.execute("SELECT 1 FROM meta WHERE key = 'last_index_time'").fetchone() is not None


def first_answer(env: dict[str, str], repo: Path) -> dict:
    done = run(env, "query", QUESTION, "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["results"][0]["name"] == "compute_backoff"
    assert {name for r in answer["results"] for name in r["sources"]} == {"grep"}
    assert answer["partial"] is True and answer["note"].startswith("no index yet; ")
    assert "builds the index" in answer["note"] and len(answer["note"].splitlines()) == 1
    assert "has no index yet" in done.stderr and "Traceback" not in done.stderr
    return answer


def test_the_first_answer_does_not_wait_for_the_index(fresh):
    repo, daemon, env = fresh
    # the daemon the first query starts dies where its first index run would finish: the first
    # answer came without a finished index (the query that built one itself died there too)
    first_answer({**env, "CODESEARCH_FAULT": "index.finishing"}, repo)
    pid = wait_for(daemon.read_pid, timeout=60, what="the daemon's pid")
    wait_for(lambda: pid_gone(pid), timeout=120, what="the daemon to reach the end of its first index run")
    assert not finished_once(repo)

    # a service over an index whose first run never finished answers from ripgrep too, and says so
    here = run(env, "query", "clamp", "--json", "--no-daemon", cwd=repo)
    assert here.returncode == 0, here.stderr
    partial = json.loads(here.stdout)
    assert partial["results"][0]["name"] == "clamp" and set(partial["results"][0]["sources"]) == {"grep"}
    assert partial["partial"] is True and "first time" in partial["note"]

    assert run(env, "index", str(repo), "--no-vectors", "-q", cwd=repo).returncode == 0
    indexed = json.loads(run(env, "query", "clamp", "--json", "--no-daemon", "--mode", "keyword", cwd=repo).stdout)
    assert indexed["results"][0]["name"] == "clamp" and set(indexed["results"][0]["sources"]) == {"keyword"}


def test_later_queries_answer_from_the_index_the_daemon_built(fresh):
    repo, daemon, env = fresh
    first_answer(env, repo)
    wait_for(lambda: daemon.sock.exists() and finished_once(repo), timeout=120, what="the daemon's first index")
    later = run(env, "query", "clamp", "--json", "--mode", "keyword", cwd=repo)
    assert later.returncode == 0, later.stderr
    answer = json.loads(later.stdout)
    assert answer["results"][0]["name"] == "clamp" and set(answer["results"][0]["sources"]) == {"keyword"}
    assert daemon.status()["files"] >= 4  # through the daemon the first query started


def test_nothing_matched_is_an_empty_answer(fresh):
    repo, _, env = fresh
    done = run(env, "query", "zqxwvy nothingmatcheshere", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["results"] == [] and answer["partial"] is True
    human = run(env, "query", "zqxwvy nothingmatcheshere", cwd=repo)
    assert human.returncode == 0, human.stderr
    assert "Traceback" not in human.stderr


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None, reason="root reads any folder")
def test_an_unreadable_repository_is_one_line(fresh):
    repo, _, env = fresh
    # root reads any folder; without the capabilities that let it, it reads as any user does
    prefix = ("setpriv", "--bounding-set=-dac_override,-dac_read_search") if os.geteuid() == 0 else ()
    repo.chmod(0)
    try:
        done = run(env, "query", QUESTION, "--repo", str(repo), cwd=repo.parent, prefix=prefix)
    finally:
        repo.chmod(0o755)
    assert done.returncode == 1, done.stdout
    assert len(done.stderr.strip().splitlines()) == 1 and "permission denied" in done.stderr
    assert not (repo / ".codesearch" / "daemon.pid").exists()
