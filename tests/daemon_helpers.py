"""Helpers and fixtures of the daemon tests: processes, a raw JSON-RPC client, daemons on private
copies of sample_repos/python. Imported by the test modules of tests/daemon (not a conftest.py:
tests/ has one already)."""

from __future__ import annotations

import atexit
import functools
import json
import os
import random
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
# settings of the whole suite, kept when a test strips CODESEARCH_* from a child's environment: a
# query never starts a daemon that nobody asked for (tests that want one turn it on), and daemons
# register in the suite's own runtime folder, not the user's (both set in conftest.py)
SUITE_SETTINGS = ("CODESEARCH_AUTO_DAEMON", "CODESEARCH_RUNTIME_DIR")
SAMPLE = REPO_ROOT / "sample_repos" / "python"

FRESH_TIMEOUT = float(os.environ.get("CODESEARCH_TEST_FRESH_TIMEOUT", "10"))  # seconds per freshness check
# Files of the tree whose embedding the partial-answers test watches. 150 files (450 chunks) already
# take 15-30 s to embed on a 2-CPU laptop; set 400 for a longer window on a fast machine.
PARTIAL_FILES = int(os.environ.get("CODESEARCH_TEST_PARTIAL_FILES", "150"))
BURST_FILES = 1000
MAX_BURST_BATCHES = 10  # "a few batches": what a burst of changes should cost
# A burst written as fast as Python can still takes 0.3-2.5 s under load; with the current
# per-path debounce that already costs 3-85 batches (see test_a_two_second_burst_is_applied_in_a_few_batches),
# so the as-fast-as-possible test only insists that the files were not applied one by one.
MAX_FAST_BURST_BATCHES = 200
THREAD_SLACK = 4


# --------------------------------------------------------------------------------------------
# helpers: processes
# --------------------------------------------------------------------------------------------

def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_") or k in SUITE_SETTINGS}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    return env


