"""HTTP/1.1 over the API's method table: `POST /v1/codebase/<method>` with the request as a JSON
body (GET for methods that take none), `GET /health` and `GET /openapi.json`.

The same records, checks and answers as the socket; only the framing and the status codes are
HTTP's. It binds loopback unless a bearer token is configured, and on loopback it answers only
requests addressed to a loopback host name (a web page cannot reach it through DNS rebinding),
and only JSON requests (a page's form post cannot trigger an index run).

A refused request closes its connection, so bytes it sent and nobody read (a body, or a second
request hidden in one) are never taken for the next request. A request's framing must be
unambiguous: one Content-Length, no Transfer-Encoding. Slow clients are bounded twice: each request
must arrive whole within REQUEST_DEADLINE_SECONDS, and one address holds at most
MAX_CONNECTIONS_PER_CLIENT connections, so its slow clients cannot take every thread.
"""

from __future__ import annotations

import errno
import hmac
import io
import json
import logging
import socket
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from ..api.admission import Busy
from ..api.methods import call
from ..api.protocol import Service, ServiceUnavailable
from ..daemon.http_address import HttpAddress, HttpConfigError, check_exposure
from ..gc_pause import paused_gc
from ..paths import OutsideRoot
from ..wire import NotFound, RequestError
from . import limits
from .openapi import OPENAPI_PATH, Route, openapi_document, routes

log = logging.getLogger("codesearch.http")
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
# a request's line, headers and body must all arrive within this many seconds of its first byte (a
# connection's first request: of the accept); the wait between keep-alive requests is limits.IDLE_TIMEOUT_SECONDS
REQUEST_DEADLINE_SECONDS = 20.0
MAX_CONNECTIONS_PER_CLIENT = 32  # open from one address (all of a host's local clients share one); past it: busy
BUSY_SEND_SECONDS = 1.0  # how long the accepting thread waits to hand a refused client its 503


_CODES = {400: "bad_request", 405: "method_not_allowed", 408: "timeout", 414: "too_large", 431: "too_large"}


