"""Everything a client of a running daemon may import, and nothing heavier: where a repository's
daemon listens, whether daemons are wanted at all, the socket client and its errors, and the
words a request is checked with before it is sent.

Importing this loads no index, model or watcher code, nor dataclasses, typing or pathlib: the
CLI's fast path answers a query through it alone (tests/daemon/test_daemon.py holds it to that).
A client that wants typed answers gets their records from the method table when it asks.
"""

from __future__ import annotations

from ..locations import command_root
from ..text import text_problem
from ..vocabulary import ALL_KINDS
from .client import NO_DAEMON_ENV, AnswerBrokeOff, DaemonBusy, DaemonClient, DaemonError, socket_file

__all__ = ["ALL_KINDS", "NO_DAEMON_ENV", "AnswerBrokeOff", "DaemonBusy", "DaemonClient", "DaemonError", "command_root",
           "socket_file", "text_problem"]
