"""Talking to a running daemon: the API's methods over its socket, with typed answers.
Light imports only (no torch, no chromadb, no NetworkX; not even typing, pathlib or dataclasses
until a typed answer is asked for): the CLI's fast path sends a query with `call_json` alone."""

from __future__ import annotations

import errno
import json
import os
import socket
import time

from ..locations import SOCKET_NAME as SOCKET_NAME  # the daemon's own name for it; imported from here too
from ..locations import index_folder

TYPE_CHECKING = False  # typing is not imported at run time: it is a visible share of a CLI process's CPU
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from typing import Any, TypeVar

    from _typeshed import SupportsWrite

    from ..wire import Record
    from ..workspace import Workspace

    R = TypeVar("R", bound=Record)
    T = TypeVar("T")

NO_DAEMON_ENV = "CODESEARCH_NO_DAEMON"  # set: no front-end talks to or starts a daemon
INVALID_PARAMS, BUSY = -32602, -32001
INDEX_REPLY_SLACK_SECONDS = 30.0  # an index request's reply may come this long after its own timeout
BUSY_RETRY_SECONDS = 3.0  # a busy daemon is asked again for this long before the caller is told
REPLY_SECONDS = {"grep": 60.0}  # a grep may take the engine's 30 s, and a big answer time to send
RECEIVE_BYTES = 1 << 20
# how the daemon's socket server begins a result reply to a request of id 1 (transports/socket.py)
RESULT_OPENING = b'{"jsonrpc": "2.0", "id": 1, "result": '
WRITTEN_OPENING = RESULT_OPENING + b'{"written": '  # ... of a result written into the passed descriptor


def socket_path(root: Path, index_dir: str | None) -> Path:
    from pathlib import Path
    return Path(socket_file(root, index_dir))


def socket_file(root: str | os.PathLike, index_dir: str | None) -> str:
    return os.path.join(index_folder(root, index_dir), SOCKET_NAME)


class DaemonBusy(RuntimeError):
    """The daemon stayed too busy to answer (it said so, or its listen queue was full)."""


class DaemonError(RuntimeError):
    """The daemon answered with a JSON-RPC error; `code` says which kind."""

    def __init__(self, message: str, code: int, retry_after_ms: int = 0):
        super().__init__(message)
        self.code = code
        self.retry_after_ms = retry_after_ms

    @property
    def bad_request(self) -> bool:
        return self.code == INVALID_PARAMS


class AnswerBrokeOff(DaemonError):
    """An answer that was being written out stopped midway: part of it may be written already,
    so it is not asked for again."""


def call(path: str | os.PathLike, method: str, params: dict | None = None, timeout: float = 30.0) -> Any:
    """One JSON-RPC request over the Unix socket; raises OSError when no daemon listens."""
    from ..gc_pause import paused_gc
    with paused_gc():
        return _reply(_exchange(path, method, params, timeout))["result"]


def call_json(path: str | os.PathLike, method: str, params: dict | None = None, timeout: float = 30.0) -> bytes:
    """The same request, its result as the JSON text (UTF-8) the daemon wrote: cut out of the
    reply's pieces as they came when the reply is a result (the daemon writes `RESULT_OPENING`
    first), read and written again otherwise. One copy of a 40-MB answer, not three."""
    parts = _receive(path, method, params, timeout)
    first, last = parts[0], parts[-1]
    if first.startswith(RESULT_OPENING) and last.endswith(b"}\n") and len(parts) > 1 and len(last) >= 2:
        return b"".join((first[len(RESULT_OPENING):], *parts[1:-1], last[:-2]))
    return _result_json(parts)


def call_json_into(path: str | os.PathLike, method: str, params: dict | None, timeout: float,
                   out: SupportsWrite[bytes | memoryview], head: int, out_fd: int | None = None) -> bytes:
    """call_json's result written to `out` as it comes instead of held whole (a 40-MB grep answer
    is passed on while the daemon still sends it); its first `head` bytes are returned. An error
    reply raises before anything is written; a reply that breaks off after that raises DaemonError.
    `out_fd`, the descriptor under `out` (flushed), is passed to the daemon, which writes the
    result there itself; then the daemon's time to write is not bounded, as a reader may be slow.
    A daemon that does not write it (one of an older version) sends it as before. Once the
    descriptor is passed, a reply that breaks off raises AnswerBrokeOff: some of it may be written."""
    with _connected(path, timeout) as sock:
        _send_request(sock, method, params, out_fd, head)
        if out_fd is None:
            return _pass_on(_reply_pieces(sock), out, head)
        sock.settimeout(None)  # the daemon writes at the reader's pace, then replies
        try:
            return _pass_on(_reply_pieces(sock), out, head)
        except BrokenPipeError:
            raise  # the reader of `out` went away: not the daemon's answer that broke
        except (ConnectionError, TimeoutError) as exc:
            raise AnswerBrokeOff(f"the daemon's answer broke off ({exc})", 0) from None


