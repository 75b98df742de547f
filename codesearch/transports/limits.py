"""What every network-facing transport refuses or bounds, in one place: message size, JSON
nesting, open connections (one thread each) and idle clients."""

from __future__ import annotations

import json
import socketserver
import threading
from typing import Any

from ..wire import json_depth

MAX_MESSAGE_BYTES = 1 << 20
MAX_JSON_DEPTH = 32
MAX_CONNECTIONS = 128  # past this, a new client is told the server is busy (no thread is started)
IDLE_TIMEOUT_SECONDS = 120  # an idle client is dropped, its thread freed; clients reconnect
LISTEN_BACKLOG = 1024  # a burst of clients connecting at once waits here, not refused
BUSY_RETRY_AFTER_MS = 200


class BadMessage(ValueError):
    """A message that is not JSON (`parsed` False), or nests deeper than MAX_JSON_DEPTH (`value`
    holds it then: a reply may still name its id)."""

    def __init__(self, message: str, parsed: bool = False, value: Any = None):
        super().__init__(message)
        self.parsed = parsed
        self.value = value


def parse_json(data: bytes) -> Any:
    """The JSON value of `data`, or BadMessage saying in a line what is wrong."""
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # ValueError: 5,000-digit numbers too
        raise BadMessage(f"parse error: {str(exc)[:200]}") from None
    if json_depth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise BadMessage(f"invalid request: nested deeper than {MAX_JSON_DEPTH}", parsed=True, value=value)
    return value


class BoundedThreads(socketserver.ThreadingMixIn):
    """One thread per connection, at most MAX_CONNECTIONS of them; a connection past that is
    answered by `refuse` on the accepting thread and closed."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG
    max_connections = MAX_CONNECTIONS

    def __init__(self, *args: Any, **kwargs: Any):
        self.connections = 0
        self._count_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def refuse(self, request: Any) -> None:
        """Tell a client over the limit to come back later (a transport's own words)."""

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._count_lock:
            full = self.connections >= self.max_connections
            if not full:
                self.connections += 1
        if full:
            try:
                request.settimeout(1.0)
                self.refuse(request)
            except OSError:
                pass
            self.shutdown_request(request)  # type: ignore[attr-defined]
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._count_lock:
                self.connections -= 1
