"""An index's own embedder keeps the vectors of recent queries (backends.SharedEmbedder, as a
workspace's shared model does): a query asked again (an editor as its user types, an agent that
repeats itself) is not embedded again."""

from __future__ import annotations

import numpy as np

from codesearch.config import load_settings
from codesearch.embedding import backends
from codesearch.indexing.index import Index


class CountingEmbedder:
    key = "counting"
    dimension = 4

    def __init__(self) -> None:
        self.texts: list[str] = []

    def encode_query(self, text: str) -> np.ndarray:
        self.texts.append(text)
        return np.full(4, float(len(self.texts)), dtype=np.float32)


def test_a_query_asked_again_takes_its_vector_from_the_recent_ones(tmp_path, monkeypatch):
    embedder = CountingEmbedder()
    monkeypatch.setattr(backends, "create_embedder", lambda settings: embedder)
    monkeypatch.setattr(backends.SharedEmbedder.__init__, "__defaults__", (2,))
    index = Index(tmp_path, load_settings(tmp_path), tmp_path / "index", create=True)
    try:
        encode = index.embedder.encode_query
        first = encode("retry with backoff")
        assert np.array_equal(encode("retry with backoff"), first)
        encode("parse config")
        encode("retry with backoff")  # the latest again: it stays
        encode("open a socket")  # the oldest ("parse config") makes room
        encode("parse config")
        assert embedder.texts == ["retry with backoff", "parse config", "open a socket", "parse config"]
    finally:
        index.close()