def _pass_on(pieces: Iterator[bytes], out: SupportsWrite[bytes | memoryview], head: int) -> bytes:
    """call_json_into's reading of the reply."""
    first = b""
    enough = max(len(RESULT_OPENING) + head, len(WRITTEN_OPENING))  # to tell the reply's form
    for data in pieces:
        first += data
        if len(first) >= enough or first.endswith(b"\n"):
            break
    if first.startswith(WRITTEN_OPENING):  # written into the descriptor: what came of it
        summary = json.loads(_result_json([first, *pieces]))
        if summary.get("errno") == errno.EPIPE:
            raise BrokenPipeError(errno.EPIPE, summary["error"])  # the reader went away (`| head`)
        if "error" in summary:
            raise AnswerBrokeOff(f"writing the answer failed: {summary['error']}", 0)
        return summary["start"].encode("latin-1")
    if not first.startswith(RESULT_OPENING):  # an error, or a reply of another form: read whole
        result = _result_json([first, *pieces])
        out.write(result)
        return result[:head]
    body, held = first[len(RESULT_OPENING):], b""  # the last two bytes seen: the reply's closing "}\n"
    try:
        for data in _chain(body, pieces):
            if len(data) < 2:  # too short to hold the last two bytes back alone
                held += data
                out.write(held[:-2])
                held = held[-2:]
                continue
            out.write(held)
            out.write(memoryview(data)[:-2])
            held = data[-2:]
    except BrokenPipeError:
        raise  # the reader of `out` went away (`| head`)
    except OSError as exc:
        raise AnswerBrokeOff(f"the daemon's answer broke off ({exc})", 0) from None
    if held != b"}\n":
        raise AnswerBrokeOff("the daemon's answer broke off", 0)
    return body[:head]


def _result_json(parts: list[bytes]) -> bytes:
    data = b"".join(parts)
    if data.startswith(RESULT_OPENING) and data.endswith(b"}\n"):
        return data[len(RESULT_OPENING):-2]
    from ..gc_pause import paused_gc
    with paused_gc():
        return json.dumps(_reply(data)["result"], ensure_ascii=False).encode()


def _exchange(path: str | os.PathLike, method: str, params: dict | None, timeout: float) -> bytes:
    """Send one request (id 1) and read its one-line reply."""
    return b"".join(_receive(path, method, params, timeout))


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def _receive(path: str | os.PathLike, method: str, params: dict | None, timeout: float) -> list[bytes]:
    """Send one request (id 1); its one-line reply as the pieces it came in."""
    return list(_pieces(path, method, params, timeout))


def _pieces(path: str | os.PathLike, method: str, params: dict | None, timeout: float) -> Iterator[bytes]:
    """Send one request (id 1); its one-line reply, piece by piece as it comes. Raises
    ConnectionError when the daemon hangs up before the line ends."""
    with _connected(path, timeout) as sock:
        _send_request(sock, method, params)
        yield from _reply_pieces(sock)


def _connected(path: str | os.PathLike, timeout: float) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(str(path))
    except BaseException:
        sock.close()
        raise
    return sock


def _send_request(sock: socket.socket, method: str, params: dict | None, out_fd: int | None = None,
                  head: int = 0) -> None:
    """Request id 1. With `out_fd`, the request passes that descriptor with its first bytes
    (SCM_RIGHTS) and asks for its result to be written there, `head` bytes of it back."""
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    if out_fd is not None:
        request["into_fd"] = head
    line = json.dumps(request).encode() + b"\n"
    try:
        sent = 0 if out_fd is None else socket.send_fds(sock, [line], [out_fd])
        sock.sendall(line[sent:])
    except (BrokenPipeError, ConnectionResetError):
        pass  # a busy daemon answers at once and hangs up: its answer may be waiting to be read


def _reply_pieces(sock: socket.socket) -> Iterator[bytes]:
    """The one-line reply, piece by piece as it comes."""
    data = b""
    while not data.endswith(b"\n"):
        try:
            data = sock.recv(RECEIVE_BYTES)
        except ConnectionResetError:
            data = b""
        if not data:
            raise ConnectionError("the daemon closed the connection without an answer")
        yield data


