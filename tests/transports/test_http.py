"""The HTTP API on a real daemon on a loopback port: every endpoint, the same JSON as the socket,
the token and host rules, hostile bodies, concurrency, and a schemathesis fuzz of the OpenAPI
description that must find no 5xx answer and no answer outside the schema."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from daemon_helpers import REPO_ROOT, cli, seed_repo, seeded_daemon, write  # noqa: F401 - fixtures by name

from codesearch.transports.openapi import routes

TOKEN = "s3cret-token-for-tests"


class Http:
    """A keep-alive HTTP client of one server."""

    def __init__(self, address: str, token: str | None = None):
        host, _, port = address.rpartition(":")
        self.host, self.port, self.token = host, int(port), token

    def request(self, method: str, path: str, body=None, headers: dict | None = None, raw: bytes | None = None,
                timeout: float = 60) -> tuple[int, dict, dict]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            sent = {"Content-Type": "application/json", **(headers or {})}
            if self.token and "Authorization" not in sent:
                sent["Authorization"] = f"Bearer {self.token}"
            data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            payload = response.read()
            return response.status, json.loads(payload) if payload else {}, dict(response.getheaders())
        finally:
            conn.close()

    def post(self, path: str, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def get(self, path: str, **kw):
        return self.request("GET", path, **kw)


@pytest.fixture(scope="module")
def served(request, seed_repo):
    """A daemon with HTTP on an ephemeral loopback port."""
    daemon = seeded_daemon(request, seed_repo, extra=("--http", "0"))
    return daemon, Http(daemon.call("health")["http"])


def test_every_endpoint_answers_as_the_socket_does(served):
    daemon, web = served
    query = {"query": "parse a config file", "mode": "keyword", "limit": 5}
    status, answer, headers = web.post("/v1/codebase/search", query)
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    socket_answer = daemon.call("search", query)
    assert [r["id"] for r in answer["results"]] == [r["id"] for r in socket_answer["results"]]
    assert set(answer) == set(socket_answer)
    status, stats, _ = web.get("/v1/codebase/stats")
    assert status == 200 and stats["files"] == daemon.call("stats")["files"] and stats["chunks"] > 0
    for method in ("callers", "callees"):
        status, relations, _ = web.post(f"/v1/codebase/{method}", {"name": "parse_config" if method == "callers"
                                                                    else "main", "depth": 1})
        assert status == 200 and relations["results"], relations
        direct = [r for r in relations["results"] if r["depth"] == 1]
        assert direct and all(r["resolution"] and r["sites"] for r in direct), relations  # how, and where
    assert web.post("/v1/codebase/callers", {"name": "parse_config"})[1]["results"][0]["qualified_name"] == "main"
    status, index, _ = web.post("/v1/codebase/index", {"paths": ["config.py"]})
    assert status == 200 and index["ok"] is True
    assert web.post("/v1/codebase/index")[0] == 200  # the body is optional: everything
    assert web.get("/health")[1]["ok"] is True
    assert web.post("/v1/codebase/definition", {"name": "Inventory"})[1]["definitions"][0]["kind"] == "class"
    assert web.post("/v1/codebase/read", {"path": "config.py", "end_line": 1})[1]["end_line"] == 1
    assert web.get("/v1/codebase/status")[1]["ready"] is True
    status, grep, _ = web.post("/v1/codebase/grep", {"pattern": "def clamp"})
    assert status == 200 and grep["matches"][0]["path"] == "config.py"
    assert web.post("/v1/codebase/grep", {"pattern": "(("})[0] == 400
    status, spec, _ = web.get("/openapi.json")
    assert status == 200 and spec["openapi"].startswith("3.1")
    assert {"/v1/codebase/search", "/v1/codebase/grep", "/v1/codebase/index", "/v1/codebase/stats",
            "/v1/codebase/callers", "/v1/codebase/callees", "/health"} <= set(spec["paths"])
    assert "/v1/codebase/shutdown" not in spec["paths"]


def test_the_http_doc_lists_every_endpoint():
    """docs/http.md's table names each route the server has (`/v1/codebase/callers`, or `/callees`
    beside it in the same row)."""
    doc = (REPO_ROOT / "docs" / "http.md").read_text()
    missing = [path for path in routes() if f"/{path.rsplit('/', 1)[-1]}`" not in doc]
    assert not missing, missing


def test_a_file_written_after_start_is_found_over_http(served):
    daemon, web = served
    write(daemon.root / "fresh_http.py", "def zebra_quokka_http():\n    return 1\n")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = web.post("/v1/codebase/search", {"query": "zebra_quokka_http", "mode": "keyword"})[1]
        if any(r["path"] == "fresh_http.py" for r in found["results"]):
            break
        time.sleep(0.1)
    else:
        pytest.fail("the new file never showed up")


@pytest.mark.parametrize("call, status, code", [
    (lambda w: w.post("/v1/codebase/search", raw=b"{not json"), 400, "bad_request"),
    (lambda w: w.post("/v1/codebase/search", [1, 2]), 400, "bad_request"),
    (lambda w: w.post("/v1/codebase/search", {"query": 3}), 400, "bad_request"),
    (lambda w: w.post("/v1/codebase/search", {"query": "x", "limit": 0}), 400, "bad_request"),
    (lambda w: w.post("/v1/codebase/search", {"query": "x", "bogus": 1}), 400, "bad_request"),
    (lambda w: w.post("/v1/codebase/search", raw=b'{"query": ' + b"[" * 50 + b"]" * 50 + b"}"), 400, "bad_request"),
    (lambda w: w.post("/v1/codebase/search", raw=b'{"query": "x", "limit": ' + b"9" * 5000 + b"}"), 400,
     "bad_request"),
    (lambda w: w.post("/v1/codebase/search", {"query": "x"}, headers={"Content-Type": "text/plain"}), 415,
     "unsupported_media_type"),
    (lambda w: w.post("/v1/codebase/index", {"paths": ["../outside.py"]}), 403, "forbidden"),
    (lambda w: w.post("/v1/codebase/read", {"path": "/etc/passwd"}), 403, "forbidden"),
    (lambda w: w.post("/v1/codebase/read", {"path": ".git/config"}), 403, "forbidden"),
    (lambda w: w.post("/v1/codebase/read", {"path": "missing.py"}), 404, "not_found"),
    (lambda w: w.post("/v1/codebase/read", {"id": "0000000000000000"}), 404, "not_found"),
    (lambda w: w.post("/v1/codebase/read", {"path": "config.py", "start_line": 9999}), 404, "not_found"),
    (lambda w: w.post("/v1/codebase/read", {}), 400, "bad_request"),
    (lambda w: w.post("/v1/codebase/read", {"path": "config.py", "id": "0000000000000000"}), 400, "bad_request"),
    (lambda w: w.post("/v1/codebase/callers", {"name": " "}), 400, "bad_request"),
    (lambda w: w.post("/v1/codebase/symbols", {"query": "x", "limit": 5.5}), 400, "bad_request"),
    (lambda w: w.post("/v1/codebase/references", {"name": "a\u0000b"}), 400, "bad_request"),
    (lambda w: w.post("/v1/codebase/nothing", {}), 404, "not_found"),
    (lambda w: w.get("/"), 404, "not_found"),
    (lambda w: w.get("/v1/codebase/search"), 405, "method_not_allowed"),
    (lambda w: w.request("DELETE", "/v1/codebase/search"), 405, "method_not_allowed"),
    (lambda w: w.request("TRACE", "/health"), 405, "method_not_allowed"),
    (lambda w: w.request("PATCH", "/v1/codebase/stats"), 405, "method_not_allowed"),
    (lambda w: w.request("TRACE", "/nowhere"), 404, "not_found"),
    (lambda w: w.post("/v1/codebase/shutdown", {}), 404, "not_found"),
    (lambda w: w.get("/health", headers={"Host": "attacker.example"}), 403, "forbidden"),
])
def test_bad_requests_get_a_json_error_with_a_fitting_status(served, call, status, code):
    daemon, web = served
    got, body, headers = call(web)
    assert (got, body["error"]["code"]) == (status, code), body
    assert body["error"]["message"]
    if got == 405:  # says which method the endpoint takes
        assert headers["Allow"] in {"GET", "POST"}
    assert web.get("/health")[0] == 200 and daemon.call("health")["ok"]


def test_oversized_and_chunked_bodies_are_refused_without_reading_them(served):
    _, web = served
    with socket.create_connection((web.host, web.port), timeout=10) as sock:
        sock.sendall(b"POST /v1/codebase/search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 2097152\r\n\r\n{\"query\": \"xxxx")  # the answer comes before the rest
        reply = _read_to_close(sock)
        assert reply.startswith(b"HTTP/1.1 413") and b'"too_large"' in reply and b"Connection: close" in reply
    with socket.create_connection((web.host, web.port), timeout=10) as sock:
        sock.sendall(b"POST /v1/codebase/search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n0\r\n\r\n")
        assert _read_to_close(sock).startswith(b"HTTP/1.1 411")


def _read_to_close(sock: socket.socket) -> bytes:
    """Everything the server sends before it hangs up (headers and body may come apart)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_concurrent_requests_all_answer(served):
    _, web = served
    queries = ["parse config", "inventory value", "compute backoff", "who calls parse_config", "clamp"] * 8

    def one(text: str) -> int:
        return web.post("/v1/codebase/search", {"query": text, "limit": 5})[0]

    with ThreadPoolExecutor(max_workers=20) as pool:
        assert set(pool.map(one, queries)) == {200}


