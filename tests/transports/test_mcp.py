"""`codesearch mcp` driven by the MCP SDK's own client over stdio, against a real daemon on a
copy of the sample repository: the tools, their answers, fresh edits, errors, a dead daemon."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import anyio
import pytest
from daemon_helpers import (  # noqa: F401 - fixtures by name
    REPO_ROOT,
    SUITE_SETTINGS,
    Daemon,
    new_base,
    pid_gone,
    seed_repo,
    wait_for,
    write,
)
from mcp import Client
from mcp.client.stdio import StdioServerParameters

TOOLS = {"search", "grep", "callers", "callees", "impact", "definition", "read", "status"}


def _server(root: Path, *extra: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_") or k in SUITE_SETTINGS}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return StdioServerParameters(command=sys.executable, args=["-m", "codesearch.cli", "mcp", str(root), *extra],
                                 env=env)


def run_session(root: Path, script, *extra: str):
    """Run `script(client)` (async) in one MCP session; returns what it returns."""
    async def main():
        async with Client(_server(root, *extra), read_timeout_seconds=300) as client:
            return await script(client)
    return anyio.run(main)


def answer_of(result) -> dict:
    assert not result.is_error, result.content[0].text
    data = json.loads(result.content[0].text)
    assert data == result.structured_content  # the text an agent reads is the structured answer
    return data


def error_of(result) -> str:
    assert result.is_error, result.content
    return result.content[0].text


@pytest.fixture
def repo(request, seed_repo):
    base = new_base()
    root = base / "repo"
    shutil.copytree(seed_repo, root, ignore=shutil.ignore_patterns("daemon.*", "write.lock"))
    daemon = Daemon(root)

    def cleanup():
        daemon.cleanup()
        shutil.rmtree(base, ignore_errors=True)
    request.addfinalizer(cleanup)
    return root


def test_tools_answer_through_a_daemon_the_server_started(repo):
    async def script(client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == TOOLS
        for tool in listed.values():
            assert len(tool.description) > 80 and tool.input_schema["type"] == "object"
        assert {"query", "limit", "mode", "files", "language", "kind", "path_glob", "max_tokens"} <= set(
            listed["search"].input_schema["properties"])
        out = {}
        out["search"] = answer_of(await client.call_tool("search", {"query": "parse a key value config file",
                                                                    "limit": 3}))
        out["files"] = answer_of(await client.call_tool("search", {"query": "inventory", "files": True,
                                                                   "language": "python", "mode": "keyword"}))
        out["grep"] = answer_of(await client.call_tool("grep", {"pattern": "clamp", "word": True,
                                                                "path_glob": "*.py"}))
        out["callers"] = answer_of(await client.call_tool("callers", {"name": "parse_config"}))
        out["callees"] = answer_of(await client.call_tool("callees", {"name": "main", "depth": 2}))
        out["impact"] = answer_of(await client.call_tool("impact", {"name": "_split_line"}))
        out["definition"] = answer_of(await client.call_tool("definition", {"name": "Inventory.Stats"}))
        out["read"] = answer_of(await client.call_tool("read", {"path": "config.py", "start_line": 8,
                                                                "end_line": 8}))
        out["status"] = answer_of(await client.call_tool("status", {}))
        return out

    out = run_session(repo, script)
    assert out["search"]["results"][0]["qualified_name"] == "parse_config"
    assert {"path", "start_line", "end_line", "kind", "qualified_name", "signature", "snippet", "score"} <= set(
        out["search"]["results"][0])
    paths = [r["path"] for r in out["files"]["results"]]
    assert len(paths) == len(set(paths)) and all(p.endswith(".py") for p in paths)
    assert out["grep"]["matches"][0]["chunk"]["qualified_name"] == "clamp"  # the definition first
    assert [r["qualified_name"] for r in out["callers"]["results"]] == ["main"]
    assert [(r["resolution"], bool(r["sites"])) for r in out["callers"]["results"]] == [("import", True)]
    assert {"parse_config", "Inventory"} <= {r["name"] for r in out["callees"]["results"]}
    assert [f["path"] for f in out["impact"]["files"]] == ["config.py", "inventory.py"]
    assert out["definition"]["definitions"][0]["docstring"] == "Summary statistics for an inventory snapshot."
    assert out["read"]["text"].startswith("def parse_config(")
    assert out["status"]["files"] >= 4 and out["status"]["embedded_share"] > 0
    assert Daemon(repo).read_pid()  # the server started the daemon, and left it for the next session


def test_a_file_edited_after_start_shows_up(repo):
    async def script(client):
        answer_of(await client.call_tool("status", {}))
        write(repo / "fresh_mcp.py", "def aardvark_lantern_mcp():\n    return 2\n")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            found = answer_of(await client.call_tool("search", {"query": "aardvark_lantern_mcp", "mode": "keyword"}))
            if any(r["path"] == "fresh_mcp.py" for r in found["results"]):
                return True
            await anyio.sleep(0.1)
        return False

    assert run_session(repo, script)


def test_errors_are_tool_errors_the_agent_can_read(repo):
    async def script(client):
        return {
            "unknown name": error_of(await client.call_tool("callers", {"name": "parse_confg"})),
            "unknown definition": error_of(await client.call_tool("definition", {"name": "NoSuchThing"})),
            "missing argument": error_of(await client.call_tool("search", {})),
            "wrong type": error_of(await client.call_tool("search", {"query": "x", "limit": "ten"})),
            "out of range": error_of(await client.call_tool("search", {"query": "x", "limit": 5000})),
            "unknown argument": error_of(await client.call_tool("impact", {"name": "main", "bogus": 1})),
            "bad mode": error_of(await client.call_tool("search", {"query": "x", "mode": "psychic"})),
            "outside": error_of(await client.call_tool("read", {"path": "../../etc/passwd"})),
            "absolute": error_of(await client.call_tool("read", {"path": "/etc/passwd"})),
            "nul": error_of(await client.call_tool("read", {"path": "config.py\0.txt"})),
            "unknown tool": error_of(await client.call_tool("grep_everything", {})),
            "still fine": answer_of(await client.call_tool("search", {"query": "clamp", "mode": "keyword"})),
        }

    errors = run_session(repo, script)
    assert "no definition named 'parse_confg'" in errors["unknown name"] and "parse_config" in errors["unknown name"]
    assert "NoSuchThing" in errors["unknown definition"]
    assert "'query' is required" in errors["missing argument"]
    assert "limit must be an integer" in errors["wrong type"]
    assert "between 1 and 1000" in errors["out of range"]
    assert "unknown field 'bogus'" in errors["unknown argument"]
    assert "unknown mode 'psychic'" in errors["bad mode"]
    assert "outside the repository" in errors["outside"] and "outside the repository" in errors["absolute"]
    assert "the path holds a NUL character" in errors["nul"]
    assert "unknown tool" in errors["unknown tool"]
    assert errors["still fine"]["results"]


def test_an_unknown_argument_is_told_the_fields_the_tool_publishes(repo):
    async def script(client):
        listed = {t.name: t for t in (await client.list_tools()).tools}
        errors = {name: error_of(await client.call_tool(name, {**arguments, "bogus": 1}))
                  for name, arguments in (("search", {"query": "x"}), ("grep", {"pattern": "x"}),
                                          ("read", {"path": "config.py"}), ("callers", {"name": "main"}))}
        hidden = error_of(await client.call_tool("search", {"query": "x", "explain": True}))
        return listed, errors, hidden

    listed, errors, hidden = run_session(repo, script)
    for name, message in errors.items():
        published = list(listed[name].input_schema["properties"])
        assert message == f"arguments: unknown field 'bogus'; known: {', '.join(published)}", message
    assert "language" in errors["search"] and not {"filters", "explain", "truncated"} & set(
        errors["search"].split("known: ")[1].split(", "))
    assert hidden.startswith("arguments: unknown field 'explain'")


def test_a_daemon_killed_mid_session_is_started_again(repo):
    daemon = Daemon(repo)

    async def script(client):
        first = answer_of(await client.call_tool("status", {}))["pid"]
        os.kill(first, signal.SIGKILL)
        wait_for(lambda: pid_gone(first), timeout=15, what="the daemon to die")
        again = answer_of(await client.call_tool("search", {"query": "compute_backoff", "mode": "keyword"}))
        second = answer_of(await client.call_tool("status", {}))["pid"]
        return first, again, second

    first, again, second = run_session(repo, script)
    daemon.pids.update({first, second})
    assert second != first
    assert again["results"][0]["name"] == "compute_backoff"


def test_no_start_says_how_to_start_one(repo):
    async def script(client):
        return error_of(await client.call_tool("search", {"query": "x"}))

    message = run_session(repo, script, "--no-start")
    assert "no codesearch daemon serves" in message and "codesearch daemon start" in message
    assert not Daemon(repo).read_pid()
