"""Chroma: the vector mirror of the catalog. Vectors are always passed in (no embedding function)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..model import Filters

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


class VectorStoreError(RuntimeError):
    """Chroma cannot be reached or used; the message says how."""


def _client(index_dir: Path, chroma_url: str):
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
    try:
        if chroma_url:
            from urllib.parse import urlparse
            url = urlparse(chroma_url if "://" in chroma_url else f"http://{chroma_url}")
            return chromadb.HttpClient(host=url.hostname or "localhost", port=url.port or 8000,
                                       ssl=url.scheme == "https", settings=settings)
        return chromadb.PersistentClient(path=str(index_dir / "chroma"), settings=settings)
    except Exception as exc:  # noqa: BLE001
        where = chroma_url or index_dir / "chroma"
        raise VectorStoreError(f"cannot open the Chroma store at {where}: {exc}") from None


class VectorStore:
    """One Chroma collection per (index, model): cosine space, configurable HNSW."""

    def __init__(self, index_dir: Path, collection: str, chroma_url: str = "", hnsw_m: int = 16,
                 construction_ef: int = 100, search_ef: int = 100):
        self.client = _client(index_dir, chroma_url)
        configuration = {"hnsw": {"space": "cosine", "ef_construction": construction_ef,
                                  "ef_search": search_ef, "max_neighbors": hnsw_m}}
        try:
            self.collection = self.client.get_or_create_collection(
                collection, embedding_function=None, configuration=configuration)
        except Exception as exc:  # noqa: BLE001
            raise VectorStoreError(f"cannot open Chroma collection {collection!r}: {exc}") from None

    def upsert(self, ids: list[str], vectors: np.ndarray, metadatas: list[dict[str, Any]]) -> None:
        for start in range(0, len(ids), 2000):
            end = start + 2000
            self.collection.upsert(ids=ids[start:end], embeddings=vectors[start:end],
                                   metadatas=metadatas[start:end])

    def delete(self, ids: list[str]) -> None:
        for start in range(0, len(ids), 2000):
            self.collection.delete(ids=ids[start:start + 2000])

    def ids(self) -> set[str]:
        out: set[str] = set()
        offset = 0
        while True:
            page = self.collection.get(include=[], limit=5000, offset=offset)["ids"]
            out.update(page)
            if len(page) < 5000:
                return out
            offset += len(page)

    def count(self) -> int:
        return self.collection.count()

    def query(self, vector: np.ndarray, limit: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the nearest vectors that pass the language and kind filters
        (a path glob is the caller's to check: Chroma cannot match globs), best first. Chroma
        answers fewer when it holds fewer (no count first: that cost ~2 ms a query)."""
        result = self.collection.query(query_embeddings=[vector], n_results=limit,
                                       where=chroma_where(filters), include=["distances"])
        return [(i, 1.0 - d) for i, d in zip(result["ids"][0], result["distances"][0])]


def chroma_where(filters: Filters | None) -> dict | None:
    """The language and kind filters as a Chroma `where` (vectors carry them as metadata)."""
    parts: list[dict] = []
    if filters and filters.language:
        parts.append({"language": filters.language})
    if filters and filters.kind:
        parts.append({"kind": filters.kind})
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else {"$and": parts}
