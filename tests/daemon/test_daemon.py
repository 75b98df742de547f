"""End-to-end tests of the codesearch daemon: a real process, a real Unix socket, real files.

Every daemon here is started with `codesearch daemon start` on a private copy of
sample_repos/python (or a generated tree) and stopped in a finalizer: `daemon stop`, then
SIGKILL by pid if it is still alive. Requests go through a small raw-socket JSON-RPC client
defined below, or through the CLI run as a subprocess.

To keep the suite fast, most daemons start from a "seed" index built once per session with
`codesearch index` (so the writer has no vectors to compute and stops promptly); the module's
main daemon is shared by every test that does not need a daemon of its own.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from daemon_helpers import (  # noqa: F401 - fixtures are used by name
    BURST_FILES,
    FRESH_TIMEOUT,
    MAX_BURST_BATCHES,
    MAX_FAST_BURST_BATCHES,
    PARTIAL_FILES,
    REPO_ROOT,
    SAMPLE,
    THREAD_SLACK,
    Conn,
    Daemon,
    _env,
    assert_error,
    assert_result,
    cli,
    cmdline,
    copy_sample,
    d,
    letters,
    new_base,
    pid_alive,
    pid_gone,
    seed_repo,
    seeded_tree,
    shared,
    start_daemon,
    thread_count,
    uniq,
    wait_for,
    write,
)

from codesearch.daemon.watcher import FEW_BATCHES, FEW_PATHS

# --------------------------------------------------------------------------------------------
# 1. lifecycle
# --------------------------------------------------------------------------------------------

def test_start_is_ready_secure_and_reported(d):
    health = d.call("health")
    assert health["ok"] is True and health["ready"] is True
    assert health["pid"] == d.pid
    assert Path(health["root"]) == d.root
    assert pid_alive(d.pid) and d.ours(d.pid)

    mode = os.stat(d.sock).st_mode
    assert stat.S_ISSOCK(mode)
    assert stat.S_IMODE(mode) == 0o600, oct(stat.S_IMODE(mode))

    proc = cli("daemon", "status", str(d.root), "--json")
    assert proc.returncode == 0, proc.stderr
    status = json.loads(proc.stdout)
    assert status["running"] is True
    assert status["pid"] == d.pid
    assert isinstance(status["uptime_seconds"], (int, float)) and status["uptime_seconds"] >= 0
    assert isinstance(status["files"], int) and status["files"] >= 3
    assert isinstance(status["chunks"], int) and status["chunks"] > status["files"]
    assert isinstance(status["pending_changes"], int) and status["pending_changes"] >= 0
    last = status["last_reindex"]
    assert isinstance(last, dict) and last["at"] > 0 and last["seconds"] >= 0

    # a second start reports the running daemon instead of starting another one
    again = cli("daemon", "start", str(d.root))
    assert again.returncode == 0, again.stderr
    assert "already running" in again.stdout and f"pid {d.pid}" in again.stdout, again.stdout
    assert d.read_pid() == d.pid
    assert d.call("health")["pid"] == d.pid
    others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != d.pid
              and pid_alive(int(p)) and d.ours(int(p))]
    assert others == [], f"a second daemon serves the same tree: {others}"

    # an idle daemon stays idle: its own writes (index, log) do not trigger reindexing
    count = d.status()["reindex_count"]
    time.sleep(1.5)
    assert d.status()["reindex_count"] == count


def test_every_method_answers(d):
    found = d.search("parse_config")["results"]
    assert found and found[0]["path"] == "config.py" and found[0]["name"] == "parse_config"
    for key in ("path", "start_line", "end_line", "kind", "name", "language", "score", "sources", "snippet"):
        assert key in found[0]
    callers = d.call("callers", {"name": "parse_config"})
    assert any(r["name"] == "main" and r["path"] == "inventory.py" for r in callers["results"]), callers
    callees = d.call("callees", {"name": "compute_backoff"})
    assert any(r["name"] == "clamp" for r in callees["results"]), callees
    stats = d.call("stats")
    for key in ("files", "chunks", "vectors", "edges"):
        assert isinstance(stats[key], int)
    assert isinstance(stats["skipped"], dict)
    status = d.status()
    assert status["pid"] == d.pid and status["ready"] is True
    reply = d.call("index", {"paths": ["config.py"], "timeout": 60})
    assert reply["ok"] is True


def test_stop_removes_files_and_next_start_cleans_up_after_a_crash(request, seeded_tree):
    daemon = start_daemon(request, seeded_tree, stop_timeout=20)
    first = daemon.pid
    assert daemon.sock.exists() and daemon.pid_file.exists()

    proc = daemon.stop()
    assert proc is not None and proc.returncode == 0, proc and proc.stderr
    assert "stopped" in proc.stdout
    wait_for(lambda: pid_gone(first), timeout=15, what="the stopped daemon to exit")
    assert not daemon.sock.exists(), "daemon stop left the socket behind"
    assert not daemon.pid_file.exists(), "daemon stop left the pid file behind"
    status = json.loads(cli("daemon", "status", str(daemon.root), "--json").stdout)
    assert status == {"running": False}

    # SIGTERM is a clean stop too
    daemon.start()
    termed = daemon.pid
    os.kill(termed, signal.SIGTERM)
    wait_for(lambda: pid_gone(termed), timeout=30, what="the daemon to exit on SIGTERM")
    assert not daemon.sock.exists() and not daemon.pid_file.exists()

    # a crash leaves the socket and the pid file behind ...
    daemon.start()
    crashed = daemon.pid
    assert crashed != first
    daemon.kill()
    assert daemon.sock.exists() and daemon.pid_file.exists()
    assert daemon.read_pid() == crashed
    with pytest.raises(ConnectionRefusedError):
        Conn(daemon.sock, timeout=5)

    # ... and the next start notices, cleans up and serves again
    proc = daemon.start()
    assert "started" in proc.stdout and "already running" not in proc.stdout, proc.stdout
    fresh = daemon.pid
    assert fresh != crashed and pid_alive(fresh)
    health = daemon.call("health")
    assert health["ready"] is True and health["pid"] == fresh
    assert stat.S_IMODE(os.stat(daemon.sock).st_mode) == 0o600
    assert "config.py" in daemon.paths("parse_config")

    # `daemon status` after a crash says so, instead of hanging or failing
    daemon.kill()
    proc = cli("daemon", "status", str(daemon.root), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"running": False}


# --------------------------------------------------------------------------------------------
# 2. freshness through the socket
# --------------------------------------------------------------------------------------------

def test_edit_adds_a_function(d):
    name = uniq()
    path = d.root / "config.py"
    original = path.read_text()
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"\n\ndef {name}(value):\n    \"\"\"Freshly added.\"\"\"\n    return value\n")
        hit = wait_for(lambda: [r for r in d.search(name)["results"] if r["name"] == name],
                       what=f"{name} to become searchable")
        assert hit[0]["path"] == "config.py" and hit[0]["kind"] == "function"
        # the rest of the file is still there, at its usual place
        assert "config.py" in d.paths("parse_config")
    finally:
        path.write_text(original)
    wait_for(lambda: not d.search(name)["results"], what=f"{name} to disappear after the revert")


def test_new_file_is_found(d):
    name = uniq()
    write(d.root / f"new_{name}.py", f"def {name}():\n    return 1\n")
    wait_for(lambda: f"new_{name}.py" in d.paths(name), what="the new file")


def test_deleted_file_disappears(d):
    name = uniq()
    rel = f"doomed_{name}.py"
    write(d.root / rel, f"def {name}():\n    return 1\n")
    wait_for(lambda: rel in d.paths(name), what="the file to be indexed")
    (d.root / rel).unlink()
    wait_for(lambda: not d.search(name)["results"], what="the deleted file's chunks to go")


def test_renamed_file_shows_its_new_path_only(d):
    name = uniq()
    old, new = f"before_{name}.py", f"after_{name}.py"
    write(d.root / old, f"def {name}():\n    return 1\n")
    wait_for(lambda: old in d.paths(name), what="the file to be indexed")
    os.rename(d.root / old, d.root / new)
    wait_for(lambda: d.paths(name) == {new}, what=f"only {new} in the results")


def test_new_directory_with_files(d):
    name = uniq()
    folder = d.root / f"pkg_{name}" / "sub"
    folder.mkdir(parents=True)
    expected = set()
    for i in range(5):
        rel = f"pkg_{name}/sub/m{i}.py"
        write(d.root / rel, f"def {name}_{letters(i)}():\n    return '{name}'\n")
        expected.add(rel)
    write(d.root / f"pkg_{name}" / "top.py", f"X = '{name}'\n")
    expected.add(f"pkg_{name}/top.py")
    wait_for(lambda: d.paths(name, files=True) == expected, what="every file of the new folder")


def test_deleted_directory_disappears(d):
    name = uniq()
    for i in range(4):
        write(d.root / f"gone_{name}" / "inner" / f"m{i}.py", f"def f{letters(i)}():\n    return '{name}'\n")
    wait_for(lambda: len(d.paths(name, files=True)) == 4, what="the folder to be indexed")
    shutil.rmtree(d.root / f"gone_{name}")
    wait_for(lambda: not d.search(name)["results"], what="the deleted folder's chunks to go")


def test_moved_directory_shows_new_paths_only(d):
    name = uniq()
    for i in range(3):
        write(d.root / f"src_{name}" / "deep" / f"m{i}.py", f"def g{letters(i)}():\n    return '{name}'\n")
    old = {f"src_{name}/deep/m{i}.py" for i in range(3)}
    wait_for(lambda: d.paths(name, files=True) == old, what="the folder to be indexed")
    (d.root / "lib").mkdir(exist_ok=True)
    os.rename(d.root / f"src_{name}", d.root / "lib" / f"dst_{name}")
    new = {f"lib/dst_{name}/deep/m{i}.py" for i in range(3)}
    wait_for(lambda: d.paths(name, files=True) == new, what="the moved folder under its new paths only")


def test_editor_save_by_rename(d):
    first, second = uniq(), uniq()
    rel = f"edited_{uniq('')}.py"  # the path must not contain the tokens searched for
    target = d.root / rel
    write(target, f"def {first}():\n    return 1\n")
    wait_for(lambda: rel in d.paths(first), what="the file to be indexed")
    for temp_name in (f".{rel}.swp", f"{rel}.tmp.py"):  # a hidden temp file, and an indexable one
        temp = d.root / temp_name
        temp.write_text(f"def {second}():\n    return 2\n", encoding="utf-8")
        os.replace(temp, target)
        wait_for(lambda first=first, second=second: d.paths(second) == {rel} and not d.search(first)["results"],
                 what="the replaced content at the target path")
        wait_for(d.idle, what="the daemon to settle")
        assert d.paths(second) == {rel}, "the editor's temporary file shows up in the results"
        first, second = second, uniq()


def test_file_created_and_deleted_within_the_debounce_leaves_nothing(d):
    ghost, sentinel = uniq(), uniq()
    before = d.status()["files"]
    path = d.root / f"ghost_{ghost}.py"
    path.write_text(f"def {ghost}():\n    return 0\n", encoding="utf-8")
    path.unlink()
    # a later file: once it is searchable, the ghost's batch has been handled too
    write(d.root / f"sentinel_{sentinel}.py", f"def {sentinel}():\n    return 1\n")
    wait_for(lambda: d.search(sentinel)["results"], what="the sentinel file")
    wait_for(d.idle, what="the daemon to settle")
    assert not d.search(ghost)["results"]
    assert d.status()["files"] == before + 1


def test_gitignore_edit_drops_the_ignored_file(d):
    name = uniq()
    rel = f"secret_{name}.py"
    write(d.root / rel, f"def {name}():\n    return 1\n")
    wait_for(lambda: rel in d.paths(name), what="the file to be indexed")
    gitignore = d.root / ".gitignore"
    original = gitignore.read_text()
    try:
        gitignore.write_text(original + f"{rel}\n")
        wait_for(lambda: not d.search(name)["results"], what="the newly ignored file to disappear")
        (d.root / rel).unlink()
    finally:
        gitignore.write_text(original)
    wait_for(d.idle, what="the daemon to settle")
    assert "config.py" in d.paths("parse_config"), "un-ignoring lost other files"

    # and the other way round: un-ignoring build/ brings its file in, ignoring it again drops it
    assert not d.search("generated_function")["results"]
    try:
        gitignore.write_text(original.replace("build/\n", ""))
        wait_for(lambda: d.paths("generated_function") == {"build/generated.py"}, what="the un-ignored file")
    finally:
        gitignore.write_text(original)
    wait_for(lambda: not d.search("generated_function")["results"], what="the re-ignored file to go")


def test_pending_changes_are_marked_stale(d):
    """A result from a file whose change is not applied yet carries "stale": true, and only until
    the change is applied. A single save leaves at once (too soon to catch), so the edit here
    comes inside a burst: more files than an isolated change touches, written just before it,
    hold every change of the episode back for the quiet period (500 ms)."""
    token = uniq()
    rel = f"stale_{token}.py"
    write(d.root / rel, f"def {token}():\n    return 0\n")
    wait_for(lambda: rel in d.paths(token), what="the file to be indexed")
    wait_for(d.idle, what="the daemon to settle")
    assert not any(r.get("stale") for r in d.search(token)["results"])
    folder = d.root / f"stale_burst_{token}"
    caught = False
    try:
        for attempt in range(3):
            extra = uniq()
            for i in range(FEW_PATHS + 2):
                write(folder / f"f{attempt}_{i}.py", f"X{i} = {attempt}\n")
            write(d.root / rel, f"def {token}():\n    return {attempt}\n\n\ndef {extra}():\n    return 1\n")
            deadline = time.monotonic() + 0.4  # inside the quiet period that the burst waits for
            while time.monotonic() < deadline and not caught:
                caught = any(r["path"] == rel and r.get("stale") is True for r in d.search(token)["results"])
                time.sleep(0.01)
            wait_for(lambda extra=extra: d.search(extra)["results"], what="the edit to be applied")
            wait_for(d.idle, what="the daemon to settle")
            assert not any(r.get("stale") for r in d.search(token)["results"]), "stale outlived the reindex"
            if caught:
                break
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        (d.root / rel).unlink()
    assert caught, "no result of a file with a pending change was marked stale"


# --------------------------------------------------------------------------------------------
# 6. concurrency
# --------------------------------------------------------------------------------------------

def test_concurrent_searches_while_files_change(d):
    stop = threading.Event()
    errors: list[str] = []
    replies: list[dict] = []
    lock = threading.Lock()
    edited = d.root / f"churn_{uniq()}.py"

    def editor():
        i = 0
        while not stop.is_set():
            try:
                edited.write_text(f"def churn{letters(i)}():\n    return {i}\n", encoding="utf-8")
                other = d.root / f"flicker_{i % 3}.py"
                if other.exists():
                    other.unlink()
                else:
                    other.write_text(f"def flicker{letters(i)}():\n    return {i}\n", encoding="utf-8")
            except OSError as exc:
                errors.append(f"editor: {exc}")
            i += 1
            time.sleep(0.02)

    queries = [("parse_config", "keyword"), ("total value of items", "keyword"), ("compute_backoff", "graph"),
               ("who calls clamp", "graph"), ("churn", "keyword"), ("retry delay", "hybrid")]

    def searcher(worker: int):
        try:
            conn = Conn(d.sock, timeout=120) if worker % 2 else None  # half keep one connection
            for n in range(10):
                query, mode = queries[(worker + n) % len(queries)]
                request_id = worker * 100 + n
                if conn:
                    reply = conn.request("search", {"query": query, "mode": mode, "limit": 5}, request_id)
                else:
                    with Conn(d.sock, timeout=120) as one:
                        reply = one.request("search", {"query": query, "mode": mode, "limit": 5}, request_id)
                with lock:
                    replies.append(reply)
                result = assert_result(reply, request_id)
                assert isinstance(result["results"], list)
                for r in result["results"]:
                    assert isinstance(r["path"], str) and isinstance(r["start_line"], int)
            if conn:
                conn.close()
        except Exception as exc:
            errors.append(f"worker {worker}: {exc!r}")

    edit_thread = threading.Thread(target=editor)
    edit_thread.start()
    workers = [threading.Thread(target=searcher, args=(w,)) for w in range(8)]
    try:
        for t in workers:
            t.start()
        for t in workers:
            t.join(timeout=240)
    finally:
        stop.set()
        edit_thread.join()
        for path in [edited, *(d.root / f"flicker_{i}.py" for i in range(3))]:
            path.unlink(missing_ok=True)
    assert not any(t.is_alive() for t in workers), "a search never returned"
    assert not errors, errors
    assert len(replies) == 80
    wait_for(lambda: not d.search("churn flicker")["results"], what="the churn files to go")
    assert d.call("health")["ok"] is True


def test_a_burst_of_clients_is_accepted(d):
    conns: list[Conn] = []
    refused = 0
    try:
        for _ in range(50):
            try:
                conns.append(Conn(d.sock, timeout=10, blocking_connect=False))
            except BlockingIOError:
                refused += 1
        for i, conn in enumerate(conns):
            assert assert_result(conn.request("health", request_id=i), i)["ok"] is True
    finally:
        for conn in conns:
            conn.close()
    assert refused == 0, f"{refused} of 50 clients connecting at once were refused (EAGAIN)"


# --------------------------------------------------------------------------------------------
# 7. malformed requests
# --------------------------------------------------------------------------------------------

P, R, M, IP = -32700, -32600, -32601, -32602

MALFORMED = [
    ("invalid json", b"{not json\n", (P,), None),
    ("invalid utf-8", b"\xff\xfe\xfd\n", (P,), None),
    ("truncated json", b'{"jsonrpc": "2.0", "id": 1, "method": "health"\n', (P,), None),
    ("json array", b'[{"jsonrpc": "2.0", "id": 1, "method": "health"}]\n', (R,), None),
    ("empty array", b"[]\n", (R,), None),
    ("json string", b'"health"\n', (R,), None),
    ("json number", b"42\n", (R,), None),
    ("json null", b"null\n", (R,), None),
    ("missing method", b'{"jsonrpc": "2.0", "id": 7}\n', (R,), 7),
    ("method not a string", b'{"jsonrpc": "2.0", "id": 8, "method": 5}\n', (R,), 8),
    ("wrong version", b'{"jsonrpc": "1.0", "id": 9, "method": "health"}\n', (R,), 9),
    ("missing version", b'{"id": 10, "method": "health"}\n', (R,), 10),
    ("unknown method", b'{"jsonrpc": "2.0", "id": 11, "method": "frobnicate"}\n', (M,), 11),
    ("search params a list", b'{"jsonrpc": "2.0", "id": 12, "method": "search", "params": ["x"]}\n', (IP, R), 12),
    ("search params a string", b'{"jsonrpc": "2.0", "id": 13, "method": "search", "params": "x"}\n', (IP, R), 13),
    ("callers without name", b'{"jsonrpc": "2.0", "id": 14, "method": "callers", "params": {}}\n', (IP, R), 14),
    ("callees without name", b'{"jsonrpc": "2.0", "id": 15, "method": "callees", "params": {"depth": 1}}\n',
     (IP, R), 15),
    ("search without query", b'{"jsonrpc": "2.0", "id": 16, "method": "search", "params": {}}\n', (IP, R), 16),
    ("search limit not a number",
     b'{"jsonrpc": "2.0", "id": 17, "method": "search", "params": {"query": "x", "limit": "ten"}}\n', (IP, R), 17),
    ("search unknown mode",
     b'{"jsonrpc": "2.0", "id": 18, "method": "search", "params": {"query": "x", "mode": "psychic"}}\n', (IP, R), 18),
    ("search unknown filter",
     b'{"jsonrpc": "2.0", "id": 19, "method": "search", "params": {"query": "x", "filters": {"colour": 1}}}\n',
     (IP, R), 19),
    ("search filters a string",
     b'{"jsonrpc": "2.0", "id": 20, "method": "search", "params": {"query": "x", "filters": "py"}}\n', (IP, R), 20),
    ("index paths not a list",
     b'{"jsonrpc": "2.0", "id": 21, "method": "index", "params": {"paths": "config.py"}}\n', (IP, R), 21),
]


@pytest.mark.parametrize("payload,codes,request_id", [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_request_gets_the_right_error(d, payload, codes, request_id):
    with Conn(d.sock, timeout=30) as conn:
        conn.send_raw(payload)
        assert_error(conn.recv(), codes, request_id)
        # the same connection still works ...
        assert assert_result(conn.request("health", request_id=99), 99)["ok"] is True
    # ... and so does a new one
    assert d.call("health")["ok"] is True


def test_notifications_get_no_answer_and_requests_keep_their_order(d):
    with Conn(d.sock) as conn:
        conn.send_raw(b'{"jsonrpc": "2.0", "method": "health"}\n\n')  # a notification, then a blank line
        conn.send_raw(b'{"jsonrpc": "2.0", "id": "a", "method": "health"}\n'
                      b'{"jsonrpc": "2.0", "id": "b", "method": "search", "params": {"query": "clamp"}}\n')
        assert assert_result(conn.recv(), "a")["ok"] is True
        assert assert_result(conn.recv(), "b")["results"]


def _oversized(terminated: bool) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "search",
                       "params": {"query": "x" * ((1 << 20) + 4096)}}).encode()
    return body + (b"\n" if terminated else b"")


@pytest.mark.parametrize("terminated", [True, False], ids=["with-newline", "without-newline"])
def test_oversized_message_is_refused(d, terminated):
    conn = Conn(d.sock, timeout=30)
    try:
        sent = threading.Thread(target=lambda: _send_ignoring_errors(conn, _oversized(terminated)))
        sent.start()
        reply = conn.recv()
        sent.join(timeout=30)
        if reply is not None:  # an error is fine, and so is a closed connection
            assert "result" not in reply, "an oversized message was executed"
            assert reply["error"]["code"] in (R, P, IP), reply
            assert conn.recv() is None, "the connection must be closed after an unframeable message"
    finally:
        conn.close()
    assert d.call("health")["ok"] is True


def _send_ignoring_errors(conn: Conn, data: bytes) -> None:
    try:
        conn.send_raw(data)
    except OSError:
        pass  # the daemon may close the connection before reading everything


def test_abandoned_connections_do_not_hurt_or_leak_threads(d):
    # the model and its thread pools are loaded by a first hybrid query, so they do not count
    d.search("warm up the model", mode="hybrid", timeout=240)
    wait_for(d.idle, what="the daemon to settle")
    before = d.threads()
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "search",
                          "params": {"query": "inventory", "mode": "keyword"}}).encode()
    for i in range(60):
        # connect and go away without a word
        with Conn(d.sock, timeout=10):
            pass
        # half a line, then close
        with Conn(d.sock, timeout=10) as conn:
            conn.send_raw(request[: len(request) // 2])
        # a whole request, then close before the answer
        with Conn(d.sock, timeout=10) as conn:
            conn.send_raw(request + b"\n")
        # garbage of every kind, then close
        with Conn(d.sock, timeout=10) as conn:
            conn.send_raw(MALFORMED[i % len(MALFORMED)][1])
    assert d.call("health")["ok"] is True
    after = wait_for(lambda: (lambda n: n if n <= before + THREAD_SLACK else 0)(d.threads()), timeout=15,
                     what=f"the thread count to fall back near {before}")
    assert after <= before + THREAD_SLACK

    # idle open connections hold a thread each, and give it back when they close
    conns = [Conn(d.sock, timeout=10) for _ in range(20)]
    try:
        assert assert_result(conns[-1].request("health"))["ok"] is True
        assert d.threads() >= before + 10
    finally:
        for c in conns:
            c.close()
    wait_for(lambda: d.threads() <= before + THREAD_SLACK, timeout=15, what="threads of closed connections to end")
    assert d.search("parse_config")["results"]


# --------------------------------------------------------------------------------------------
# 8. the CLI through the daemon
# --------------------------------------------------------------------------------------------

def _top(proc: subprocess.CompletedProcess) -> list[tuple]:
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    answer = json.loads(proc.stdout)
    return [(r["path"], r["start_line"], r["end_line"], r["name"]) for r in answer["results"]]


CLI_QUERIES = [
    ("parse_config", ("--mode", "keyword")),
    ("retry delay with exponential backoff", ("--mode", "keyword")),
    ("inventory", ("--mode", "keyword", "--files")),
    ("value", ("--mode", "keyword", "--kind", "method", "--limit", "3")),
    ("who calls clamp", ("--mode", "graph")),
]


def test_cli_query_through_the_daemon_matches_in_process(d):
    for text, options in CLI_QUERIES:
        via_daemon = _top(cli("query", text, "--json", "--repo", str(d.root), *options))
        in_process = _top(cli("query", text, "--json", "--repo", str(d.root), "--no-daemon", *options))
        assert via_daemon, f"no results for {text!r}"
        assert via_daemon[0] == in_process[0], (text, via_daemon[:3], in_process[:3])
        assert via_daemon == in_process, (text, via_daemon, in_process)


def test_cli_hybrid_query_through_the_daemon_matches_in_process(d):
    """Default (hybrid) mode: once every chunk has a vector, both answers agree."""
    wait_for(lambda: d.status()["embedding"]["chunks_without_vectors"] == 0, timeout=120,
             what="every chunk to have a vector")
    text = "where is the retry delay computed"
    via_daemon = _top(cli("query", text, "--json", "--repo", str(d.root)))
    in_process = _top(cli("query", text, "--json", "--repo", str(d.root), "--no-daemon", timeout=300))
    assert via_daemon and via_daemon[0] == in_process[0], (via_daemon[:3], in_process[:3])
    assert via_daemon[0][3] in ("compute_backoff", "Retry Policy"), via_daemon[:3]


def test_cli_grep_json_through_the_daemon_is_the_daemons_answer_as_written(d):
    """--json passes the daemon's result on as the daemon wrote it: the same answer as in process,
    and grep's exit codes."""
    def answer(*options: str) -> tuple[int, dict]:
        done = cli("grep", "-w", "clamp", "--json", "--repo", str(d.root), *options)
        data = json.loads(done.stdout)
        data.pop("timing_ms")
        return done.returncode, data
    assert answer() == answer("--no-daemon") and answer()[1]["matches"][0]["path"] == "config.py"
    nothing = cli("grep", "zzz_nothing_zzz", "--json", "--repo", str(d.root))
    assert nothing.returncode == 1 and json.loads(nothing.stdout)["total"] == 0
    from codesearch.daemon.client import RESULT_OPENING, _exchange, call_json
    assert _exchange(d.sock, "grep", {"pattern": "clamp"}, 30).startswith(RESULT_OPENING)  # the text is cut out
    assert json.loads(call_json(d.sock, "stats"))["files"] > 0


