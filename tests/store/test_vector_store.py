"""The Chroma store behind the vector retriever, real Chroma on disk."""

from __future__ import annotations

import chromadb
import numpy as np
from chromadb.config import Settings as ChromaSettings

from codesearch.store.chroma import STORE_FOLDER, VectorStore


def test_an_index_made_before_follows_the_search_breadth_setting(tmp_path):
    """A collection keeps the HNSW configuration it was made with; its search breadth (ef) is the
    part a setting changes later, so raising `hnsw_search_ef` reaches indexes made before it."""
    vectors = np.random.default_rng(0).normal(size=(40, 8)).astype(np.float32)
    made = VectorStore(tmp_path, "chunks-test", search_ef=100)
    try:
        made.upsert([f"c{i}" for i in range(40)], vectors, [{"kind": "function"}] * 40)
        assert made.collection.configuration_json["hnsw"]["ef_search"] == 100
    finally:
        made.close()
    wider = VectorStore(tmp_path, "chunks-test", search_ef=400)
    try:
        assert wider.collection.configuration_json["hnsw"]["ef_search"] == 400
        assert wider.query(vectors[3], 5)[0][0] == "c3" and wider.count() == 40
    finally:
        wider.close()
    # written to the store, not only to this process's copy: a client that sets nothing reads it
    plain = chromadb.PersistentClient(str(tmp_path / STORE_FOLDER), settings=ChromaSettings(anonymized_telemetry=False))
    assert plain.get_collection("chunks-test").configuration_json["hnsw"]["ef_search"] == 400