def cli(*args: str, cwd: Path | None = None, timeout: float = 120,
        python_flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """`python -m codesearch.cli ARGS` in a clean environment."""
    return subprocess.run([sys.executable, *python_flags, "-m", "codesearch.cli", *args],
                          cwd=str(cwd or REPO_ROOT), env=_env(), capture_output=True, text=True,
                          timeout=timeout)


def pid_alive(pid: int) -> bool:
    """True for a running process (a zombie counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def pid_gone(pid: int) -> bool:
    """True once every thread of the process has exited. A multi-threaded process shows its leader
    as a zombie while other threads are still exiting and holding its files (the socket included)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True
    return tasks in ([], [str(pid)]) and not pid_alive(pid)


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def thread_count(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise AssertionError(f"no Threads line for pid {pid}")


def wait_for(predicate, timeout: float = FRESH_TIMEOUT, interval: float = 0.1, what: str = ""):
    """Poll `predicate` until it returns something truthy; fail with the last value after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.1f}s waiting for {what or predicate}; last: {value!r}")
        time.sleep(interval)


def uniq(prefix: str = "zq") -> str:
    """A fresh identifier made of letters only, so the keyword index keeps it as one term."""
    return prefix + "".join(random.choice(string.ascii_lowercase) for _ in range(10))


def letters(n: int, width: int = 4) -> str:
    out = ""
    for _ in range(width):
        out = chr(97 + n % 26) + out
        n //= 26
    return out


# --------------------------------------------------------------------------------------------
# helpers: JSON-RPC over the Unix socket
# --------------------------------------------------------------------------------------------

class Conn:
    """One raw connection to the daemon: send bytes or objects, read one JSON line at a time."""

    def __init__(self, path: Path, timeout: float = 60.0, blocking_connect: bool = True):
        """`blocking_connect`: wait for the daemon to accept, however busy; False connects the way
        codesearch.daemon.client.call does (with a timeout set: a full backlog fails at once)."""
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if not blocking_connect:
            self.sock.settimeout(timeout)
        try:
            self.sock.connect(str(path))
        except OSError:
            self.sock.close()
            raise
        self.sock.settimeout(timeout)
        self.reader = self.sock.makefile("rb")

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, message) -> None:
        self.send_raw(json.dumps(message).encode("utf-8") + b"\n")

    def recv(self) -> dict | None:
        """The next reply, or None when the daemon closed the connection."""
        try:
            line = self.reader.readline()
        except (ConnectionResetError, BrokenPipeError):
            return None
        if not line:
            return None
        assert line.endswith(b"\n"), f"a reply must end with a newline: {line[:200]!r}"
        return json.loads(line.decode("utf-8"))

    def request(self, method: str, params=None, request_id=1) -> dict:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        reply = self.recv()
        assert reply is not None, f"the daemon closed the connection instead of answering {method}"
        return reply

    def close(self) -> None:
        try:
            self.reader.close()
        finally:
            self.sock.close()

    def __enter__(self) -> Conn:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def assert_result(reply: dict, request_id=1):
    assert reply.get("jsonrpc") == "2.0", reply
    assert reply.get("id") == request_id, reply
    assert "error" not in reply, reply
    assert "result" in reply, reply
    return reply["result"]


def assert_error(reply: dict | None, codes: tuple[int, ...], request_id=None) -> dict:
    assert reply is not None, "expected a JSON-RPC error, the connection was closed"
    assert reply.get("jsonrpc") == "2.0", reply
    assert "result" not in reply, reply
    assert reply.get("id") == request_id, reply
    error = reply.get("error")
    assert isinstance(error, dict) and error.get("code") in codes, reply
    assert isinstance(error.get("message"), str) and error["message"], reply
    return error


# --------------------------------------------------------------------------------------------
# helpers: trees and daemons
# --------------------------------------------------------------------------------------------

def new_base() -> Path:
    # short paths: a Unix socket path must stay under ~107 bytes
    return Path(tempfile.mkdtemp(prefix="csd-"))


def copy_sample(dest: Path) -> Path:
    shutil.copytree(SAMPLE, dest, ignore=shutil.ignore_patterns(".codesearch"))
    return dest


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


class Daemon:
    """A daemon serving one tree, driven through the CLI and the raw socket."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self.dir = self.root / ".codesearch"
        self.sock = self.dir / "daemon.sock"
        self.pid_file = self.dir / "daemon.pid"
        self.log_file = self.dir / "daemon.log"
        self.pids: set[int] = set()

    # lifecycle --------------------------------------------------------------------------
    def start(self, timeout: float = 240, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
        try:
            proc = cli("daemon", "start", str(self.root), "--timeout", str(timeout), *extra, timeout=timeout + 30)
        finally:
            pid = self.read_pid()
            if pid:
                self.pids.add(pid)
        assert proc.returncode == 0, f"daemon start failed: {proc.stdout}{proc.stderr}\n{self.log()}"
        return proc

    def read_pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    @property
    def pid(self) -> int:
        pid = self.read_pid()
        assert pid, f"no pid file at {self.pid_file}"
        self.pids.add(pid)
        return pid

    def kill(self) -> int:
        """SIGKILL the daemon, as a crash would, and wait until it is gone."""
        pid = self.pid
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: pid_gone(pid), timeout=15, what=f"pid {pid} to die")
        return pid

    def stop(self, timeout: float = 60) -> subprocess.CompletedProcess | None:
        try:
            return cli("daemon", "stop", str(self.root), timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def ours(self, pid: int) -> bool:
        line = cmdline(pid)
        return "codesearch.transports.daemon_process" in line and str(self.root) in line

    def cleanup(self, stop_timeout: float = 40) -> None:
        """Finalizer: `daemon stop`, then SIGKILL whatever we started that is still alive."""
        pid = self.read_pid()
        if pid:
            self.pids.add(pid)
        if pid or self.sock.exists():
            self.stop(stop_timeout)
        for pid in sorted(self.pids):
            if pid_alive(pid) and self.ours(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                deadline = time.monotonic() + 10
                while not pid_gone(pid) and time.monotonic() < deadline:
                    time.sleep(0.05)

    def log(self) -> str:
        try:
            return "daemon.log:\n" + self.log_file.read_text()[-3000:]
        except OSError:
            return "(no daemon.log)"

    # requests ---------------------------------------------------------------------------
    def rpc(self, method: str, params=None, timeout: float = 60, request_id=1) -> dict:
        with Conn(self.sock, timeout) as conn:
            return conn.request(method, params, request_id)

    def call(self, method: str, params=None, timeout: float = 60):
        return assert_result(self.rpc(method, params, timeout))

    def search(self, query: str, mode: str = "keyword", limit: int = 50, timeout: float = 60, **extra) -> dict:
        answer = self.call("search", {"query": query, "mode": mode, "limit": limit, **extra}, timeout)
        assert isinstance(answer.get("results"), list), answer
        return answer

    def paths(self, query: str, **kw) -> set[str]:
        return {r["path"] for r in self.search(query, **kw)["results"]}

    def status(self) -> dict:
        return self.call("status")

    def idle(self) -> bool:
        return self.status()["pending_changes"] == 0

    def threads(self) -> int:
        return thread_count(self.pid)


def start_daemon(request, root: Path, stop_timeout: float = 40, extra: tuple[str, ...] = ()) -> Daemon:
    daemon = Daemon(root)
    request.addfinalizer(lambda: daemon.cleanup(stop_timeout))
    daemon.start(extra=extra)
    return daemon


@functools.cache
def _seed() -> Path:
    """sample_repos/python indexed once per process (vectors included) with `codesearch index`."""
    base = new_base()
    repo = copy_sample(base / "repo")
    proc = cli("index", str(repo), "-q", timeout=600)
    assert proc.returncode == 0, proc.stderr
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    return repo


@pytest.fixture(scope="session")
def seed_repo():
    """The seed: shared by every module that imports this fixture."""
    return _seed()


def seeded_copy(request, seed: Path) -> Path:
    """A private copy of the seed (the tree and its finished index, mtimes preserved), removed
    when `request`'s scope ends."""
    base = new_base()
    repo = base / "repo"
    shutil.copytree(seed, repo, ignore=shutil.ignore_patterns("daemon.*", "write.lock"))
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    return repo


def seeded_daemon(request, seed: Path, extra: tuple[str, ...] = (), warm: bool = True) -> Daemon:
    """A daemon (started with `extra` flags) on a private copy of the seed. `warm`: load the
    model first; while it loads, the writer cannot apply changes (see
    test_changes_are_applied_while_the_model_loads), which would stall freshness checks."""
    daemon = start_daemon(request, seeded_copy(request, seed), extra=extra)
    if warm:
        daemon.search("warm up the model", mode="hybrid", timeout=300)
    return daemon


@pytest.fixture
def seeded_tree(request, seed_repo):
    """A private copy of the seed: the tree and its finished index (mtimes preserved)."""
    return seeded_copy(request, seed_repo)


@pytest.fixture(scope="module")
def shared(request, seed_repo):
    """The module's main daemon, on a seeded copy of the sample."""
    return seeded_daemon(request, seed_repo)


@pytest.fixture
def d(shared):
    """The shared daemon, checked alive and idle before each test."""
    assert pid_alive(shared.pid), shared.log()
    wait_for(shared.idle, timeout=30, what="the shared daemon to be idle")
    return shared


