"""Static embeddings distilled from a sentence-transformers model (model2vec): thousands of
chunks/s on a CPU, at a cost in retrieval quality. Distilled once, then cached on disk."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .base import missing_extra, model_slug, resolve_model_path
from .sentence_transformer import encode_batches, load_sentence_transformer

PCA_DIMENSIONS = 256
EXTRA = "static"  # the install extra that brings model2vec and sentence-transformers


def static_model_path(base: str) -> Path:
    """The static model distilled from `base`, made once and cached under
    ~/.cache/codesearch/static (CODESEARCH_CACHE_DIR)."""
    cache_root = Path(os.environ.get("CODESEARCH_CACHE_DIR") or Path.home() / ".cache" / "codesearch")
    target = cache_root / "static" / model_slug(base)
    if (target / "modules.json").exists():
        return target
    try:
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.models import StaticEmbedding
        static = StaticEmbedding.from_distillation(resolve_model_path(base, EXTRA), device="cpu",
                                                   pca_dims=PCA_DIMENSIONS)
    except ImportError as exc:
        raise missing_extra("the static embedder", EXTRA, exc) from None
    model = SentenceTransformer(modules=[static], device="cpu")
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    model.save(str(partial))
    partial.rename(target)  # atomic: a crash never leaves a half-written model in place
    return target


class StaticEmbedder:
    def __init__(self, model: str, device: str = "", batch_size: int = 64, threads: int = 0):
        self.model_name = model
        self.threads = threads
        self.device = device
        self.batch_size = batch_size
        self._model = None
        self._lock = threading.Lock()

    @property
    def key(self) -> str:
        return f"static:{self.model_name}"

    @property
    def model(self):
        with self._lock:
            if self._model is None:
                self._model, _ = load_sentence_transformer(str(static_model_path(self.model_name)), self.device,
                                                           self.threads, EXTRA)
            return self._model

    @property
    def dimension(self) -> int:
        return int(self.model.get_sentence_embedding_dimension())

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return encode_batches(self.model, texts, self.batch_size)

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode_documents([text])[0]
