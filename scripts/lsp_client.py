"""A language server asked one question at a time over stdio (JSON-RPC with LSP framing): just
enough of the protocol for the call-graph benchmark to ask where a name is defined."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse


def file_uri(path: Path) -> str:
    return path.resolve().as_uri()


def path_of_uri(uri: str) -> Path | None:
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


class LanguageServer:
    """A server process for one workspace folder: initialized on entry, shut down on exit."""

    def __init__(self, command: list[str], root: Path, env: dict[str, str]):
        self.command, self.root, self.env = command, root, env
        self._next_id = 0

    def __enter__(self) -> LanguageServer:
        self.process = subprocess.Popen(self.command, cwd=self.root, env=self.env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        uri = file_uri(self.root)
        self.request("initialize", {"processId": None, "rootUri": uri,
                                    "workspaceFolders": [{"uri": uri, "name": self.root.name}],
                                    "capabilities": {"textDocument": {"definition": {"linkSupport": False}}}})
        self.notify("initialized", {})
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.process.wait(timeout=10)
        except Exception:  # noqa: BLE001 - a server that will not stop is killed
            self.process.kill()
            self.process.wait()

    def open(self, uri: str, language: str, text: str) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": 1,
                                                              "text": text}})

    def close(self, uri: str) -> None:
        self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    def definition(self, uri: str, line: int, character: int) -> list[dict[str, Any]]:
        """The locations the server gives for the definition at a 0-based position ([] on error)."""
        found = self.request("textDocument/definition", {"textDocument": {"uri": uri},
                                                         "position": {"line": line, "character": character}})
        if found is None:
            return []
        found = found if isinstance(found, list) else [found]
        return [{"uri": f.get("targetUri", f.get("uri")), "range": f.get("targetSelectionRange", f.get("range"))}
                for f in found]

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        """The result of a request (None when the server answers with an error)."""
        self._next_id += 1
        wanted = self._next_id
        self._send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        while True:
            message = self._receive()
            if message.get("id") == wanted and "method" not in message:
                return message.get("result")
            if "method" in message and "id" in message:  # a request from the server: answer it plainly
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})

    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _receive(self) -> dict:
        assert self.process.stdout is not None
        length = 0
        while True:
            header = self.process.stdout.readline()
            if not header:
                raise RuntimeError(f"{self.command[0]} stopped answering")
            if header in (b"\r\n", b"\n"):
                break
            key, _, value = header.decode().partition(":")
            if key.lower() == "content-length":
                length = int(value)
        return json.loads(self.process.stdout.read(length))