GREP_TEXT_CASES = {  # `grep ARGS` without --json: the fast path's answers, and the ways out of it
    "grouped": ("-w", "clamp"),
    "grouped, context, explain": ("def", "-C", "1", "--explain"),
    "grouped, more than the limit": ("e", "--limit", "3"),
    "vimgrep, any case": ("--vimgrep", "-i", "RETRY"),
    "files": ("-l", "e"),
    "counts": ("-c", "-F", "("),
    "both: files": ("-l", "-c", "def"),
    "file order, a path": ("--count", "--sort", "path", "e", "config.py"),
    "word, any case, a glob": ("--files-with-matches", "-w", "-i", "RETRY", "--path", "*.py"),
    "nothing matches": ("-l", "zq_nothing_matches_this"),
    "invalid regex": ("(",),
    "a path outside": ("-c", "x", "../"),
    "language (the full path)": ("-l", "def", "--lang", "python"),
}


@pytest.mark.parametrize("args", list(GREP_TEXT_CASES.values()), ids=list(GREP_TEXT_CASES))
def test_cli_grep_text_fast_path_answers_as_the_full_path_does(d, args):
    """Same exit code, stdout and stderr, whichever path answers."""
    argv = ["grep", *args, "--repo", str(d.root)]
    fast, full = cli(*argv), _full_path(*argv)
    assert (fast.returncode, fast.stdout, fast.stderr) == (full.returncode, full.stdout, full.stderr)
    assert "Traceback" not in fast.stderr
    assert fast.stdout or fast.returncode != 0


