"""The red team's findings against the daemon's HTTP front-end, each reproduced over a
raw socket against a real server on loopback: a refused request's unread body taken for the next
request, ambiguous framing, a bodiless POST that is not JSON, slow clients holding every thread,
and the bearer token compared as the wrong bytes."""

from __future__ import annotations

import http.client
import json
import re
import selectors
import socket
import time

import pytest
from daemon_helpers import seed_repo, seeded_copy, seeded_daemon, wait_for  # noqa: F401 - fixtures by name

from codesearch.api.local import LocalService
from codesearch.config import load_settings
from codesearch.daemon.http_address import HttpAddress
from codesearch.indexing.index import Index
from codesearch.transports.http import MAX_CONNECTIONS_PER_CLIENT, HttpServer
from codesearch.transports.limits import MAX_CONNECTIONS

# a complete request of its own, sent as the body of one the server refuses: a DNS-rebinding page
# can address that body's Host to localhost, but not the request that carries it
SMUGGLED = (b"POST /v1/codebase/index HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            b"Content-Length: 2\r\n\r\n{}")
SEARCH_BODY = b'{"query": "parse config", "mode": "keyword", "limit": 3}'
SEARCH_HEAD = b"POST /v1/codebase/search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
SEARCH = SEARCH_HEAD + b"Content-Length: %d\r\n\r\n" % len(SEARCH_BODY) + SEARCH_BODY
QUICK_DEADLINE_SECONDS = 2.0  # the request deadline of the in-process server: the slow-client tests' length
DRIP_SECONDS = 1.0  # a slow client sends one byte this often
ANSWER_WAIT_SECONDS = 5.0  # how long a test waits for the server to answer or hang up
TOKEN = "clé-secrète-à"  # its UTF-8 ends in 0xA0, which Latin-1 reads as a space str.strip() would drop


def _address(daemon) -> tuple[str, int]:
    host, _, port = daemon.call("health")["http"].rpartition(":")
    return host, int(port)


@pytest.fixture(scope="module")
def served(request, seed_repo):
    """A daemon with HTTP on an ephemeral loopback port, idle."""
    daemon = seeded_daemon(request, seed_repo, extra=("--http", "0"), warm=False)
    wait_for(daemon.idle, timeout=60, what="the daemon to be idle")
    return daemon, _address(daemon)


@pytest.fixture(scope="module")
def guarded(request, seed_repo):
    """A daemon with HTTP and a token that is not ASCII."""
    daemon = seeded_daemon(request, seed_repo, extra=("--http", "0", "--http-token", TOKEN), warm=False)
    return daemon, _address(daemon)


@pytest.fixture
def quick(request, seed_repo):
    """An HTTP server in this process over a copy of the seed, whose request deadline is short."""
    root = seeded_copy(request, seed_repo)
    index = Index(root, load_settings(root))
    server = HttpServer(HttpAddress("127.0.0.1", 0), LocalService(index))
    server.request_seconds = QUICK_DEADLINE_SECONDS
    server.serve_in_thread()
    yield server, ("127.0.0.1", server.address.port)
    server.close()
    index.close()


def read_until_closed(sock: socket.socket, wait: float = ANSWER_WAIT_SECONDS) -> tuple[bytes, bool]:
    """What the server sends within `wait` seconds, and whether it hung up by then."""
    received, deadline = b"", time.monotonic() + wait
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except ConnectionResetError:
            return received, True
        if not chunk:
            return received, True
        received += chunk
    return received, False


def exchange(address: tuple[str, int], data: bytes) -> tuple[bytes, bool]:
    """Send `data` on a new connection: the server's bytes, and whether it hung up."""
    with socket.create_connection(address, timeout=ANSWER_WAIT_SECONDS) as sock:
        sock.sendall(data)
        return read_until_closed(sock)


def statuses(received: bytes) -> list[int]:
    return [int(code) for code in re.findall(rb"^HTTP/1\.1 (\d{3}) ", received, re.MULTILINE)]


def reindexes(daemon) -> int:
    return daemon.call("status")["reindex_count"]


# --- 1. a refused request closes its connection ---------------------------------------------------

REFUSED = {
    "foreign Host": SEARCH_HEAD.replace(b"Host: localhost", b"Host: attacker.example"),
    "no such endpoint": b"POST /v1/codebase/nothing HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n",
    "wrong method": b"PUT /v1/codebase/search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n",
    "GET with a body": b"GET /health HTTP/1.1\r\nHost: localhost\r\n",
    "not JSON": b"POST /v1/codebase/search HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n",
}


@pytest.mark.parametrize("head", REFUSED.values(), ids=REFUSED.keys())
def test_a_refused_request_closes_its_connection_and_its_body_never_runs(served, head):
    daemon, address = served
    before = reindexes(daemon)
    received, closed = exchange(address, head + b"Content-Length: %d\r\n\r\n" % len(SMUGGLED) + SMUGGLED)
    assert len(statuses(received)) == 1 and statuses(received)[0] >= 400, received
    assert closed and b"Connection: close" in received, received
    assert reindexes(daemon) == before


def test_an_unauthorized_request_closes_its_connection(guarded):
    _, address = guarded
    head = SEARCH_HEAD + b"Authorization: Bearer wrong\r\n"
    received, closed = exchange(address, head + b"Content-Length: %d\r\n\r\n" % len(SMUGGLED) + SMUGGLED)
    assert statuses(received) == [401] and closed, received


# --- 2. framing two readers could read two ways is refused ----------------------------------------

N = len(SEARCH_BODY)
AMBIGUOUS = {
    "two lengths": b"Content-Length: %d\r\nContent-Length: %d\r\n" % (N, N + 20),
    "two equal lengths": b"Content-Length: %d\r\nContent-Length: %d\r\n" % (N, N),
    "chunked and a length": b"Transfer-Encoding: chunked\r\nContent-Length: %d\r\n" % N,
    "a length and chunked": b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n" % N,
    "another coding": b"Transfer-Encoding: gzip\r\n",
    "a signed length": b"Content-Length: +%d\r\n" % N,
    "a length with an underscore": b"Content-Length: 0_%d\r\n" % N,
    "a space before the colon": b"Content-Length : %d\r\n" % N,
    "two hosts": b"Host: attacker.example\r\nContent-Length: %d\r\n" % N,
    "a word for a length": b"Content-Length: many\r\n",
    "a negative length": b"Content-Length: -%d\r\n" % N,
}


@pytest.mark.parametrize("framing", AMBIGUOUS.values(), ids=AMBIGUOUS.keys())
def test_ambiguous_framing_is_refused_with_400_and_closed(served, framing):
    _, address = served
    received, closed = exchange(address, SEARCH_HEAD + framing + b"\r\n" + SEARCH_BODY)
    assert statuses(received) == [400] and closed, received
    assert b'"bad_request"' in received


# --- 3. every POST is JSON, body or not ------------------------------------------------------------

NOT_JSON = {"text/plain": b"Content-Type: text/plain\r\n", "none": b"",
            "form": b"Content-Type: application/x-www-form-urlencoded\r\n"}


@pytest.mark.parametrize("content_type", NOT_JSON.values(), ids=NOT_JSON.keys())
def test_a_bodiless_post_that_is_not_json_is_refused_and_starts_no_index_run(served, content_type):
    daemon, address = served
    before = reindexes(daemon)
    received, closed = exchange(address, b"POST /v1/codebase/index HTTP/1.1\r\nHost: localhost\r\n"
                                         b"Origin: http://attacker.example\r\n" + content_type
                                + b"Content-Length: 0\r\n\r\n")
    assert statuses(received) == [415] and closed, received
    assert b'"unsupported_media_type"' in received
    assert reindexes(daemon) == before


def test_json_with_a_charset_is_served_and_the_connection_kept(served):
    _, (host, port) = served
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.connect()
        first = conn.sock
        for _ in range(2):
            conn.request("POST", "/v1/codebase/search", body=SEARCH_BODY,
                         headers={"Content-Type": "application/json; charset=utf-8"})
            response = conn.getresponse()
            assert response.status == 200 and json.loads(response.read())["results"]
        assert conn.sock is first  # the same connection served both
    finally:
        conn.close()


# --- 4. slow clients ---------------------------------------------------------------------------------

def drip(sock: socket.socket, payload: bytes, give_up: float) -> float | None:
    """Send `payload` a byte every DRIP_SECONDS until the server hangs up: the seconds that took
    (None if it had not after `give_up` seconds)."""
    began = time.monotonic()
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_READ)
        for i in range(len(payload) + 1):
            if time.monotonic() - began > give_up:
                return None
            if selector.select(DRIP_SECONDS) and read_until_closed(sock, 1.0)[1]:
                return time.monotonic() - began
            try:
                sock.sendall(payload[i:i + 1])
            except (BrokenPipeError, ConnectionResetError):
                return time.monotonic() - began
    return None


