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
from ..api.methods import UnknownMethod, call_json
from ..api.service import Service, ServiceUnavailable
from ..gc_pause import paused_gc
from ..wire import RequestError
from .limits import (
    BUSY_RETRY_AFTER_MS,
    IDLE_TIMEOUT_SECONDS,
    MAX_CONNECTIONS,
    MAX_MESSAGE_BYTES,
    BadMessage,
    BoundedThreads,
    json_depth,
    parse_json,
)

log = logging.getLogger("codesearch.daemon")
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
UNAVAILABLE = -32000  # a server error: the method cannot be served now
BUSY = -32001  # too much work: try again after `data.retry_after_ms`


def _error(request_id: Any, code: int, message: str, data: dict | None = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}, ensure_ascii=False).encode() + b"\n"


def _result(request_id: Any, result: bytes) -> tuple[bytes, bytes, bytes]:
    """A result reply in three pieces, the result's JSON as the method wrote it (not copied again:
    a grep answer may be 40 MB). It begins `{"jsonrpc": "2.0", "id": ID, "result": `: a client
    that passes results on cuts them out there (daemon.client.call_json)."""
    opening = f'{{"jsonrpc": "2.0", "id": {json.dumps(request_id, ensure_ascii=False)}, "result": '
    return opening.encode(), result, b"}\n"


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
            with paused_gc():  # a large answer is many small objects, made and written at once
                data = server.dispatch(line)
            if data is not None and not self._send(data):
                return

    def _send(self, data: bytes | tuple[bytes, ...]) -> bool:
        try:
            for piece in (data,) if isinstance(data, bytes) else data:
                self.wfile.write(piece)
            self.wfile.flush()
            return True
        except (OSError, ValueError):
            return False  # the client went away mid-request


class RpcServer(BoundedThreads, socketserver.UnixStreamServer):
    """One thread per connection, at most MAX_CONNECTIONS of them."""

    allow_reuse_address = True

    def __init__(self, path: Path, service: Service):
        self.path = Path(path)
        self.service = service
        if self.path.exists():
            self.path.unlink()
        old_umask = os.umask(0o177)  # the socket is born 0600
        try:
            super().__init__(str(self.path), _Handler)
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)

    def refuse(self, request: Any) -> None:
        request.sendall(_error(None, BUSY, f"busy: {MAX_CONNECTIONS} connections are open",
                               {"retry_after_ms": BUSY_RETRY_AFTER_MS}))

    def dispatch(self, line: bytes) -> bytes | tuple[bytes, ...] | None:
        try:
            message = parse_json(line)
        except BadMessage as exc:
            if not exc.parsed:
                return _error(None, PARSE_ERROR, str(exc))
            shallow_id = isinstance(exc.value, dict) and json_depth(exc.value.get("id"), 1) <= 1
            return _error(exc.value.get("id") if shallow_id else None, INVALID_REQUEST, str(exc))
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
            result = call_json(self.service, message["method"], params)
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
        return _result(request_id, result)

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
