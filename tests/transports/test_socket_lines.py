"""The socket server's request lines and the descriptors passed beside them (transports/socket.py),
over a real socket pair."""

from __future__ import annotations

import os
import socket

import pytest

from codesearch.transports.socket import _Lines


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


@pytest.fixture()
def pair():
    server, client = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    yield server, client
    server.close()
    client.close()


def test_each_line_comes_with_the_descriptors_sent_beside_it(pair):
    server, client = pair
    read_end, write_end = os.pipe()
    try:
        socket.send_fds(client, [b'{"a": 1}\n'], [write_end])
        client.sendall(b'{"b": 2}\n{"c"')
        lines = _Lines(server)
        first, fds = lines.readline(1000)
        assert first == b'{"a": 1}\n' and len(fds) == 1
        os.write(fds[0], b"through the passed descriptor")
        os.close(fds[0])
        assert os.read(read_end, 100) == b"through the passed descriptor"
        assert lines.readline(1000) == (b'{"b": 2}\n', [])
        client.sendall(b': 3}\n')
        assert lines.readline(1000) == (b'{"c": 3}\n', [])
        client.sendall(b"x" * 50 + b"\n")
        assert lines.readline(20) == (b"x" * 20, [])  # at most the limit, as a file's readline
        client.shutdown(socket.SHUT_WR)
        assert lines.readline(1000) == (b"x" * 30 + b"\n", [])
        assert lines.readline(1000) == (b"", [])  # the end
    finally:
        os.close(read_end)
        os.close(write_end)


def test_descriptors_of_a_line_that_never_ends_are_closed(pair):
    server, client = pair
    read_end, write_end = os.pipe()
    try:
        socket.send_fds(client, [b'{"unfinished": '], [write_end])
        server.settimeout(0.2)
        lines = _Lines(server)
        with pytest.raises(TimeoutError):
            lines.readline(1000)
        (passed,) = lines.fds
        assert _is_open(passed)
        lines.close()
        assert not _is_open(passed) and lines.fds == []
    finally:
        os.close(read_end)
        os.close(write_end)


class _GrepOnly:
    """A service whose grep answer is two blocks (the socket server serves the method table)."""

    def grep_json(self, request):
        yield b'{"pattern": "x", '
        yield b'"matches": []}'


def test_a_result_for_a_passed_descriptor_is_written_when_the_reply_is_sent(tmp_path):
    """dispatch runs under the collector's pause (every thread's): the writing into the client's
    descriptor waits for the reply's sending, after it, so a slow reader never holds the pause."""
    import gc

    from codesearch.gc_pause import paused_gc
    from codesearch.transports.socket import RpcServer

    server = RpcServer(tmp_path / "s.sock", _GrepOnly())
    read_end, write_end = os.pipe()
    try:
        line = b'{"jsonrpc": "2.0", "id": 3, "method": "grep", "params": {"pattern": "x"}, "into_fd": 5}\n'
        with paused_gc():
            reply = server.dispatch(line, write_end)
        os.set_blocking(read_end, False)
        with pytest.raises(BlockingIOError):
            os.read(read_end, 100)  # nothing written yet
        enabled = gc.isenabled()
        sent = b"".join(reply)
        assert os.read(read_end, 100) == b'{"pattern": "x", "matches": []}' and enabled
        assert sent == b'{"jsonrpc": "2.0", "id": 3, "result": {"written": 31, "start": "{\\"pat"}}\n'
    finally:
        server.server_close()
        os.close(read_end)
        os.close(write_end)


def test_a_pipe_never_read_ends_the_write_and_keeps_the_clients_pipe_blocking(monkeypatch):
    """An `into_fd` pipe that nobody reads held the writing thread and the
    whole answer for ever. Now the write gives up after the idle timeout, and the client's own
    end of the pipe is left blocking (the daemon writes through a description of its own)."""
    import fcntl
    import json
    import threading

    from codesearch.transports import socket as socket_module
    monkeypatch.setattr(socket_module, "IDLE_TIMEOUT_SECONDS", 0.5)
    read_end, write_end = os.pipe()
    replies: list[bytes] = []
    try:
        writer = threading.Thread(target=lambda: replies.extend(
            socket_module._write_into(write_end, 1, [b"x" * (4 << 20)], 4)))
        writer.start()
        writer.join(timeout=30)
        assert not writer.is_alive()
        assert not fcntl.fcntl(write_end, fcntl.F_GETFL) & os.O_NONBLOCK
    finally:
        os.close(read_end)
        os.close(write_end)
    result = json.loads(b"".join(replies))["result"]
    assert result["error"] and 0 < result["written"] < 4 << 20
