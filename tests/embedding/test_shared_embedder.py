"""The embedder a workspace's repositories share (embedding/backends.py): one per setting, and a
query asked of each repository embedded once."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from codesearch.config import Settings
from codesearch.embedding.backends import EmbedderPool, SharedEmbedder


class CountingEmbedder:
    key = "counting"
    dimension = 3

    def __init__(self) -> None:
        self.queries: list[str] = []

    def encode_documents(self, texts):
        return np.ones((len(texts), 3), dtype=np.float32)

    def encode_query(self, text):
        self.queries.append(text)
        return np.array([len(text), 0, 0], dtype=np.float32)


def test_a_query_is_embedded_once_and_the_vector_cannot_be_changed():
    inner = CountingEmbedder()
    shared = SharedEmbedder(inner, memo_size=2)
    first = shared.encode_query("retry backoff")
    assert shared.encode_query("retry backoff") is first and inner.queries == ["retry backoff"]
    with pytest.raises(ValueError):
        first[0] = 7
    shared.encode_query("b")
    shared.encode_query("c")  # "retry backoff" falls out of a memo of 2
    shared.encode_query("retry backoff")
    assert inner.queries == ["retry backoff", "b", "c", "retry backoff"]
    assert shared.key == "counting" and shared.dimension == 3
    assert shared.encode_documents(["x", "y"]).shape == (2, 3)


def test_the_pool_shares_one_embedder_per_setting():
    pool = EmbedderPool()
    settings = Settings()
    assert pool.get(settings) is pool.get(replace(settings, weight_graph=0.5))  # search settings do not matter
    assert pool.get(settings) is not pool.get(replace(settings, embed_max_tokens=256))