SLOW = {
    "nothing sent": (b"", b""),
    "headers a byte at a time": (b"POST /v1/codebase/search HTTP/1.1\r\nHost: localhost\r\n", b"X-Slow: " + b"a" * 60),
    "body a byte at a time": (SEARCH_HEAD + b"Content-Length: 60\r\n\r\n", b"a" * 60),
}


@pytest.mark.parametrize("start, payload", SLOW.values(), ids=SLOW.keys())
def test_a_slow_client_is_cut_off_at_the_request_deadline(quick, start, payload):
    _, address = quick
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(start)
        if payload:
            took = drip(sock, payload, give_up=QUICK_DEADLINE_SECONDS + 4 * DRIP_SECONDS)
        else:
            waited, took = time.monotonic(), None
            if read_until_closed(sock, QUICK_DEADLINE_SECONDS + 4 * DRIP_SECONDS)[1]:
                took = time.monotonic() - waited
    assert took is not None, "the slow client was never cut off"
    assert QUICK_DEADLINE_SECONDS - 0.2 <= took <= QUICK_DEADLINE_SECONDS + 2 * DRIP_SECONDS


def test_a_keep_alive_client_outlives_the_request_deadline(quick):
    """The deadline bounds one request's arrival, not a connection's life."""
    _, (host, port) = quick
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.connect()
        first = conn.sock
        for _ in range(3):
            conn.request("POST", "/v1/codebase/search", body=SEARCH_BODY, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            assert response.status == 200, response.read()
            response.read()
            time.sleep(QUICK_DEADLINE_SECONDS * 0.75)
        assert conn.sock is first
    finally:
        conn.close()


def _connect_from(source: str, address: tuple[str, int]) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(10)
    sock.connect(address)
    return sock


def _busy_answers(socks: list[socket.socket], expected: int) -> int:
    """How many of `socks` the server answered 503 and hung up on, waiting until `expected` have
    (then a moment more, for any beyond)."""
    answered, deadline = 0, time.monotonic() + 15
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            ready = selector.select(0.5 if answered >= expected else 1.0)
            if not ready and answered >= expected:
                break
            for key, _ in ready:
                selector.unregister(key.fileobj)
                received, closed = read_until_closed(key.fileobj, 2.0)  # type: ignore[arg-type]
                answered += int(closed and statuses(received) == [503] and b'"busy"' in received)
    return answered


def test_slow_clients_from_one_address_do_not_starve_another(served):
    """MAX_CONNECTIONS clients from 127.0.0.2 that send nothing took every thread: everyone got 503.
    Now that address holds its share and the rest are told busy; 127.0.0.1 is served."""
    _, address = served
    hogs = [_connect_from("127.0.0.2", address) for _ in range(MAX_CONNECTIONS)]
    try:
        with socket.create_connection(address, timeout=30) as sock:
            sock.sendall(SEARCH)
            received, _ = read_until_closed(sock, 3.0)
        assert statuses(received) == [200], received[:300]
        assert _busy_answers(hogs, MAX_CONNECTIONS - MAX_CONNECTIONS_PER_CLIENT) == \
            MAX_CONNECTIONS - MAX_CONNECTIONS_PER_CLIENT
    finally:
        for sock in hogs:
            sock.close()

    def served_from_there() -> bool:
        with _connect_from("127.0.0.2", address) as sock:
            sock.sendall(SEARCH)
            return statuses(read_until_closed(sock, 3.0)[0]) == [200]

    wait_for(served_from_there, timeout=10, what="127.0.0.2 to be served again once its clients left")


# --- 5. the token is its UTF-8 bytes -----------------------------------------------------------------

@pytest.mark.parametrize("encoding, status", [("utf-8", 200), ("latin-1", 401)])
def test_the_token_is_compared_as_its_utf8_bytes(guarded, encoding, status):
    _, address = guarded
    head = b"GET /health HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + TOKEN.encode(encoding) + b"\r\n\r\n"
    with socket.create_connection(address, timeout=30) as sock:
        sock.sendall(head)
        received, _ = read_until_closed(sock, 3.0)
    assert statuses(received) == [status], received[:300]