class _Reply(Exception):
    """An answer other than 200, raised from anywhere in a request's handling."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": str(self)}}


def _encode(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class _RequestClock(io.RawIOBase):
    """A connection's bytes, read so that each request arrives whole within `request_seconds`: a
    socket timeout bounds one read only, which a client sending a byte a minute never meets.
    Between requests a read waits up to `idle_seconds`; a request's clock starts at its first
    byte (a connection's first request's: at the accept)."""

    def __init__(self, sock: socket.socket, idle_seconds: float, request_seconds: float):
        super().__init__()
        self._sock = sock
        self._idle_seconds = idle_seconds
        self._request_seconds = request_seconds
        self._deadline: float | None = time.monotonic() + request_seconds

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._deadline is None:
            wait = self._idle_seconds
        else:
            wait = self._deadline - time.monotonic()
            if wait <= 0:
                raise TimeoutError(f"the request did not arrive whole within {self._request_seconds:g} s")
        self._sock.settimeout(wait)
        count = self._sock.recv_into(buffer)
        if count and self._deadline is None:
            self._deadline = time.monotonic() + self._request_seconds
        return count

    def request_read(self) -> None:
        """The request is in: the next one's clock starts at its first byte, and the answer is
        written under the idle timeout, not under what was left of this request's time."""
        self._deadline = None
        self._sock.settimeout(self._idle_seconds)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a client's next request skips the TCP handshake
    # headers and body go out as two writes: without TCP_NODELAY, Nagle holds the body back until
    # the client's delayed ACK of the headers (40 ms on Linux), on every request
    disable_nagle_algorithm = True
    timeout = limits.IDLE_TIMEOUT_SECONDS
    server: HttpServer
    server_version = "codesearch"
    sys_version = ""
    clock: _RequestClock

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # replaced by a reader that keeps each request's deadline
        self.clock = _RequestClock(self.connection, limits.IDLE_TIMEOUT_SECONDS, self.server.request_seconds)
        self.rfile = io.BufferedReader(self.clock)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_HEAD(self) -> None:
        self._serve("HEAD")

    def do_OPTIONS(self) -> None:
        self._serve("OPTIONS")

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The base class's own errors (a bad request line, headers too large, a method it has
        no handler for) as JSON too; a method it has no handler for gets what any other method
        the endpoint does not take gets: 405 with `Allow` (404 where there is no endpoint)."""
        reply = _Reply(code, _CODES.get(code, "error"), message or explain or "")
        if code == 501:
            try:
                route = self._route(self.command)
            except _Reply as refused:
                reply = refused
            else:
                reply = _Reply(405, _CODES[405], f"{self.command} is not a method this server takes",
                               {"Allow": route.verb})
        self.close_connection = True
        self._send(reply.status, _encode(reply.body()), reply.headers)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def _serve(self, verb: str) -> None:
        headers: dict[str, str] = {}
        try:
            route, params = self._read_request(verb)
            self.clock.request_read()
            with paused_gc():  # a large answer is many small objects, made at once
                status, data = 200, _encode(self._answer(route, params))
        except _Reply as reply:
            self.close_connection = True  # what the client sent and nobody read must never pass for a request
            status, data, headers = reply.status, _encode(reply.body()), reply.headers
        self._send(status, data, headers)

    def _read_request(self, verb: str) -> tuple[Route, Any]:
        """The route and parameters of a request to answer, or _Reply. The framing comes first:
        until the end of the request is certain, nothing in it can be trusted."""
        length = self._body_length()
        self._check_host()
        self._check_token()
        route = self._route(verb)
        if verb == "POST":
            return route, self._body(length)
        if length:
            raise _Reply(400, "bad_request", f"a {verb} request takes no body")
        return route, {}

    def _route(self, verb: str) -> Route:
        path = self.path.split("?", 1)[0]
        route = self.server.routes.get(path)
        if route is None:
            raise _Reply(404, "not_found", f"no such endpoint: {path}; see GET {OPENAPI_PATH}")
        if verb != route.verb:
            raise _Reply(405, "method_not_allowed", f"{path} takes {route.verb}, not {verb}", {"Allow": route.verb})
        return route

    def _answer(self, route: Route, params: Any) -> Any:
        if route.method is None:  # the description of this API
            return self.server.openapi()
        return self._call(route.method, params)

    def _body_length(self) -> int:
        """The length of the body, from its one Content-Length (0 without). Framing that two
        parsers could read two ways is refused: two lengths, a Transfer-Encoding, a header line
        the parser dropped (`Content-Length : 5`), a length that is not plain digits."""
        headers = self.headers
        if headers.defects:
            raise _Reply(400, "bad_request", "a header line is malformed (a space before its colon?)")
        if len(headers.get_all("Host") or ()) > 1:
            raise _Reply(400, "bad_request", "more than one Host header")
        lengths = headers.get_all("Content-Length") or []
        codings = headers.get_all("Transfer-Encoding") or []
        if codings and lengths:
            raise _Reply(400, "bad_request", "both Transfer-Encoding and Content-Length: the body's end is ambiguous")
        if codings:
            if ",".join(codings).rsplit(",", 1)[-1].strip(" \t").lower() == "chunked":
                raise _Reply(411, "length_required", "send the body with a Content-Length, not chunked")
            raise _Reply(400, "bad_request", "Transfer-Encoding is not supported; send the body with a Content-Length")
        if len(lengths) > 1:
            raise _Reply(400, "bad_request", "more than one Content-Length header")
        value = lengths[0].strip(" \t") if lengths else "0"
        if not (value.isascii() and value.isdigit()):
            raise _Reply(400, "bad_request", f"Content-Length is not a number of bytes: {value[:40]!r}")
        length = int(value) if len(value) <= 20 else limits.MAX_MESSAGE_BYTES + 1
        if length > limits.MAX_MESSAGE_BYTES:
            raise _Reply(413, "too_large", f"the body is larger than {limits.MAX_MESSAGE_BYTES} bytes")
        return length

    def _check_host(self) -> None:
        if self.server.token or not self.server.address.loopback:
            return
        host = self.headers.get("Host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if name.lower() not in LOOPBACK_NAMES:
            raise _Reply(403, "forbidden", f"this server answers requests for localhost only, not for {host!r}")

    def _check_token(self) -> None:
        """The token as the client's UTF-8 bytes: http.server hands header values over decoded
        as Latin-1, so encoding them back gives the bytes sent."""
        if not self.server.token:
            return
        scheme, _, value = self.headers.get("Authorization", "").partition(" ")
        try:
            given = value.strip(" \t").encode("latin-1")
        except UnicodeEncodeError:
            given = b""
        if scheme.lower() != "bearer" or not hmac.compare_digest(given, self.server.token_bytes):
            raise _Reply(401, "unauthorized", "a valid `Authorization: Bearer TOKEN` header is required",
                         {"WWW-Authenticate": "Bearer"})

    def _body(self, length: int) -> Any:
        """The JSON body (`{}` when empty). A POST must say application/json, body or not: a web
        page can send a form or text/plain cross-origin without asking, but not JSON."""
        kind = self.headers.get("Content-Type", "").split(";", 1)[0].strip(" \t").lower()
        if kind != "application/json":
            raise _Reply(415, "unsupported_media_type",
                         "a POST must carry Content-Type: application/json, even without a body")
        data = self.rfile.read(length) if length else b""
        if len(data) < length:
            raise _Reply(400, "bad_request", f"the body ended after {len(data)} of its {length} bytes")
        if not data.strip():
            return {}
        try:
            return limits.parse_json(data)
        except limits.BadMessage as exc:
            raise _Reply(400, "bad_request", str(exc)) from None

    def _call(self, method: str, params: Any) -> Any:
        if not isinstance(params, dict):
            raise _Reply(400, "bad_request", "the body must be a JSON object")
        try:
            return call(self.server.service, method, params)
        except OutsideRoot as exc:
            raise _Reply(403, "forbidden", str(exc)) from None
        except NotFound as exc:
            raise _Reply(404, "not_found", str(exc)) from None
        except RequestError as exc:
            raise _Reply(400, "bad_request", str(exc)) from None
        except Busy as exc:
            wait = str(max(1, round(exc.retry_after_ms / 1000)))
            raise _Reply(503, "busy", str(exc), {"Retry-After": wait}) from None
        except ServiceUnavailable as exc:
            raise _Reply(503, "unavailable", str(exc), {"Retry-After": "1"}) from None
        except Exception as exc:  # never let one request take the daemon down
            log.exception("HTTP request %s failed", method)
            raise _Reply(500, "internal", f"internal error: {exc.__class__.__name__}") from None

    def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        except OSError:
            self.close_connection = True  # the client went away


class HttpServer(limits.BoundedThreads, HTTPServer):
    """The HTTP front-end of one service; `serve_in_thread`, then `close`."""

    request_seconds = REQUEST_DEADLINE_SECONDS
    max_per_client = MAX_CONNECTIONS_PER_CLIENT

    def __init__(self, address: HttpAddress, service: Service, token: str | None = None):
        check_exposure(address, token)
        self.service = service
        self.token = token or None
        self.token_bytes = (token or "").encode("utf-8")
        self.routes: dict[str, Route] = routes()
        self.address_family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
        self._clients: Counter[str] = Counter()  # open connections by client address
        self._client_of: dict[Any, str] = {}
        self._clients_lock = threading.Lock()
        try:
            super().__init__((address.host, address.port), _Handler)
        except OSError as exc:  # one line that says which address and what to do, for every server started
            if exc.errno == errno.EADDRINUSE:
                raise HttpConfigError(f"{address} is already in use: choose another port (--http HOST:PORT)") from None
            if exc.errno == errno.EADDRNOTAVAIL:
                raise HttpConfigError(f"{address.host} is not an address of this machine") from None
            raise
        self.address = HttpAddress(address.host, self.server_address[1])  # the real port when 0 was asked
        self._openapi: dict | None = None

    def openapi(self) -> dict:
        if self._openapi is None:
            self._openapi = openapi_document(f"http://{self.address}", secured=bool(self.token))
        return self._openapi

    def verify_request(self, request: Any, client_address: Any) -> bool:
        """Admit a connection unless its address already holds max_per_client: one address's
        slow or idle clients then take their share of the threads, not all of them."""
        host = str(client_address[0])
        with self._clients_lock:
            crowded = self._clients[host] >= self.max_per_client
            if not crowded:
                self._clients[host] += 1
                self._client_of[request] = host
        if crowded:
            self._busy(request, f"busy: {self.max_per_client} connections from {host} are open")
        return not crowded

    def shutdown_request(self, request: Any) -> None:
        """Every admitted connection ends here (served, or refused past limits.MAX_CONNECTIONS)."""
        with self._clients_lock:
            host = self._client_of.pop(request, None)
            if host is not None:
                self._clients[host] -= 1
                if self._clients[host] <= 0:
                    del self._clients[host]
        super().shutdown_request(request)

    def refuse(self, request: Any) -> None:
        self._busy(request, f"busy: {limits.MAX_CONNECTIONS} connections are open")

    def _busy(self, request: Any, message: str) -> None:
        body = json.dumps({"error": {"code": "busy", "message": message}})
        try:
            request.settimeout(BUSY_SEND_SECONDS)
            request.sendall((f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                             f"Retry-After: {max(1, limits.BUSY_RETRY_AFTER_MS // 1000)}\r\nConnection: close\r\n"
                             f"Content-Length: {len(body)}\r\n\r\n{body}").encode())
        except OSError:
            pass

    def serve_in_thread(self) -> None:
        threading.Thread(target=self.serve_forever, name="http", daemon=True).start()

    def close(self) -> None:
        self.shutdown()
        self.server_close()