def test_a_token_is_required_when_configured(request, seed_repo):
    daemon = seeded_daemon(request, seed_repo, extra=("--http", "0", "--http-token", TOKEN), warm=False)
    address = daemon.call("health")["http"]
    assert TOKEN not in Path(f"/proc/{daemon.pid}/cmdline").read_text()  # never on the command line
    anonymous, wrong, right = Http(address), Http(address, "wrong"), Http(address, TOKEN)
    status, _, headers = anonymous.get("/v1/codebase/stats")
    assert status == 401 and headers["WWW-Authenticate"] == "Bearer"
    assert wrong.post("/v1/codebase/search", {"query": "x"})[0] == 401
    assert anonymous.get("/openapi.json")[0] == 401
    assert right.get("/v1/codebase/stats")[0] == 200
    assert right.post("/v1/codebase/search", {"query": "config", "mode": "keyword"})[0] == 200
    assert right.get("/openapi.json")[1]["security"] == [{"bearer": []}]


def test_other_addresses_are_refused_without_a_token(tmp_path):
    proc = cli("daemon", "start", str(tmp_path), "--http", "0.0.0.0:0")
    assert proc.returncode == 2
    assert "not loopback" in proc.stderr and "CODESEARCH_HTTP_TOKEN" in proc.stderr
    assert not (tmp_path / ".codesearch" / "daemon.pid").exists()
    assert cli("daemon", "start", str(tmp_path), "--http", "localhost:99999").returncode == 2


