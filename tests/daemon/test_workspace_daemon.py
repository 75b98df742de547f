"""One daemon serving a workspace (transports/daemon_process.py `run_workspace`): every repository from one
process, a file edited in each found through the workspace's socket and HTTP, a missing
repository noted, each repository's own socket answering for it, and a clean stop."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from daemon_helpers import REPO_ROOT, _env, new_base, pid_alive, uniq, wait_for

CLIENT = "from inventory import compute_backoff\n\n\ndef fetch_with_retry(url):\n    return compute_backoff(3)\n"


def cli(*args: str, state: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**_env(), "CODESEARCH_WORKSPACE_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "codesearch.cli", *args], cwd=str(REPO_ROOT), env=env,
                          capture_output=True, text=True, timeout=timeout)


def mcp_search(file: Path, state: Path, query: str) -> dict:
    """The MCP `search` tool of `codesearch mcp --workspace FILE --no-start`, from the SDK's client."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    env = {**_env(), "CODESEARCH_WORKSPACE_DIR": str(state)}
    server = StdioServerParameters(command=sys.executable, env=env,
                                   args=["-m", "codesearch.cli", "mcp", "--workspace", str(file), "--no-start"])

    async def main() -> dict:
        async with Client(server, read_timeout_seconds=120) as client:
            result = await client.call_tool("search", {"query": query, "mode": "keyword", "limit": 3})
            assert not result.is_error, result.content[0].text
            return json.loads(result.content[0].text)
    return anyio.run(main)


def daemon_log(state: Path) -> str:
    return "".join(p.read_text() for p in state.glob("*/daemon.log"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def workspace(request):
    """python and go samples and a client of the python one, plus a repository that is missing."""
    base = new_base()
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    for name in ("python", "go"):
        shutil.copytree(REPO_ROOT / "sample_repos" / name, base / name, ignore=shutil.ignore_patterns(".codesearch"))
    (base / "client").mkdir()
    (base / "client" / "app.py").write_text(CLIENT)
    file = base / "codesearch-workspace.toml"
    file.write_text('[[repo]]\npath = "python"\nname = "svc"\n\n[[repo]]\npath = "go"\nboost = 1.5\n\n'
                    '[[repo]]\npath = "client"\n\n[[repo]]\npath = "gone"\n')
    state = base / "ws"

    def stop() -> None:
        cli("daemon", "stop", "--workspace", str(file), state=state, timeout=60)
        for pid_file in state.glob("*/daemon.pid"):  # a daemon that did not stop is not left behind
            pid = int(pid_file.read_text() or 0)
            if pid and pid_alive(pid):
                os.kill(pid, 9)

    request.addfinalizer(stop)
    return base, file, state


def test_one_daemon_serves_a_workspace(workspace):
    base, file, state = workspace
    port = free_port()
    started = cli("daemon", "start", "--workspace", str(file), "--http", str(port), "--json", state=state, timeout=300)
    assert started.returncode == 0, started.stderr + daemon_log(state)
    pid = json.loads(started.stdout)["pid"]
    # one process: the workspace's pid is each repository's daemon too, with a socket of its own
    for name in ("python", "go", "client"):
        assert int((base / name / ".codesearch" / "daemon.pid").read_text()) == pid
        assert (base / name / ".codesearch" / "daemon.sock").exists()
    [sock] = state.glob("*/daemon.sock")
    assert oct(sock.stat().st_mode & 0o777) == "0o600"

    def ask(*args: str) -> dict:
        done = cli("query", *args, "--workspace", str(file), "--mode", "keyword", "--json", state=state)
        assert done.returncode == 0, done.stderr + daemon_log(state)
        assert "answering in this process" not in done.stderr, done.stderr + daemon_log(state)  # the daemon answered
        return json.loads(done.stdout)

    answer = ask("retry backoff attempt", "--limit", "6")
    assert {r["repo"] for r in answer["results"]} >= {"svc", "go"}
    assert answer["results"][0]["repo"] == "go"  # boost 1.5: 1.5/60 > 1/60
    assert "gone" in answer["note"] and "missing" in answer["note"]

    # a file edited in each repository is found through the workspace, with its repository's name
    names = {"python": uniq("zqpy"), "go": "Zq" + uniq("go"), "client": uniq("zqcl")}
    with open(base / "python" / "config.py", "a") as fh:
        fh.write(f"\n\ndef {names['python']}():\n    return 1\n")
    with open(base / "go" / "main.go", "a") as fh:
        fh.write(f"\nfunc {names['go']}() int {{ return 1 }}\n")
    (base / "client" / "more.py").write_text(f"def {names['client']}():\n    return 2\n")
    expected = {("svc", "config.py", names["python"]), ("go", "main.go", names["go"]),
                ("client", "more.py", names["client"])}

    def found() -> set:
        results = ask(" ".join(names.values()), "--limit", "20")["results"]
        return {(r["repo"], r["path"], r["name"]) for r in results} & expected

    assert wait_for(lambda: found() == expected, timeout=30, what="the edits in every repository")

    # callers resolve across repositories, through the daemon
    callers = cli("callers", "compute_backoff", "--workspace", str(file), "--json", state=state)
    assert callers.returncode == 0, callers.stdout + callers.stderr + daemon_log(state)
    assert ("client", "fetch_with_retry") in {(r["repo"], r["name"]) for r in json.loads(callers.stdout)["results"]}

    # the HTTP front-end answers for the workspace too
    body = json.dumps({"query": names["go"], "mode": "keyword", "limit": 3}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/codebase/search", data=body,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as reply:
        assert json.loads(reply.read())["results"][0]["repo"] == "go"

    # and MCP, through the same daemon
    found_by_mcp = mcp_search(file, state, names["python"])
    assert (found_by_mcp["results"][0]["repo"], found_by_mcp["results"][0]["name"]) == ("svc", names["python"])

    # one repository alone, through its own socket of the same process
    alone = cli("query", names["client"], "--repo", str(base / "client"), "--mode", "keyword", "--json", state=state)
    assert json.loads(alone.stdout)["results"][0]["name"] == names["client"]
    assert "repo" not in json.loads(alone.stdout)["results"][0]

    status = cli("daemon", "status", "--workspace", str(file), "--json", state=state)
    reported = json.loads(status.stdout)
    assert reported["running"] and reported["pid"] == pid and "gone" in reported["watcher_note"]

    stopped = cli("daemon", "stop", "--workspace", str(file), state=state, timeout=60)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    wait_for(lambda: not pid_alive(pid), timeout=15, what="the daemon to exit")
    assert not sock.exists() and not (base / "python" / ".codesearch" / "daemon.sock").exists()


def test_a_bad_workspace_file_starts_nothing(tmp_path):
    file = tmp_path / "ws.toml"
    file.write_text('[[repo]]\npath = "a"\n\n[[repo]]\nboost = 2\n')
    done = cli("daemon", "start", "--workspace", str(file), state=tmp_path / "ws")
    assert done.returncode == 2 and f"{file}:4:" in done.stderr and "needs a path" in done.stderr
    assert not (tmp_path / "ws").exists()
