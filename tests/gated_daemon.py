"""A daemon in the test's process over a copy of an index that `codesearch index` embedded whole,
whose real model is held back by a gate, and served on the repository's socket as a started
daemon is: clients (a socket, the LSP, Neovim) meet a model that loads exactly when the test says,
the one way to make a load outlast the daemon's wait without timing luck. Imported by the tests of
what searches and clients show while a model loads (not a conftest.py: tests/ has one already)."""

from __future__ import annotations

import fcntl
import os
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np

from codesearch.config import load_settings
from codesearch.daemon.core import Daemon
from codesearch.daemon.lifecycle import DaemonFiles
from codesearch.embedding.backends import SharedEmbedder, create_embedder
from codesearch.embedding.base import WrappedEmbedder
from codesearch.transports.socket import RpcServer


class GatedModel(WrappedEmbedder):
    """The real model (loaded already), whose first query, the daemon's warm-up that counts as
    its load, waits for `gate`."""

    def __init__(self, inner, gate: threading.Event):
        self.inner, self.gate = inner, gate

    def encode_query(self, text: str) -> np.ndarray:
        self.gate.wait()
        return self.inner.encode_query(text)

    def encode_documents(self, texts):
        return self.inner.encode_documents(texts)


class GatedDaemon:
    """`daemon`: the Daemon; `gate`: set it and the model has loaded. `serve()` puts it on the
    repository's socket and holds the daemon lock, so that clients find it as a running daemon."""

    def __init__(self, root: Path):
        settings = replace(load_settings(root), daemon_embed_in_child=False)
        self.gate = threading.Event()
        model = create_embedder(settings)
        model.encode_query("loaded now")  # the gate alone decides when the daemon has it
        self.daemon = Daemon(root, settings, embedder=SharedEmbedder(GatedModel(model, self.gate)))
        self.files = DaemonFiles.of(root, None)
        self.server: RpcServer | None = None
        self.lock_fd: int | None = None

    def start(self) -> GatedDaemon:
        self.daemon.start()
        assert self.daemon.ready.wait(120), "the daemon's first reconcile"
        # once the store is checked and open, the gate alone holds vector search back
        assert self.daemon.embedder.store_checked.wait(120), "the vector store's check"
        return self

    def serve(self) -> GatedDaemon:
        self.lock_fd = os.open(self.files.lock, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.lock_fd, fcntl.LOCK_EX)
        self.server = RpcServer(self.files.sock, self.daemon)
        self.server.serve_in_thread()
        return self

    def close(self) -> None:
        self.gate.set()  # the embedder thread may be waiting on it
        if self.server is not None:
            self.server.close()
        self.daemon.stop()
        if self.lock_fd is not None:
            os.close(self.lock_fd)