def test_a_port_already_in_use_is_one_line_naming_it(tmp_path):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        proc = cli("daemon", "start", str(tmp_path), "--http", address)
    finally:
        taken.close()
        cli("daemon", "stop", str(tmp_path))
    assert proc.returncode != 0
    assert f"{address} is already in use" in proc.stderr and "Traceback" not in proc.stderr
    assert "Errno" not in proc.stderr and proc.stderr.count("\n") == 1


def test_what_the_schema_accepts_is_accepted(served):
    """Cases the published schema allows that the server once refused."""
    _, web = served
    assert web.post("/v1/codebase/symbols", {"query": "parse", "limit": 5.0})[0] == 200  # JSON Schema's integer
    found = web.post("/v1/codebase/definition", {"name": "parse_config"})[1]["definitions"][0]
    by_id = web.post("/v1/codebase/callers", {"id": found["id"]})
    assert by_id[0] == 200 and [r["qualified_name"] for r in by_id[1]["results"]] == ["main"]
    status, chunk, _ = web.post("/v1/codebase/read", {"id": found["id"], "path": None})
    assert status == 200 and chunk["text"].startswith("def parse_config(")
    status, empty, _ = web.post("/v1/codebase/read", {"path": "config.py", "start_line": 9, "end_line": 8})
    assert status == 200 and empty["text"] == ""


# A grep pattern must compile as a regular expression (unless `fixed`), which no JSON Schema can
# say: there, and only there, a valid-looking request may get 400.
SCHEMATHESIS_CONFIG = """
[[operations]]
include-path = "/v1/codebase/grep"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "403", "404"]
"""


def test_schemathesis_finds_no_disagreement_with_the_openapi_document(served, tmp_path):
    """Property-based fuzzing of every operation in the OpenAPI description with every check
    schemathesis has (among them: schema-valid requests are accepted, invalid ones refused, a
    405 says `Allow`), bounded in examples."""
    _, web = served
    st = Path(sys.executable).parent / "st"
    (tmp_path / "schemathesis.toml").write_text(SCHEMATHESIS_CONFIG)
    proc = subprocess.run(
        [str(st), "run", f"http://{web.host}:{web.port}/openapi.json", "--max-examples", "40", "--seed", "1",
         "--checks", "all", "--request-timeout", "30", "--no-color"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)  # its cache and config go there
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "passed" in proc.stdout and "Configuration:    " + str(tmp_path) in proc.stdout