def test_cli_grep_files_and_counts_through_the_daemon_are_the_whole_answers(d):
    """-l and -c through the daemon ask for one match: the files and counts of the whole answer."""
    whole = json.loads(cli("grep", "--json", "--limit", "100000", "e", "--repo", str(d.root)).stdout)
    assert len(whole["files"]) > 1
    assert cli("grep", "-l", "e", "--repo", str(d.root)).stdout.splitlines() == [f["path"] for f in whole["files"]]
    assert cli("grep", "-c", "e", "--repo", str(d.root)).stdout.splitlines() == [
        f"{f['path']}:{f['count']}" for f in whole["files"]]


def _identity(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _holds_any(pid: int, passed: set[tuple[int, int]]) -> list[str]:
    """The daemon's descriptors that are one of the files or pipes passed to it: counting its
    descriptors instead would also count the ones its threads open for themselves."""
    held = []
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            st = os.stat(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in passed:
            held.append(name)
    return held


def test_cli_grep_json_is_written_by_the_daemon_into_the_clis_stdout(d, tmp_path):
    """The CLI passes its stdout to the daemon, which writes the answer there itself: the same
    bytes into a file as into a pipe, a reader that leaves early ends the CLI quietly, and the
    daemon keeps none of the descriptors it was passed."""
    argv = [sys.executable, "-m", "codesearch.cli", "grep", "def", "--json", "--repo", str(d.root)]
    piped = cli(*argv[3:])
    assert piped.returncode == 0, piped.stderr
    passed: set[tuple[int, int]] = set()
    into = tmp_path / "answer.json"
    with into.open("wb") as out:
        passed.add(_identity(out.fileno()))
        out.write(b"kept: ")  # the daemon writes at the descriptor's offset, after this
        out.flush()
        done = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, env=_env(), cwd=REPO_ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    text = into.read_text()
    assert text.startswith("kept: {") and text.endswith("}\n")
    assert _without_timing(text.removeprefix("kept: ")) == _without_timing(piped.stdout)
    # a reader that takes 10 bytes and goes: no error, no traceback, and the daemon serves on
    head = subprocess.run(f"{shlex.join(argv)} | head -c 10", shell=True, capture_output=True, env=_env(),
                          cwd=REPO_ROOT, timeout=120)
    assert head.stdout == piped.stdout.encode()[:10] and b"Traceback" not in head.stderr, head.stderr
    # a reader gone before the first byte, on the fast path and the full one (--lang leaves the
    # fast path): quiet and a success, as ripgrep, and not answered again in this process as if no daemon were there
    for extra in ((), ("--lang", "python")):
        read_end, write_end = os.pipe()
        passed.add(_identity(write_end))
        os.close(read_end)
        try:
            gone = subprocess.run([*argv, *extra], stdout=write_end, stderr=subprocess.PIPE, env=_env(),
                                  cwd=REPO_ROOT, timeout=120)
        finally:
            os.close(write_end)
        assert (gone.returncode, gone.stderr) == (0, b""), (extra, gone.stderr)
    assert cli(*argv[3:]).stdout.count('"path"') == piped.stdout.count('"path"')
    assert wait_for(lambda: not _holds_any(d.pid, passed), timeout=10), _holds_any(d.pid, passed)


def test_a_descriptor_is_written_into_only_when_asked_and_is_never_kept(d):
    """Over the raw socket: `into_fd` with a descriptor writes the result there and replies how
    much; a descriptor without `into_fd`, or `into_fd` without one, gets the usual reply; the
    daemon closes every descriptor passed to it."""
    import socket as socket_module
    passed: set[tuple[int, int]] = set()  # the pipes; /dev/null is the daemon's own stdin too

    def ask(message: dict, fd: int | None) -> dict:
        with socket_module.socket(socket_module.AF_UNIX, socket_module.SOCK_STREAM) as sock:
            sock.settimeout(60)
            sock.connect(str(d.sock))
            line = json.dumps(message).encode() + b"\n"
            if fd is None:
                sock.sendall(line)
            else:
                sent = socket_module.send_fds(sock, [line], [fd])
                sock.sendall(line[sent:])
            data = b""
            while not data.endswith(b"\n"):
                piece = sock.recv(1 << 16)
                assert piece, "the daemon hung up"
                data += piece
        return json.loads(data)

    read_end, write_end = os.pipe()
    passed.add(_identity(write_end))
    try:
        reply = ask({"jsonrpc": "2.0", "id": 7, "method": "stats", "into_fd": 4}, write_end)
        os.close(write_end)
        written = b""
        while piece := os.read(read_end, 1 << 16):
            written += piece
    finally:
        os.close(read_end)
    assert reply["id"] == 7 and reply["result"]["written"] == len(written) > 0
    assert reply["result"]["start"] == written[:4].decode("latin-1") and json.loads(written)["files"] > 0
    with open(os.devnull, "wb") as sink:
        plain = ask({"jsonrpc": "2.0", "id": 8, "method": "stats"}, sink.fileno())
    assert plain["result"]["files"] > 0  # passed but not asked for: the usual reply
    assert ask({"jsonrpc": "2.0", "id": 9, "method": "stats", "into_fd": 4}, None)["result"]["files"] > 0
    with open(os.devnull, "wb") as sink:
        refused = ask({"jsonrpc": "2.0", "id": 10, "method": "grep", "params": {"pattern": "("}, "into_fd": 4},
                      sink.fileno())
    assert refused["error"]["code"] == -32602  # an error is a reply, written nowhere else
    # a descriptor made non-blocking by its owner, in a pipe of one page, read slowly: all of it comes
    read_end, write_end = os.pipe()
    passed.add(_identity(write_end))
    os.set_blocking(write_end, False)
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    chunks: list[bytes] = []

    def drain() -> None:
        time.sleep(0.5)  # the daemon meets a full pipe first
        while piece := os.read(read_end, 1024):
            chunks.append(piece)
    reader = threading.Thread(target=drain)
    reader.start()
    try:
        reply = ask({"jsonrpc": "2.0", "id": 11, "method": "grep", "params": {"pattern": "e"}, "into_fd": 4},
                    write_end)
    finally:
        os.close(write_end)
        reader.join(30)
        os.close(read_end)
    assert "error" not in reply["result"] and reply["result"]["written"] == len(b"".join(chunks)) > 4096
    assert json.loads(b"".join(chunks))["total"] > 0
    assert wait_for(lambda: not _holds_any(d.pid, passed), timeout=10), _holds_any(d.pid, passed)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_a_result_is_passed_on_as_it_comes_in_any_pieces(monkeypatch, size):
    import io

    from codesearch.daemon import client
    def pieces(data: bytes):
        return iter([data[i:i + size] for i in range(0, len(data), size)])

    result = b'{"pattern": "x", "matches": [], "note": "}\\n"}'
    reply = client.RESULT_OPENING + result + b"}\n"
    out = io.BytesIO()
    assert client._pass_on(pieces(reply), out, 5) == result[:5]
    assert out.getvalue() == result
    error = b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "invalid params: no"}}\n'
    with pytest.raises(client.DaemonError, match="invalid params"):
        client._pass_on(pieces(error), out := io.BytesIO(), 5)
    assert out.getvalue() == b""  # nothing written before the error is known
    cut = reply[:-1]  # the daemon went away before the reply's end
    with pytest.raises(client.AnswerBrokeOff, match="broke off"):
        client._pass_on(iter([cut]), io.BytesIO(), 5)
    # written by the daemon into the descriptor passed to it: the reply says how that went
    written = client.WRITTEN_OPENING + b'100, "start": "{\\u00e9"}}\n'
    assert client._pass_on(pieces(written), out := io.BytesIO(), 2) == "{\u00e9".encode("latin-1")
    assert out.getvalue() == b""
    gone = client.WRITTEN_OPENING + b'7, "start": "{", "error": "Broken pipe", "errno": 32}}\n'
    with pytest.raises(BrokenPipeError):
        client._pass_on(pieces(gone), io.BytesIO(), 2)
    full = client.WRITTEN_OPENING + b'7, "start": "{", "error": "No space left on device", "errno": 28}}\n'
    with pytest.raises(client.AnswerBrokeOff, match="No space left"):
        client._pass_on(pieces(full), io.BytesIO(), 2)