def _reply(data: bytes) -> dict:
    """The reply read; an error reply raised as DaemonError."""
    reply = json.loads(data)
    if "error" in reply:
        error = reply["error"]
        details = error.get("data") or {}
        raise DaemonError(error.get("message", "daemon error"), int(error.get("code", 0)),
                          int(details.get("retry_after_ms", 0)))
    return reply


class DaemonClient:
    """The service of a running daemon: the same methods, and the same typed answers, as the
    service in process. Transport failures raise OSError; error replies raise DaemonError.

    Its methods are made from the API's method table (`api.methods`) when first asked for, each
    importing only its answer's record: a CLI process that only searches builds no other record
    classes (each costs about a millisecond to create)."""

    def __init__(self, sock: str | os.PathLike, timeout: float = 30.0):
        self.sock = sock
        self.timeout = timeout

    def _call(self, name: str, params: dict, answer: type[R], timeout: float) -> R:
        from ..gc_pause import paused_gc

        def read() -> R:
            result = call(self.sock, name, params, timeout)
            with paused_gc():
                return answer.from_dict(result, name)
        return self._retrying(read)

    def call_json(self, name: str, params: dict, timeout: float | None = None) -> bytes:
        """The answer of method `name` as the daemon wrote it, JSON text: for a front-end that only
        passes it on (reading a common word's matches into records, and writing them out again,
        is time such a front-end need not spend; docs/benchmarks.md)."""
        seconds = timeout or REPLY_SECONDS.get(name, self.timeout)
        return self._retrying(lambda: call_json(self.sock, name, params, seconds))

    def _retrying(self, ask: Callable[[], T]) -> T:
        """Busy answers are retried for BUSY_RETRY_SECONDS (as the daemon asks), then DaemonBusy."""
        deadline = time.monotonic() + BUSY_RETRY_SECONDS
        while True:
            try:
                return ask()
            except DaemonError as exc:
                if exc.code != BUSY:
                    raise
                wait = exc.retry_after_ms / 1000
                problem = str(exc)
            except BlockingIOError:  # the listen queue is full
                wait, problem = 0.1, "its listen queue is full"
            if time.monotonic() + wait > deadline:
                raise DaemonBusy(f"the daemon is busy ({problem})")
            time.sleep(wait)

    def grep_json_into(self, params: dict, out: SupportsWrite[bytes | memoryview], head: int,
                       out_fd: int | None = None) -> bytes:
        """The answer to the grep request `params` (its wire form), its JSON written to `out` as it
        comes, or by the daemon into `out_fd` (see call_json_into); its first `head` bytes."""
        return self._retrying(lambda: call_json_into(self.sock, "grep", params, REPLY_SECONDS["grep"], out, head,
                                                     out_fd))

    def __getattr__(self, name: str) -> Callable[..., Any]:
        """The Service method `name`, asked of the daemon: the API's method table says which
        method carries it and which record its answer is read into. AttributeError for a name
        that is not a Service method."""
        if name.startswith("_"):
            raise AttributeError(name)
        from ..api.methods import SERVICE_METHODS, method_for
        if name not in SERVICE_METHODS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

        def ask(request: Record | None = None) -> Any:
            method = method_for(name, request)
            params = request.to_dict() if request is not None else {}
            if name != method.service:  # the answer's JSON text, as the daemon wrote it
                return (self.call_json(method.name, params),)
            return self._call(method.name, params, method.answer, self._reply_seconds(method.name, request))
        ask.__name__ = name
        setattr(self, name, ask)  # asked for once per client
        return ask

    def _reply_seconds(self, name: str, request: Record | None) -> float:
        """How long a reply may take: a request that waits for work up to its own `timeout` gets
        that and INDEX_REPLY_SLACK_SECONDS more."""
        waits = getattr(request, "timeout", None)
        return REPLY_SECONDS.get(name) or (waits + INDEX_REPLY_SLACK_SECONDS if waits is not None else self.timeout)


def connect(root: str | os.PathLike, index_dir: str | None) -> DaemonClient | None:
    """A client of the daemon serving this repository, or None when no socket is there (or
    CODESEARCH_NO_DAEMON is set)."""
    if os.environ.get(NO_DAEMON_ENV):
        return None
    path = socket_file(root, index_dir)
    return DaemonClient(path) if os.path.exists(path) else None


def connect_workspace(workspace: Workspace) -> DaemonClient | None:
    """A client of the daemon serving this workspace (found by its key), or None."""
    if os.environ.get(NO_DAEMON_ENV):
        return None
    path = workspace.state_dir() / SOCKET_NAME
    return DaemonClient(path) if path.exists() else None
