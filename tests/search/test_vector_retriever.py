"""The vector retriever keeps the vectors of recent queries: a query asked again (an editor as
its user types, an agent that repeats itself) is not embedded again."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from codesearch.search.retrievers import vector as vector_module
from codesearch.search.retrievers.vector import VectorRetriever


class CountingEmbedder:
    def __init__(self) -> None:
        self.texts: list[str] = []

    def encode_query(self, text: str) -> np.ndarray:
        self.texts.append(text)
        return np.full(4, float(len(self.texts)), dtype=np.float32)


def test_a_query_asked_again_takes_its_vector_from_the_recent_ones(monkeypatch):
    monkeypatch.setattr(vector_module, "RECENT_QUERIES", 2)
    embedder = CountingEmbedder()
    retriever = VectorRetriever(SimpleNamespace(embedder=embedder))  # type: ignore[arg-type]
    first = retriever._query_vector("retry with backoff")
    assert np.array_equal(retriever._query_vector("retry with backoff"), first)
    retriever._query_vector("parse config")
    retriever._query_vector("retry with backoff")  # the latest again: it stays
    retriever._query_vector("open a socket")  # the oldest ("parse config") makes room
    retriever._query_vector("parse config")
    assert embedder.texts == ["retry with backoff", "parse config", "open a socket", "parse config"]