def test_cli_query_no_daemon_honours_repo(d):
    """Regression: `query --repo PATH --no-daemon` once opened the index of the current directory
    (cli._open_index took query's --path GLOB option for the repository)."""
    elsewhere = new_base()
    try:
        proc = cli("query", "parse_config", "--json", "--repo", str(d.root), "--no-daemon", "--mode", "keyword",
                   cwd=elsewhere)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["results"][0]["path"] == "config.py"
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)


@pytest.mark.parametrize("command", ["query", "grep"])
def test_cli_query_through_the_daemon_imports_no_heavy_modules(d, command):
    """The fast path of query and grep: no record classes, not even dataclasses, typing or
    pathlib; and not the full command line, which answers everything else."""
    elsewhere = new_base()  # not the repository: only the daemon can answer from here
    try:
        proc = cli(command, "compute_backoff", "--repo", str(d.root), "--json", cwd=elsewhere,
                   python_flags=("-X", "importtime"))
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = json.loads(proc.stdout)
    if command == "query":
        assert answer["results"] and answer["results"][0]["name"] == "compute_backoff"
    else:
        assert answer["matches"] and answer["matches"][0]["chunk"]["name"] == "compute_backoff"
    modules = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
               if line.startswith("import time:") and "|" in line} - {"package"}
    assert "codesearch.cli.quick" in modules, "no -X importtime output to check"
    assert "codesearch.daemon.client_surface" in modules, "the fast path imports what a client may import"
    heavy = {name.split(".")[0] for name in modules} & {"torch", "chromadb", "networkx", "watchdog"}
    assert not heavy, f"the daemon client imported {sorted(heavy)}"
    # what a client may import (daemon.client_surface) loads no index, model or watcher code
    engine = {name for name in modules if name.startswith(("codesearch.indexing", "codesearch.store",
                                                           "codesearch.embedding", "codesearch.search",
                                                           "codesearch.daemon.watcher", "codesearch.api"))}
    assert not engine, f"the fast path imported {sorted(engine)}"
    slow = modules & {"codesearch.cli.commands", "codesearch.wire", "codesearch.search.requests", "dataclasses",
                      "typing", "pathlib"}
    assert not slow, f"the fast path imported {sorted(slow)}"


