"""The daemon as an attacker or an unlucky user meets it: pid files that lie, starts that race or
fail, signals at awkward moments, hostile JSON, too many clients, paths that leave the root."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from daemon_helpers import (  # noqa: F401 - fixtures are used by name
    REPO_ROOT,
    Conn,
    Daemon,
    _env,
    assert_error,
    assert_result,
    cli,
    d,
    pid_alive,
    pid_gone,
    seed_repo,
    seeded_tree,
    shared,
    start_daemon,
    wait_for,
    write,
)

from codesearch.daemon.lifecycle import lock_is_held

P, R, IP, BUSY = -32700, -32600, -32602, -32001


def daemon_processes(root: Path) -> list[int]:
    """Pids of processes serving `root` as a codesearch daemon."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"codesearch.transports.daemon_process" in args and os.fsencode(str(root)) in args \
                    and pid_alive(int(entry.name)):
                found.append(int(entry.name))
    return found


@pytest.fixture
def bystander():
    """A live process that is not a codesearch daemon (its pid ends up in a stale pid file)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    yield proc
    proc.kill()
    proc.wait()


def test_a_pid_file_naming_another_process_is_not_trusted(request, seeded_tree, bystander):
    daemon = Daemon(seeded_tree)
    request.addfinalizer(daemon.cleanup)
    daemon.pid_file.write_text(str(bystander.pid))  # left behind, and the pid since reused

    status = cli("daemon", "status", str(seeded_tree), "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout) == {"running": False}
    stop = cli("daemon", "stop", str(seeded_tree), "--json")
    assert stop.returncode == 0 and json.loads(stop.stdout)["stopped"] is False
    assert bystander.poll() is None, "daemon stop signalled a process that is not a daemon"

    start = cli("daemon", "start", str(seeded_tree), "--json", timeout=300)
    assert start.returncode == 0, start.stderr
    started = json.loads(start.stdout)
    assert started["started"] is True and started["pid"] != bystander.pid
    daemon.pids.add(started["pid"])
    assert daemon.call("health")["pid"] == started["pid"]
    stopped = cli("daemon", "stop", str(seeded_tree), "--json")
    assert json.loads(stopped.stdout) == {"stopped": True, "root": str(seeded_tree)}
    assert bystander.poll() is None
    assert not daemon.pid_file.exists() and not daemon.sock.exists()


def test_two_simultaneous_starts_give_one_daemon(request, seeded_tree):
    daemon = Daemon(seeded_tree)
    request.addfinalizer(daemon.cleanup)
    command = [sys.executable, "-m", "codesearch.cli", "daemon", "start", str(seeded_tree), "--json"]
    starts = [subprocess.Popen(command, cwd=REPO_ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True) for _ in range(3)]
    answers = [json.loads(p.communicate(timeout=300)[0]) for p in starts]
    assert all(p.returncode == 0 for p in starts)
    assert sorted(a["started"] for a in answers) == [False, False, True]
    assert len({a["pid"] for a in answers}) == 1
    daemon.pids.add(answers[0]["pid"])
    assert daemon_processes(seeded_tree) == [answers[0]["pid"]]
    assert daemon.call("health")["ok"] is True


def test_a_failed_start_leaves_nothing_behind(request, seeded_tree):
    daemon = Daemon(seeded_tree)
    request.addfinalizer(daemon.cleanup)
    (seeded_tree / ".codesearch.toml").write_text("no_such_setting = 1\n")
    start = cli("daemon", "start", str(seeded_tree), "--timeout", "60", timeout=120)
    assert start.returncode == 2  # a bad setting is bad usage, told before a daemon is started
    lines = start.stderr.strip().splitlines()
    assert len(lines) == 1 and "no_such_setting" in lines[0] and "Traceback" not in start.stderr
    assert not daemon.pid_file.exists() and not daemon.sock.exists()
    assert not lock_is_held(daemon.dir / "daemon.lock")
    assert not daemon_processes(seeded_tree)
    (seeded_tree / ".codesearch.toml").unlink()  # and the next start works
    daemon.start()
    assert daemon.call("health")["ready"] is True


def test_sigterm_while_the_model_loads_is_a_clean_exit_and_run_logs_to_stderr(seeded_tree):
    # code the seed's index lacks: the daemon then loads the model at once to embed it
    for i in range(20):
        write(seeded_tree / f"extra_{i}.py", f"def extra_function_{i}(x):\n    return x * {i}\n")
    proc = subprocess.Popen([sys.executable, "-m", "codesearch.cli", "daemon", "run", str(seeded_tree)],
                            cwd=REPO_ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    daemon = Daemon(seeded_tree)
    try:
        wait_for(lambda: daemon.sock.exists() and daemon.call("health", timeout=5)["ready"], timeout=120,
                 what="the daemon to be ready")
        assert daemon.call("status")["model_ready"] is False  # the model is still loading
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert "serving" in err and "shutting down" in err  # the log went to the terminal
    assert not daemon.pid_file.exists() and not daemon.sock.exists()
    assert pid_gone(proc.pid)


def test_a_second_foreground_daemon_defers_to_the_first(request, seeded_tree):
    daemon = start_daemon(request, seeded_tree)
    proc = cli("daemon", "run", str(seeded_tree), timeout=60)
    assert proc.returncode == 0
    assert "already serves" in proc.stderr
    assert daemon_processes(seeded_tree) == [daemon.pid]


# --- hostile requests and too many clients ---------------------------------------------------

HOSTILE = [
    ("a 5,000-digit number", b'{"jsonrpc": "2.0", "id": 1, "method": "search", "params": {"query": "x", "limit": '
     + b"9" * 5000 + b"}}\n", (P,), None),
    ("nested 40 deep", b'{"jsonrpc": "2.0", "id": 2, "method": "search", "params": {"query": "x", "filters": '
     + b'{"a": ' * 40 + b"1" + b"}" * 40 + b"}}\n", (R,), 2),
    ("nested 100,000 deep", b"[" * 100_000 + b"]" * 100_000 + b"\n", (P, R), None),
    ("limit -5", b'{"jsonrpc": "2.0", "id": 4, "method": "search", "params": {"query": "x", "limit": -5}}\n', (IP,), 4),
    ("limit 10^9", b'{"jsonrpc": "2.0", "id": 5, "method": "search", "params": {"query": "x", "limit": 1000000000}}\n',
     (IP,), 5),
    ("query null", b'{"jsonrpc": "2.0", "id": 6, "method": "search", "params": {"query": null}}\n', (IP,), 6),
    ("index outside", b'{"jsonrpc": "2.0", "id": 7, "method": "index", "params": {"paths": ["../outside.py"]}}\n',
     (IP,), 7),
    ("index absolute", b'{"jsonrpc": "2.0", "id": 8, "method": "index", "params": {"paths": ["/etc/passwd"]}}\n',
     (IP,), 8),
]


@pytest.mark.parametrize("payload, codes, request_id", [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_hostile_requests_get_an_error_reply(d, payload, codes, request_id):
    with Conn(d.sock, timeout=30) as conn:
        conn.send_raw(payload)
        error = assert_error(conn.recv(), codes, request_id)
        if request_id in (7, 8):
            assert "outside the repository" in error["message"]
        assert assert_result(conn.request("health", request_id=99), 99)["ok"] is True


def test_a_long_query_is_cut_and_flagged(d):
    answer = d.search("parse_config " + "word " * 20_000)
    assert answer["truncated"] is True


@pytest.mark.parametrize("query", ["_", "$", "_ $ _", "who calls _", "$$$"])
@pytest.mark.parametrize("mode", ["hybrid", "graph", "keyword"])
def test_punctuation_queries_answer(d, query, mode):
    assert isinstance(d.search(query, mode=mode, timeout=240)["results"], list)


def test_past_the_connection_cap_a_client_is_told_busy(d):
    from codesearch.transports.socket import MAX_CONNECTIONS
    held = []
    try:
        for i in range(MAX_CONNECTIONS):  # each answered once: each holds a connection thread
            held.append(Conn(d.sock, timeout=30))
            assert assert_result(held[-1].request("health", request_id=i), i)["ok"] is True
        extra = Conn(d.sock, timeout=30)
        held.append(extra)
        error = assert_error(extra.recv(), (BUSY,), None)
        assert error["data"]["retry_after_ms"] > 0
        busy = cli("query", "parse_config", "--repo", str(d.root), "--mode", "keyword", timeout=60)
        assert busy.returncode == 1 and "busy" in busy.stderr and "--no-daemon" in busy.stderr, (busy.stdout,
                                                                                                 busy.stderr)
        # the same with --json, which the CLI's fast path answers: the same sentence, and as JSON
        busy_json = cli("query", "parse_config", "--repo", str(d.root), "--mode", "keyword", "--json", timeout=60)
        assert busy_json.returncode == 1 and busy_json.stderr == busy.stderr, (busy_json.stdout, busy_json.stderr)
        assert json.loads(busy_json.stdout) == {"error": busy.stderr.strip().removeprefix("codesearch: "),
                                                "exit_code": 1}
    finally:
        for conn in held:
            conn.close()
    wait_for(lambda: d.call("health")["ok"], timeout=30, what="the daemon to take clients again")


def test_a_dead_daemons_socket_is_answered_in_process_with_a_note(request, seeded_tree):
    daemon = start_daemon(request, seeded_tree)
    daemon.kill()
    assert daemon.sock.exists()  # a kill -9 leaves the socket file behind
    proc = cli("query", "parse_config", "--repo", str(seeded_tree), "--mode", "keyword", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"]
    assert "answering in this process" in proc.stderr
    status = cli("daemon", "status", str(seeded_tree), "--json")
    assert json.loads(status.stdout) == {"running": False}
    assert not daemon.sock.exists()  # cleaned up by whoever found the lock free


def test_the_index_folder_is_private(d):
    assert (d.dir.stat().st_mode & 0o777) == 0o700
    assert (d.sock.stat().st_mode & 0o777) == 0o600
    assert ((d.dir / "catalog.sqlite3").stat().st_mode & 0o777) == 0o600


def test_a_fifo_is_recorded_as_skipped(d):
    fifo = d.root / f"pipe_{int(time.time() * 1000)}.py"
    os.mkfifo(fifo)
    try:
        wait_for(lambda: d.status()["skipped"].get("not_regular", 0) >= 1, what="the FIFO to be recorded")
    finally:
        fifo.unlink()
