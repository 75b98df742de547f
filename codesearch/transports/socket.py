"""JSON-RPC 2.0 over a Unix domain socket, one message per line, many clients at once: serves
the API's method table (`api.methods`) for one service."""

from __future__ import annotations

import json
import logging
import os
import socketserver
import threading
from pathlib import Path
from typing import Any

from ..api.admission import Busy
from ..api.methods import UnknownMethod, call
from ..api.service import Service, ServiceUnavailable
from ..wire import RequestError

log = logging.getLogger("codesearch.daemon")
MAX_MESSAGE_BYTES = 1 << 20
MAX_JSON_DEPTH = 32
MAX_CONNECTIONS = 128  # past this, a new client is told the daemon is busy (no thread is started)
IDLE_TIMEOUT_SECONDS = 120  # an idle client is dropped, its thread freed; clients reconnect
LISTEN_BACKLOG = 1024  # a burst of clients connecting at once waits here, not refused
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
UNAVAILABLE = -32000  # a server error: the method cannot be served now
BUSY = -32001  # too much work: try again after `data.retry_after_ms`
BUSY_RETRY_AFTER_MS = 200


def _error(request_id: Any, code: int, message: str, data: dict | None = None) -> dict:
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _encode(reply: dict) -> bytes:
    return json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n"


def _depth(value: Any, limit: int) -> int:
    """How deeply `value` nests (iteratively: no recursion on hostile input), up to limit + 1."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if deepest > limit:
                return deepest
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


class _Handler(socketserver.StreamRequestHandler):
    timeout = IDLE_TIMEOUT_SECONDS

    def handle(self) -> None:
        server: RpcServer = self.server  # type: ignore[assignment]
        while True:
            try:
                line = self.rfile.readline(MAX_MESSAGE_BYTES + 1)
            except (OSError, ValueError):
                return  # idle past the timeout, or gone
            if not line:
                return
            if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
                self._send(_error(None, INVALID_REQUEST, f"message larger than {MAX_MESSAGE_BYTES} bytes"))
                return  # the rest of the oversized line cannot be framed: drop the client
            if not line.strip():
                continue
            reply = server.dispatch(line)
            if reply is not None and not self._send(reply):
                return

    def _send(self, reply: dict) -> bool:
        try:
            self.wfile.write(_encode(reply))
            self.wfile.flush()
            return True
        except (OSError, ValueError):
            return False  # the client went away mid-request


class RpcServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """One thread per connection, at most MAX_CONNECTIONS of them."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, path: Path, service: Service):
        self.path = Path(path)
        self.service = service
        self.connections = 0
        self._count_lock = threading.Lock()
        if self.path.exists():
            self.path.unlink()
        old_umask = os.umask(0o177)  # the socket is born 0600
        try:
            super().__init__(str(self.path), _Handler)
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._count_lock:
            full = self.connections >= MAX_CONNECTIONS
            if not full:
                self.connections += 1
        if full:  # answer at once, on this thread, and hang up
            try:
                request.settimeout(1.0)
                request.sendall(_encode(_error(None, BUSY, f"busy: {MAX_CONNECTIONS} connections are open",
                                               {"retry_after_ms": BUSY_RETRY_AFTER_MS})))
            except OSError:
                pass
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._count_lock:
                self.connections -= 1

    def dispatch(self, line: bytes) -> dict | None:
        try:
            message = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # ValueError: 5,000-digit numbers too
            return _error(None, PARSE_ERROR, f"parse error: {str(exc)[:200]}")
        if _depth(message, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            return _error(message.get("id") if isinstance(message, dict) and _depth(message.get("id"), 1) <= 1
                          else None, INVALID_REQUEST, f"invalid request: nested deeper than {MAX_JSON_DEPTH}")
        if (not isinstance(message, dict) or message.get("jsonrpc") != "2.0"
                or not isinstance(message.get("method"), str)):
            return _error(message.get("id") if isinstance(message, dict) else None, INVALID_REQUEST,
                          "invalid request: expected a JSON-RPC 2.0 object with a method")
        request_id = message.get("id")
        params = message.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return _error(request_id, INVALID_PARAMS, "params must be an object")
        try:
            result = call(self.service, message["method"], params)
        except UnknownMethod as exc:
            return _error(request_id, METHOD_NOT_FOUND, str(exc))
        except RequestError as exc:
            return _error(request_id, INVALID_PARAMS, f"invalid params: {exc}")
        except Busy as exc:
            return _error(request_id, BUSY, str(exc), {"retry_after_ms": exc.retry_after_ms})
        except ServiceUnavailable as exc:
            return _error(request_id, UNAVAILABLE, str(exc))
        except Exception as exc:  # never let one request take the daemon down
            log.exception("request %s failed", message["method"])
            return _error(request_id, INTERNAL_ERROR, f"internal error: {exc}")
        if "id" not in message:
            return None  # a notification gets no answer
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def serve_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="rpc", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        self.shutdown()
        self.server_close()
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