def _full_path(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`codesearch ARGS` without the fast path: what `codesearch.cli.commands.main` alone does."""
    code = "import sys; from codesearch.cli.commands import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=str(cwd or REPO_ROOT), env=_env(),
                          capture_output=True, text=True, timeout=120)


def _without_timing(stdout: str) -> list:
    lines = [json.loads(line) for line in stdout.splitlines()]
    for line in lines:
        line.pop("timing_ms", None)
    return lines


FAST_PATH_CASES = {  # `query ARGS --json`: the fast path's answers, and the ways out of it
    "keyword": ("parse_config", "--mode", "keyword", "--repo", "{root}"),
    "hybrid, files": ("inventory value", "--files", "--limit", "3", "--repo", "{root}"),
    "explain, context, path": ("retry", "--explain", "-C", "2", "--path", "*.py", "--mode", "keyword",
                               "--repo", "{root}"),
    "kind, max tokens": ("value", "--kind", "method", "--max-tokens", "80", "--mode", "keyword", "--repo", "{root}"),
    "words after options": ("--mode", "keyword", "--repo", "{root}", "parse", "config"),
    "language (the full path)": ("clamp", "--lang", "python", "--mode", "keyword", "--repo", "{root}"),
    "unknown language": ("x", "--lang", "cobol", "--repo", "{root}"),
    "unknown kind": ("x", "--kind", "gizmo", "--repo", "{root}"),
    "empty": (" ", "--repo", "{root}"),
    "limit out of range": ("x", "--limit", "0", "--repo", "{root}"),
    "limit not a number": ("x", "--limit", "many", "--repo", "{root}"),
    "unknown mode": ("x", "--mode", "psychic", "--repo", "{root}"),
    "unknown option": ("x", "--frobnicate", "--repo", "{root}"),
    "no such folder": ("x", "--repo", "/no/such/folder"),
    "batch without a repository": ("--batch", "/no/such/file"),
    "no daemon wanted": ("parse_config", "--mode", "keyword", "--no-daemon", "--repo", "{root}"),
}


@pytest.mark.parametrize("args", list(FAST_PATH_CASES.values()), ids=list(FAST_PATH_CASES))
def test_cli_query_json_fast_path_answers_as_the_full_path_does(d, args):
    """Same exit code, same stdout (JSON, errors included) and same stderr, whichever path answers."""
    argv = ["query", *(a.replace("{root}", str(d.root)) for a in args), "--json"]
    wait_for(lambda: d.status()["embedding"]["chunks_without_vectors"] == 0, timeout=120,
             what="every chunk to have a vector (a hybrid answer changes while they are made)")
    fast, full = cli(*argv), _full_path(*argv)
    assert fast.returncode == full.returncode, (fast.stderr, full.stderr)
    assert _without_timing(fast.stdout) == _without_timing(full.stdout)
    assert fast.stderr == full.stderr
    assert "Traceback" not in fast.stderr
    if fast.returncode == 0:
        assert _without_timing(fast.stdout)[0]["results"] or "cobol" in args


GREP_FAST_PATH_CASES = {  # `grep ARGS --json`: the fast path's answers, and the ways out of it
    "literal": ("compute_backoff", "--repo", "{root}"),
    "word, any case, context": ("RETRY", "-w", "-i", "-C", "1", "--repo", "{root}"),
    "fixed, a path, file order": ("(", "-F", "config.py", "--sort", "path", "--repo", "{root}"),
    "glob, explain, before": ("def", "--path", "*.py", "--explain", "-B", "2", "--repo", "{root}"),
    "nothing matches": ("zq_nothing_matches_this", "--repo", "{root}"),
    "invalid regex": ("(", "--repo", "{root}"),
    "a path outside": ("x", "../", "--repo", "{root}"),
    "limit out of range": ("x", "--limit", "0", "--repo", "{root}"),
    "language (the full path)": ("def", "--lang", "python", "--repo", "{root}"),
    "no daemon wanted": ("def", "--no-daemon", "--repo", "{root}"),
}


@pytest.mark.parametrize("args", list(GREP_FAST_PATH_CASES.values()), ids=list(GREP_FAST_PATH_CASES))
def test_cli_grep_json_fast_path_answers_as_the_full_path_does(d, args):
    """Same exit code (grep's), same stdout and same stderr, whichever path answers."""
    argv = ["grep", *(a.replace("{root}", str(d.root)) for a in args), "--json"]
    fast, full = cli(*argv), _full_path(*argv)
    assert fast.returncode == full.returncode, (fast.stderr, full.stderr)
    assert _without_timing(fast.stdout) == _without_timing(full.stdout)
    assert fast.stderr == full.stderr
    assert "Traceback" not in fast.stderr
    answer = _without_timing(fast.stdout)[0]
    assert fast.returncode == (0 if answer.get("matches") else 1 if "matches" in answer else 2)


def test_cli_query_json_in_a_subfolder_finds_the_repositorys_daemon(d):
    """No --repo: the enclosing repository (the nearest folder up with an index), as the full path finds it."""
    fast = cli("query", "parse_config", "--mode", "keyword", "--json", cwd=d.root / "tests")
    assert fast.returncode == 0, fast.stderr
    assert _without_timing(fast.stdout) == _without_timing(_full_path("query", "parse_config", "--mode", "keyword",
                                                                      "--json", cwd=d.root / "tests").stdout)
    assert json.loads(fast.stdout)["results"][0]["path"] == "config.py"


def test_cli_output_to_a_closed_pipe_ends_quietly(d):
    """`codesearch query ... | head -c 1`: no traceback when the reader leaves early."""
    command = [sys.executable, "-m", "codesearch.cli", "query", "inventory", "--repo", str(d.root), "--json",
               "--limit", "50"]
    for extra in ((), ("--lang", "python")):  # the fast path, and the full one
        done = subprocess.run(" ".join(map(shlex.quote, [*command, *extra])) + " | head -c 1",
                              shell=True, cwd=str(REPO_ROOT), env=_env(), capture_output=True, text=True,
                              timeout=120)
        assert "Traceback" not in done.stderr, done.stderr


def proc_text(path: Path) -> str:
    """A /proc file's text, or "" when its thread or process ended since it was listed."""
    try:
        return path.read_text()
    except (FileNotFoundError, ProcessLookupError):
        return ""


def test_a_daemon_with_the_default_embedder_never_loads_torch(d):
    """The default backend runs the model without torch: after indexing, embedding and answering a
    hybrid query, no torch library is mapped into the daemon (importing torch would map it); its
    background batches ran in a child process of its own (embedding/worker.py)."""
    d.search("retry delay with exponential backoff", mode="hybrid")
    wait_for(lambda: d.status()["embedded_share"] == 1.0, timeout=120, what="every vector")
    # a search's share of embedded chunks is counted at most once a second: the first one's may stand
    wait_for(lambda: not d.search("retry delay with exponential backoff", mode="hybrid").get("partial"),
             timeout=10, what="a complete answer")
    answer = d.search("retry delay with exponential backoff", mode="hybrid")
    assert answer["results"] and not answer.get("partial")
    with open(f"/proc/{d.pid}/maps") as fh:
        mapped = fh.read()
    assert "libtorch" not in mapped and "/torch/" not in mapped
    assert "openvino" in mapped or "onnxruntime" in mapped  # the model did load, without torch
    # new text is embedded by a child process of the daemon (it exits after 60 s idle), the
    # daemon's own model embeds only queries
    added = d.root / "embedded_by_the_child.py"
    write(added, 'def tidal_rhythm(moon):\n    """How the moon sets the rhythm of the tides."""\n'
                 '    return moon.phase * 2\n')
    try:
        wait_for(lambda: d.search("tidal_rhythm", mode="keyword")["results"]  # indexed, and then
                 and d.status()["embedding"]["chunks_without_vectors"] == 0, timeout=120, what="the new file embedded")
        children = [pid for task in Path(f"/proc/{d.pid}/task").iterdir()
                    for pid in proc_text(task / "children").split()]
        with_model = [pid for pid in children if any(lib in proc_text(Path(f"/proc/{pid}/maps"))
                                                     for lib in ("openvino", "onnxruntime"))]
        assert len(with_model) == 1, children
    finally:
        added.unlink()
        wait_for(lambda: not d.search("tidal_rhythm", mode="keyword")["results"], what="the file gone")


# --------------------------------------------------------------------------------------------
# 3. a burst of files
# --------------------------------------------------------------------------------------------

def test_burst_of_1000_files_is_batched(d):
    tag = uniq("zb")
    folder = d.root / f"burst_{tag}"
    before = d.status()
    started = time.monotonic()
    folder.mkdir()
    expected = set()
    for i in range(BURST_FILES):
        rel = f"burst_{tag}/f{i:04d}.py"
        (d.root / rel).write_text(f"def {tag}{letters(i)}():\n    return '{tag}mark'\n", encoding="utf-8")
        expected.add(rel)
    written = time.monotonic() - started
    try:
        wait_for(lambda: d.status()["files"] >= before["files"] + BURST_FILES, timeout=60, interval=0.2,
                 what=f"{BURST_FILES} files to be indexed")
        elapsed = time.monotonic() - started
        found = d.paths(f"{tag}mark", files=True, limit=BURST_FILES)  # the API caps limit at 1,000
        assert found == expected, f"{len(expected - found)} files not searchable, e.g. {sorted(expected - found)[:3]}"
        for i in (0, 1, 499, 998, 999):
            assert d.paths(f"{tag}{letters(i)}") == {f"burst_{tag}/f{i:04d}.py"}
        wait_for(d.idle, what="the daemon to settle")
        batches = d.status()["reindex_count"] - before["reindex_count"]
        assert 1 <= batches <= MAX_FAST_BURST_BATCHES, (
            f"{BURST_FILES} files written in {written:.2f}s were applied in {batches} batches "
            f"(searchable after {elapsed:.1f}s)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    wait_for(lambda: d.status()["files"] == before["files"], timeout=60, interval=0.2,
             what="the burst folder to be dropped")
    assert not d.search(f"{tag}mark")["results"]


def test_a_save_is_applied_at_once_and_a_burst_after_the_quiet_period(request, seeded_tree):
    """Leading edge: with a quiet period of 6 s, a single save (of either kind an editor makes)
    is searchable long before it; a burst of files waits for the quiet period and is applied
    in one batch, after at most FEW_BATCHES that left before the episode counted as a burst
    (one, usually; more when the writing process is held up between files for longer than a
    save's settling, as on a loaded machine: CI once saw 3)."""
    (seeded_tree / ".codesearch.toml").write_text("debounce_ms = 6000\n")
    daemon = start_daemon(request, seeded_tree)
    wait_for(daemon.idle, what="the daemon to settle")
    for save in ("write", "atomic"):
        name = uniq()
        target = daemon.root / f"saved_{name}.py"
        started = time.monotonic()
        if save == "write":
            write(target, f"def {name}():\n    return 1\n")
        else:  # a temporary file renamed over the original
            temp = daemon.root / f".saved_{name}.py.tmp"
            temp.write_text(f"def {name}():\n    return 2\n", encoding="utf-8")
            os.replace(temp, target)
        wait_for(lambda name=name: daemon.search(name)["results"], timeout=4.5, interval=0.02,
                 what=f"a single save ({save}) to be searchable before the 6-s quiet period")
        assert time.monotonic() - started < 6
    tag = uniq("zb")
    before = daemon.status()["reindex_count"]
    started = time.monotonic()
    for i in range(40):
        write(daemon.root / f"burst_{tag}" / f"f{i:02d}.py", f"def {tag}{letters(i)}():\n    return {i}\n")
    last = f"burst_{tag}/f39.py"
    wait_for(lambda: last in daemon.paths(f"{tag}{letters(39)}"), timeout=30, interval=0.2,
             what="the burst to be applied")
    assert time.monotonic() - started >= 5.5, "the burst did not wait for the quiet period"
    wait_for(daemon.idle, what="the daemon to settle")
    status = daemon.status()
    batches = status["reindex_count"] - before
    assert 1 <= batches <= FEW_BATCHES + 1, f"40 files written at once cost {batches} batches"
    assert status["last_reindex"]["paths"] >= 40 - FEW_PATHS, "the burst did not leave whole"


def test_a_two_second_burst_is_applied_in_a_few_batches(d):
    """1000 files written over about two seconds (a checkout, a code generator, a slow disk).

    The files are of a type the index skips: the writer then has nothing to embed between batches,
    so the count measures the debouncer alone and does not depend on how fast the model is."""
    folder = d.root / f"paced_{uniq()}"
    before = d.status()
    skipped_before = before["skipped"].get("unsupported_type", 0)
    folder.mkdir()
    started = time.monotonic()
    try:
        for group in range(100):
            for k in range(10):
                (folder / f"f{group:03d}_{k}.dat").write_bytes(b"data\n")
            time.sleep(max(0.0, started + (group + 1) * 0.02 - time.monotonic()))
        written = time.monotonic() - started
        wait_for(lambda: d.status()["skipped"].get("unsupported_type", 0) >= skipped_before + BURST_FILES,
                 timeout=60, interval=0.2, what=f"{BURST_FILES} files to be recorded")
        wait_for(d.idle, what="the daemon to settle")
        batches = d.status()["reindex_count"] - before["reindex_count"]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        wait_for(lambda: d.status()["skipped"].get("unsupported_type", 0) == skipped_before, timeout=60,
                 interval=0.2, what="the paced folder to be dropped")
    assert batches <= MAX_BURST_BATCHES, f"{BURST_FILES} files written over {written:.1f}s cost {batches} batches"


# --------------------------------------------------------------------------------------------
# 5. kill -9, changes while down, restart
# --------------------------------------------------------------------------------------------

def test_restart_after_kill_reconciles_changes_made_while_down(request, seeded_tree):
    daemon = start_daemon(request, seeded_tree, stop_timeout=15)
    assert "config.py" in daemon.paths("parse_config")
    dead = daemon.kill()

    added_fn, new_fn = uniq(), uniq()
    with open(seeded_tree / "config.py", "a", encoding="utf-8") as fh:
        fh.write(f"\n\ndef {added_fn}():\n    return 1\n")
    (seeded_tree / "tests" / "test_inventory.py").unlink()
    os.rename(seeded_tree / "inventory.py", seeded_tree / "stock.py")
    write(seeded_tree / "fresh" / f"new_{new_fn}.py", f"def {new_fn}():\n    return 2\n")

    daemon.start()
    assert daemon.pid != dead
    assert daemon.call("health")["ready"] is True
    # the start-up reconcile happens before "ready": no waiting needed
    assert daemon.paths(added_fn) == {"config.py"}
    assert daemon.paths(new_fn) == {f"fresh/new_{new_fn}.py"}
    backoff = daemon.paths("compute_backoff")
    assert "stock.py" in backoff and "inventory.py" not in backoff
    assert not any(p.startswith("tests/") for p in daemon.paths("Tests for the inventory sample project"))
    last = daemon.status()["last_reindex"]
    assert last["modified"] >= 1 and last["added"] >= 2 and last["deleted"] >= 2, last
    assert daemon.status()["files"] == 4  # config, stock, fresh/new_*, and README (skipped)


# --------------------------------------------------------------------------------------------
# responsiveness while the model loads
# --------------------------------------------------------------------------------------------

def test_keyword_search_is_not_blocked_by_a_hybrid_query_waiting_for_the_model(request, seeded_tree):
    daemon = start_daemon(request, seeded_tree, stop_timeout=10)  # the model is not loaded yet

    def hybrid():
        try:
            daemon.search("retry delay", mode="hybrid", timeout=240)
        except Exception:
            pass

    threading.Thread(target=hybrid, daemon=True).start()
    time.sleep(0.3)
    for what, ask in (("a keyword search", lambda: daemon.search("parse_config", timeout=2.5)),
                      ("status", lambda: daemon.call("status", timeout=2.5))):
        t = time.monotonic()
        try:
            ask()
        except TimeoutError:
            pytest.fail(f"{what} waited more than 2.5s behind a hybrid query waiting for the model")
        assert time.monotonic() - t < 2.5


def test_changes_are_applied_while_the_model_loads(request, seeded_tree):
    # code added while no daemon ran: the start-up reconcile leaves 100+ chunks to embed, so the
    # writer turns to the (not yet loaded) model as soon as the daemon is ready. The torch backend:
    # it takes seconds to load (the default loads in a fraction of one, too short a window to test)
    (seeded_tree / ".codesearch.toml").write_text('embedder = "sentence-transformers"\n')
    write(seeded_tree / "many.py", "".join(f'def many{letters(i)}():\n    """The {i}th of many."""\n'
                                           f'    return {i}\n\n\n' for i in range(100)))
    daemon = start_daemon(request, seeded_tree, stop_timeout=5)
    backlog = daemon.status()["embedding"]["chunks_without_vectors"]
    assert backlog >= 100
    # torch is imported and the model is loading: by now the writer (which only had to open
    # Chroma) is inside its first slice, waiting for the model
    wait_for(lambda: "Loading SentenceTransformer" in daemon.log_file.read_text(), timeout=120, interval=0.05,
             what="the model to start loading")
    name = uniq()
    write(seeded_tree / f"b_{name}.py", f"def {name}():\n    return 2\n")
    t = time.monotonic()
    wait_for(lambda: daemon.paths(name), timeout=120, what="the change")
    seconds = time.monotonic() - t
    left = daemon.status()["embedding"]["chunks_without_vectors"]
    # applied at once, it would find the backlog untouched (plus the 2 chunks of the new file)
    assert left >= backlog, (f"the change became searchable only after {seconds:.1f}s, once the writer had "
                             f"loaded the model and embedded {backlog + 2 - left} chunks")


# --------------------------------------------------------------------------------------------
# 4. partial answers while embedding
# --------------------------------------------------------------------------------------------

def test_partial_answers_while_embedding(request):
    base = new_base()
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    repo = base / "repo"
    for i in range(PARTIAL_FILES):
        write(repo / "pkg" / f"g{i // 100}" / f"mod_{i:03d}.py",
              f"def compute_value_{i}(x):\n    \"\"\"Compute a value for item {i}.\"\"\"\n    return x * {i} + 1\n\n\n"
              f"def render_item_{i}(item):\n    \"\"\"Render item {i} as text.\"\"\"\n"
              f"    return 'item-{i}:' + str(compute_value_{i}(item))\n")
    daemon = start_daemon(request, repo, stop_timeout=20)

    first = daemon.search("compute_value_7", mode="hybrid", limit=10, timeout=240)
    assert first.get("partial") is True, {k: v for k, v in first.items() if k != "results"}
    assert 0 <= first["embedded_share"] < 1
    names = [r["name"] for r in first["results"]]
    assert "compute_value_7" in names, names
    assert any(r["sources"].get("keyword") for r in first["results"])
    assert daemon.status()["embedding"]["chunks_without_vectors"] > 0

    shares = [first["embedded_share"]]

    def complete():
        answer = daemon.search("compute_value_7", mode="hybrid", limit=10, timeout=240)
        if answer.get("partial"):
            shares.append(answer["embedded_share"])
            assert 0 <= answer["embedded_share"] < 1
            return None
        return answer

    done = wait_for(complete, timeout=300, interval=0.5, what="embedding to finish")
    assert "embedded_share" not in done or done["embedded_share"] == 1
    assert shares == sorted(shares), f"embedded_share went backwards: {shares}"
    assert "compute_value_7" in [r["name"] for r in done["results"]]
    assert any(r["sources"].get("vector") for r in done["results"]), "no vector hits after embedding"
    assert daemon.status()["embedding"]["chunks_without_vectors"] == 0
