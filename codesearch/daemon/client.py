"""Talking to a running daemon: light imports only (no torch, no chromadb)."""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict
from pathlib import Path
from typing import Any

SOCKET_NAME = "daemon.sock"


def socket_path(root: Path, index_dir: str | None) -> Path:
    from ..config import index_dir_for
    return index_dir_for(root, index_dir) / SOCKET_NAME


class DaemonError(RuntimeError):
    """The daemon answered with a JSON-RPC error."""


def call(path: Path, method: str, params: dict | None = None, timeout: float = 30.0) -> Any:
    """One JSON-RPC request over the Unix socket; raises OSError when no daemon listens."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
        sock.sendall(json.dumps(request).encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            data = sock.recv(1 << 16)
            if not data:
                break
            buf += data
    reply = json.loads(buf.decode("utf-8"))
    if "error" in reply:
        raise DaemonError(reply["error"].get("message", "daemon error"))
    return reply["result"]


def daemon_call(root: Path, index_dir: str | None, method: str, params: dict) -> Any | None:
    """The daemon's answer, or None when no daemon serves this repository."""
    if os.environ.get("CODESEARCH_NO_DAEMON"):
        return None
    path = socket_path(root, index_dir)
    if not path.exists():
        return None
    try:
        return call(path, method, params)
    except (OSError, ValueError):
        return None


def daemon_search(root: Path, index_dir: str | None, request) -> dict | None:
    params = asdict(request)
    params["filters"] = asdict(request.filters)
    params.pop("ranking", None)
    params.pop("retrievers", None)
    return daemon_call(root, index_dir, "search", params)
