"""The team service over the real HTTP front-end: every repository at once, `repo` and `branch`
filters, relations, and the methods a team store does not serve refused in one line."""

from __future__ import annotations

import http.client
import json

import pytest
from team_helpers import BILLING, SHIPPING, index, store_fixture, write  # noqa: F401 - the store fixture

from codesearch.config import Settings
from codesearch.daemon.http_address import HttpAddress
from codesearch.team.team_service import TeamService
from codesearch.transports.http import HttpServer


@pytest.fixture
def served(store, tmp_path):
    index(store, write(tmp_path / "billing", BILLING), "billing")
    index(store, write(tmp_path / "ship", SHIPPING), "shipping")
    server = HttpServer(HttpAddress("127.0.0.1", 0), TeamService(store, Settings(), None))
    server.serve_in_thread()
    yield server
    server.close()


def call(server, verb: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    conn = http.client.HTTPConnection(server.address.host, server.address.port, timeout=30)
    conn.request(verb, path, body=json.dumps(body) if body is not None else None,
                 headers={"Content-Type": "application/json"})
    reply = conn.getresponse()
    answer = reply.status, json.loads(reply.read())
    conn.close()
    return answer


def test_search_covers_every_repository_and_narrows_by_repo(served):
    status, answer = call(served, "POST", "/v1/codebase/search", {"query": "route parcel retry", "mode": "keyword"})
    assert status == 200 and {r["repo"] for r in answer["results"]} == {"billing", "shipping"}
    assert all(r["branch"] == "main" for r in answer["results"])
    status, answer = call(served, "POST", "/v1/codebase/search",
                          {"query": "route parcel retry", "mode": "keyword", "filters": {"repo": "shipping"}})
    assert status == 200 and {r["repo"] for r in answer["results"]} == {"shipping"}


def test_callers_health_and_a_method_not_served(served):
    status, answer = call(served, "POST", "/v1/codebase/callers", {"name": "cheapestCarrier"})
    assert status == 200 and [(r["name"], r["repo"]) for r in answer["results"]] == [("PlanRoute", "shipping")]
    status, answer = call(served, "GET", "/health")
    assert status == 200 and answer["ok"]
    status, answer = call(served, "GET", "/v1/codebase/stats")
    assert status == 200 and answer["files"] == 3 and 0 < answer["vectors"] <= answer["chunks"]
    status, answer = call(served, "POST", "/v1/codebase/grep", {"pattern": "def"})
    assert status >= 400 and "team store" in answer["error"]["message"]


def test_the_mcp_tools_answer_from_the_store(store, tmp_path):
    from codesearch.cli.team_commands import DirectSession
    from codesearch.transports.mcp import CodeSearchTools, ToolError
    index(store, write(tmp_path / "ship", SHIPPING), "shipping")
    tools = CodeSearchTools(DirectSession(TeamService(store, Settings(), None)))  # type: ignore[arg-type]
    answer = tools.call("search", {"query": "cheapest carrier route", "mode": "keyword"})
    assert answer["results"][0]["repo"] == "shipping"
    assert [r["name"] for r in tools.call("callers", {"name": "cheapestCarrier"})["results"]] == ["PlanRoute"]
    with pytest.raises(ToolError, match="team store"):
        tools.call("grep", {"pattern": "func"})
