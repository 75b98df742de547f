"""Daemons that do not pile up: an idle stop for every daemon a client starts (none for one started
by hand unless `--idle-stop` asks), a cap on on-demand daemons (the least recently used stops
first, one started by hand never), and dormancy: a quiet daemon becomes a small process that keeps
its socket and locks, answers health, status and shutdown itself, and wakes the daemon on any other
request, which then sees what changed while it slept. Real daemons, sockets, processes and files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from daemon_helpers import (
    REPO_ROOT,
    SUITE_SETTINGS,
    Conn,
    Daemon,
    assert_result,
    cmdline,
    pid_gone,
    seed_repo,  # noqa: F401 (a fixture)
    seeded_copy,
    uniq,
    wait_for,
    write,
)

from codesearch.daemon.lifecycle import lock_is_held

DORMANT_MB = 60  # the most a dormant daemon may hold (RSS)


@pytest.fixture
def runtime(tmp_path) -> Path:
    """A registry of daemons of the test's own."""
    return Path(tempfile.mkdtemp(prefix="csrt-", dir=tmp_path))


def env_of(runtime: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_") or k in SUITE_SETTINGS}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return {**env, "CODESEARCH_RUNTIME_DIR": str(runtime), **settings}


def run(env: dict[str, str], *args: str, cwd: Path = REPO_ROOT, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codesearch.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def listed(env: dict[str, str]) -> dict[str, dict]:
    """`daemon list --json`, by root."""
    return {d["root"]: d for d in json.loads(run(env, "daemon", "list", "--json").stdout)["daemons"]}


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


def is_dormant(pid: int) -> bool:
    return "codesearch.daemon.dormant" in cmdline(pid)


@pytest.fixture
def daemons(request):
    """Daemons started by the test, each stopped (or killed) when it ends."""
    started: list[Daemon] = []

    def make(root: Path) -> Daemon:
        daemon = Daemon(root)
        started.append(daemon)
        return daemon

    yield make
    for daemon in started:
        daemon.cleanup()


def start(env: dict[str, str], daemon: Daemon, *flags: str) -> int:
    done = run(env, "daemon", "start", str(daemon.root), *flags)
    assert done.returncode == 0, done.stderr + daemon.log()
    return daemon.pid


# --- the idle stop ------------------------------------------------------------------------------

def test_a_daemon_started_by_hand_has_no_idle_stop_unless_asked(request, seed_repo, daemons, runtime):
    env = env_of(runtime, CODESEARCH_DAEMON_IDLE_MINUTES="7", CODESEARCH_DAEMON_DORMANT_MINUTES="0")
    by_hand, asked, auto = (daemons(seeded_copy(request, seed_repo)) for _ in range(3))
    start(env, by_hand)
    pid = start(env, asked, "--idle-stop", "0.05")  # 3 seconds: it may be gone before the checks below
    start(env, auto, "--idle-stop", "auto")  # as a client's: the daemon_idle_minutes setting
    assert "idle_stop_minutes" not in by_hand.status()
    assert auto.status()["idle_stop_minutes"] == 7
    roster = listed(env)
    assert roster[str(by_hand.root)]["auto"] is False and roster[str(auto.root)]["auto"] is True
    assert pid and wait_for(lambda: pid_gone(pid), timeout=60, what="the daemon with --idle-stop to stop")
    assert lock_is_held(by_hand.dir / "daemon.lock") and not asked.sock.exists()
    never = run(env, "daemon", "stop", str(auto.root))
    assert never.returncode == 0
    start(env, auto, "--idle-stop", "never")
    assert "idle_stop_minutes" not in auto.status()


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "600000"])
def test_a_bad_idle_stop_is_one_line_and_exit_2(value, runtime, tmp_path):
    done = run(env_of(runtime), "daemon", "start", str(tmp_path), "--idle-stop", value)
    assert done.returncode == 2 and "--idle-stop" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_an_editor_session_starts_a_daemon_that_stops_when_idle(request, seed_repo, daemons, monkeypatch):
    """The LSP's and MCP's hold on a daemon (VS Code starts its daemons through `codesearch lsp`)."""
    from codesearch.daemon.session import DaemonSession
    monkeypatch.setenv("CODESEARCH_DAEMON_IDLE_MINUTES", "9")
    daemon = daemons(seeded_copy(request, seed_repo))
    session = DaemonSession(daemon.root, wait_seconds=240)
    assert session.call(lambda client: client.status()).idle_stop_minutes == 9


