"""JSON-RPC 2.0 over a Unix domain socket, one message per line, many clients at once: serves
the API's method table (`api.methods`) for one service.

A request may pass a file descriptor beside its line (SCM_RIGHTS) and ask, with the member
`"into_fd": N`, that its result be written there instead of into the reply: the CLI passes its
stdout, so a 40-MB grep answer goes from the daemon to the reader without being copied through
the socket and the CLI. The reply is then `{"written": BYTES, "start": ITS FIRST N BYTES}` (as
Latin-1 text), with `"error"` and `"errno"` when the writing failed (a reader that went away).
"""

from __future__ import annotations

import errno
import itertools
import json
import logging
import math
import os
import select
import socket
import socketserver
import stat
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..api.admission import Busy
from ..api.methods import UnknownMethod, call_json
from ..api.protocol import Service, ServiceUnavailable
from ..gc_pause import paused_gc
from ..text import text_problem
from ..wire import RequestError
from .limits import (
    BUSY_RETRY_AFTER_MS,
    IDLE_TIMEOUT_SECONDS,
    MAX_CONNECTIONS,
    MAX_MESSAGE_BYTES,
    BadMessage,
    BoundedThreads,
    parse_json,
)

log = logging.getLogger("codesearch.daemon")
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
RECEIVE_BYTES = 1 << 16
MAX_START_BYTES = 4096  # at most this much of a result written elsewhere comes back in the reply
UNAVAILABLE = -32000  # a server error: the method cannot be served now
BUSY = -32001  # too much work: try again after `data.retry_after_ms`


def _error(request_id: Any, code: int, message: str, data: dict | None = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}, ensure_ascii=False).encode() + b"\n"


def _result(request_id: Any, result: Iterable[bytes]) -> Iterator[bytes]:
    """A result reply in pieces, the result's JSON in the blocks the method writes (never joined:
    a grep answer may be 40 MB). It begins `{"jsonrpc": "2.0", "id": ID, "result": `: a client
    that passes results on cuts them out there (daemon.client.call_json)."""
    opening = f'{{"jsonrpc": "2.0", "id": {json.dumps(request_id, ensure_ascii=False)}, "result": '
    return itertools.chain((opening.encode(),), result, (b"}\n",))


def _reply_id(message: Any) -> Any:
    """The id a reply to `message` carries: its own when it can be written back (a finite number,
    or a string of UTF-8 text), else None (a lone surrogate would fail the reply's encoding)."""
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, str):
        return request_id if text_problem(request_id) is None else None
    if isinstance(request_id, (int, float)) and not isinstance(request_id, bool) and math.isfinite(request_id):
        return request_id
    return None


class _Handler(socketserver.StreamRequestHandler):
    timeout = IDLE_TIMEOUT_SECONDS

    def handle(self) -> None:
        server: RpcServer = self.server  # type: ignore[assignment]
        lines = _Lines(self.connection)
        while True:
            try:
                line, fds = lines.readline(MAX_MESSAGE_BYTES + 1)
            except (OSError, ValueError):
                lines.close()  # descriptors of a line that never ended
                return  # idle past the timeout, or gone
            try:
                if not line:
                    return
                if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
                    self._send(_error(None, INVALID_REQUEST, f"message larger than {MAX_MESSAGE_BYTES} bytes"))
                    return  # the rest of the oversized line cannot be framed: drop the client
                if not line.strip():
                    continue
                with paused_gc():  # a large answer is many small objects, made and written at once
                    data = server.dispatch(line, fds[0] if fds else None)
                if data is not None and not self._send(data):
                    return
            finally:
                for fd in fds:
                    os.close(fd)

    def _send(self, data: bytes | Iterable[bytes]) -> bool:
        try:
            for piece in (data,) if isinstance(data, bytes) else data:
                self.wfile.write(piece)
            self.wfile.flush()
            return True
        except (OSError, ValueError):
            return False  # the client went away mid-request