NVIM = shutil.which("nvim")


@pytest.mark.skipif(NVIM is None, reason="nvim is not installed (scripts/setup.sh installs it)")
def test_the_neovim_plugin_starts_a_daemon_that_stops_when_idle(request, seed_repo, daemons, runtime, tmp_path):
    daemon = daemons(seeded_copy(request, seed_repo))
    codesearch = tmp_path / "codesearch"
    codesearch.write_text(f"#!/bin/sh\nexec {sys.executable} -m codesearch.cli \"$@\"\n")
    codesearch.chmod(0o755)
    out = tmp_path / "out.json"
    script = tmp_path / "script.lua"
    script.write_text(textwrap.dedent(f"""
        local codesearch = require("codesearch")
        codesearch.setup({{ cmd = {str(codesearch)!r}, timeout_ms = 60000 }})
        vim.notify = function() end
        vim.cmd("edit config.py")
        vim.cmd("CodeSearch clamp")
        vim.wait(240000, function() return #vim.fn.getqflist() > 0 end, 50)
        local f = io.open({str(out)!r}, "w")
        f:write(vim.json.encode({{ items = #vim.fn.getqflist() }}))
        f:close()
        vim.cmd("qa!")
    """))
    env = env_of(runtime, CODESEARCH_DAEMON_IDLE_MINUTES="11")
    subprocess.run([NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n", "--cmd",
                    f"set rtp^={REPO_ROOT / 'editors' / 'nvim'}", "-c", "runtime plugin/codesearch.lua",
                    "-c", f"luafile {script}"], cwd=daemon.root, env=env, capture_output=True, timeout=300)
    assert json.loads(out.read_text())["items"] > 0
    assert daemon.status()["idle_stop_minutes"] == 11
    assert listed(env)[str(daemon.root)]["auto"] is True


# --- the cap --------------------------------------------------------------------------------------

def test_on_demand_daemons_are_capped_least_recently_used_first_never_one_started_by_hand(
        request, seed_repo, daemons, runtime):
    env = env_of(runtime, CODESEARCH_MAX_AUTO_DAEMONS="2", CODESEARCH_DAEMON_DORMANT_MINUTES="0")
    by_hand, first, second, third = (daemons(seeded_copy(request, seed_repo)) for _ in range(4))
    start(env, by_hand)
    start(env, first, "--idle-stop", "30")
    second_pid = start(env, second, "--idle-stop", "30")
    # `first` is asked something after `second` started: `second` is now the least recently used
    wait_for(lambda: listed(env)[str(second.root)]["last_request"] > 0, what="the registry's entry")
    first.search("clamp")
    wait_for(lambda: listed(env)[str(first.root)]["last_request"] > listed(env)[str(second.root)]["last_request"],
             timeout=30, what="the first daemon's request in the registry")
    start(env, third, "--idle-stop", "30")
    assert wait_for(lambda: pid_gone(second_pid), timeout=60, what="the least recently used daemon to stop")
    assert set(listed(env)) == {str(by_hand.root), str(first.root), str(third.root)}
    assert "least recently used" in third.log_file.read_text()


# --- dormancy -------------------------------------------------------------------------------------

@pytest.fixture
def dormant(request, seed_repo, daemons, runtime):
    """A daemon (stopped when idle 10 minutes) that goes dormant after about a second of quiet,
    once dormant; with the environment its commands run in."""
    env = env_of(runtime, CODESEARCH_DAEMON_DORMANT_MINUTES="0.02")
    daemon = daemons(seeded_copy(request, seed_repo))
    pid = start(env, daemon, "--idle-stop", "10")
    wait_for(lambda: is_dormant(pid), timeout=60, what="the daemon to go dormant")
    return daemon, env


def test_a_quiet_daemon_goes_dormant_small_and_still_running(dormant):
    daemon, env = dormant
    pid = daemon.pid
    assert rss_mb(pid) <= DORMANT_MB
    assert lock_is_held(daemon.dir / "daemon.lock") and daemon.sock.exists()
    health = daemon.call("health")
    assert health["dormant"] is True and health["ready"] is True and health["pid"] == pid
    status = json.loads(run(env, "daemon", "status", str(daemon.root), "--json").stdout)
    assert status["running"] is True and status["dormant"] is True and status["pid"] == pid
    assert status["files"] > 0 and status["idle_stop_minutes"] == 10
    assert "dormant" in run(env, "daemon", "status", str(daemon.root)).stdout
    assert listed(env)[str(daemon.root)]["dormant"] is True
    assert is_dormant(pid)  # answering health and status did not wake it
    # one writer per index: the dormant daemon still owns it
    refused = run(env, "index", str(daemon.root), "--no-daemon", "-q")
    assert refused.returncode != 0 and f"pid {pid}" in refused.stderr


def test_a_query_wakes_a_dormant_daemon_which_sees_what_changed_while_it_slept(dormant):
    daemon, env = dormant
    pid = daemon.pid
    name = uniq()
    write(daemon.root / "slept.py", f"def {name}(x):\n    return x\n")
    done = run(env, "query", name, "--json", "--mode", "keyword", "--repo", str(daemon.root))
    assert done.returncode == 0, done.stderr + daemon.log()
    assert [r["name"] for r in json.loads(done.stdout)["results"]][:1] == [name]
    assert daemon.pid == pid and not is_dormant(pid)  # the same process, the full daemon again
    assert "waking the daemon" in daemon.log_file.read_text()
    assert "dormant" not in daemon.status()
    # and it goes dormant again once quiet
    wait_for(lambda: is_dormant(pid), timeout=60, what="the daemon to go dormant again")
    assert listed(env)[str(daemon.root)]["dormant"] is True


def test_a_search_that_wakes_a_dormant_daemon_is_answered_with_vectors(dormant):
    daemon, env = dormant
    done = run(env, "query", "retry delay with exponential backoff", "--json", "--repo", str(daemon.root))
    assert done.returncode == 0, done.stderr + daemon.log()
    answer = json.loads(done.stdout)
    assert not answer.get("partial"), answer.get("note")
    assert any(r["sources"]["vector"] is not None for r in answer["results"])
    assert "compute_backoff" in [r["name"] for r in answer["results"]][:3]


def test_several_requests_on_one_connection_to_a_dormant_daemon(dormant):
    daemon, _ = dormant
    with Conn(daemon.sock) as conn:
        assert assert_result(conn.request("health"))["dormant"] is True
        assert assert_result(conn.request("status", request_id=2), 2)["dormant"] is True
        answer = assert_result(conn.request("search", {"query": "clamp", "mode": "keyword"}, request_id=3), 3)
    assert "clamp" in [r["name"] for r in answer["results"]]


def test_daemon_stop_stops_a_dormant_daemon(dormant):
    daemon, env = dormant
    pid = daemon.pid
    done = run(env, "daemon", "stop", str(daemon.root))
    assert done.returncode == 0 and "stopped" in done.stdout
    assert wait_for(lambda: pid_gone(pid), timeout=30, what="the dormant daemon to end")
    assert not lock_is_held(daemon.dir / "daemon.lock")
    assert not daemon.sock.exists() and not daemon.pid_file.exists()
    assert not (daemon.dir / "daemon.dormant.json").exists()
    assert listed(env) == {}


def test_a_dormant_daemon_stops_at_its_idle_stop(request, seed_repo, daemons, runtime):
    env = env_of(runtime, CODESEARCH_DAEMON_DORMANT_MINUTES="0.02")
    daemon = daemons(seeded_copy(request, seed_repo))
    pid = start(env, daemon, "--idle-stop", "0.15")  # 9 seconds
    wait_for(lambda: is_dormant(pid), timeout=60, what="the daemon to go dormant")
    assert wait_for(lambda: pid_gone(pid), timeout=60, what="the dormant daemon to stop when idle")
    assert "idle past the idle stop" in daemon.log_file.read_text()
    assert not daemon.sock.exists() and listed(env) == {}