class _Lines:
    """The connection's request lines, each with the file descriptors that came with it. Read
    with recvmsg: a buffered file would read past a descriptor, and the kernel closes those."""

    MAX_FDS = 4

    def __init__(self, connection: socket.socket):
        self.connection = connection
        self.buffer = bytearray()
        self.scanned = 0  # no line break before this
        self.fds: list[int] = []

    def readline(self, limit: int) -> tuple[bytes, list[int]]:
        """The next line, its break included (at most `limit` bytes; what is left at the end
        without one), and the descriptors received while it was read (the caller closes them)."""
        while True:
            end = self.buffer.find(b"\n", self.scanned, limit)
            if end >= 0 or len(self.buffer) >= limit:
                cut = end + 1 if end >= 0 else limit
                return self._take(cut)
            self.scanned = len(self.buffer)
            data, fds, _, _ = socket.recv_fds(self.connection, RECEIVE_BYTES, self.MAX_FDS)
            self.fds += fds
            if not data:
                return self._take(len(self.buffer))
            self.buffer += data

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []

    def _take(self, cut: int) -> tuple[bytes, list[int]]:
        line, fds = bytes(self.buffer[:cut]), self.fds
        del self.buffer[:cut]
        self.scanned, self.fds = 0, []
        return line, fds


def _write_into(fd: int, request_id: Any, blocks: Iterable[bytes], head: int) -> Iterator[bytes]:
    """Write a result's blocks into a client's descriptor, then yield the reply that says how it
    went. A pipe is written through a description of its own, non-blocking (`_own_description`),
    so a reader that stops reading for IDLE_TIMEOUT_SECONDS ends the write instead of holding
    this thread and the answer for ever. A generator, run as the reply is sent: outside the
    request's pause of the collector, which a slow reader (`| less`) would otherwise keep off in
    the whole daemon."""
    written, start = 0, b""
    outcome: dict[str, Any] = {}
    passed, fd = fd, _own_description(fd)
    try:
        for block in blocks:
            if len(start) < head:
                start += block[:head - len(start)]
            view = memoryview(block)
            while view:
                try:
                    done = os.write(fd, view)
                except BlockingIOError:  # a descriptor its owner made non-blocking: wait until it drains
                    if not _writable(fd, IDLE_TIMEOUT_SECONDS):
                        raise TimeoutError(errno.ETIMEDOUT, "the reader stopped reading") from None
                    continue
                written += done
                view = view[done:]
    except OSError as exc:
        outcome = {"error": exc.strerror or str(exc), "errno": exc.errno}
    finally:
        if fd != passed:
            os.close(fd)
    summary = {"written": written, "start": start.decode("latin-1"), **outcome}
    yield from _result(request_id, (json.dumps(summary).encode(),))


def _own_description(fd: int) -> int:
    """For a pipe, the same pipe opened again through /proc, non-blocking: a new open file
    description, so the flag does not change the client's own (its stdout stays blocking). Any
    other descriptor as it is: a file or a terminal does not stall for ever."""
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            return os.open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:  # no /proc, or no reader left (ENXIO): the write itself then says so
        pass
    return fd


def _writable(fd: int, seconds: float) -> bool:
    """Whether `fd` takes writes within `seconds` (poll: select refuses descriptors past 1023)."""
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return bool(poller.poll(seconds * 1000))


class RpcServer(BoundedThreads, socketserver.UnixStreamServer):
    """One thread per connection, at most MAX_CONNECTIONS of them."""

    allow_reuse_address = True

    def __init__(self, path: Path, service: Service, listening: socket.socket | None = None):
        """`listening`: a socket already bound to `path` and listening (a dormant daemon's)."""
        self.path = Path(path)
        self.service = service
        if listening is not None:
            super().__init__(str(self.path), _Handler, bind_and_activate=False)
            self.socket.close()
            self.socket = listening
            return
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

    def dispatch(self, line: bytes, fd: int | None = None) -> bytes | Iterable[bytes] | None:
        """The reply to one request line (None for a notification); a result is written into
        `fd` instead when the request asks for it (`into_fd`) and passed one."""
        try:
            message = parse_json(line)
        except BadMessage as exc:
            if not exc.parsed:
                return _error(None, PARSE_ERROR, str(exc))
            return _error(_reply_id(exc.value), INVALID_REQUEST, str(exc))
        request_id = _reply_id(message)
        if (not isinstance(message, dict) or message.get("jsonrpc") != "2.0"
                or not isinstance(message.get("method"), str)):
            return _error(request_id, INVALID_REQUEST, "invalid request: expected a JSON-RPC 2.0 object with a method")
        if request_id is None and message.get("id") is not None:
            return _error(None, INVALID_REQUEST, "invalid request: an id is a number or a string of UTF-8 text")
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
        head = message.get("into_fd")
        if fd is not None and type(head) is int and 0 <= head <= MAX_START_BYTES:
            return _write_into(fd, request_id, result, head)
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
