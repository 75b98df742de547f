"""Which embedding backend the settings ask for (setting `embedder`), built without loading it."""

from __future__ import annotations

from collections.abc import Callable

from ..config import ConfigError, Settings
from .base import Embedder


def _sentence_transformer(s: Settings) -> Embedder:
    from .sentence_transformer import SentenceTransformerEmbedder
    return SentenceTransformerEmbedder(s.model, s.device, s.embed_batch_size, s.embed_max_tokens, s.embed_quantize,
                                       s.embed_threads)


def _onnx(s: Settings) -> Embedder:
    from .onnx import OnnxEmbedder
    return OnnxEmbedder(s.model, s.device, s.embed_batch_size, s.embed_max_tokens, s.embed_threads)


def _static(s: Settings) -> Embedder:
    from .static import StaticEmbedder
    return StaticEmbedder(s.model, s.device, threads=s.embed_threads)


BACKENDS: dict[str, Callable[[Settings], Embedder]] = {
    "sentence-transformers": _sentence_transformer,
    "onnx": _onnx,
    "static": _static,
}


def create_embedder(settings: Settings) -> Embedder:
    build = BACKENDS.get(settings.embedder)
    if build is None:
        raise ConfigError(f"unknown embedder {settings.embedder!r}; choose from {', '.join(BACKENDS)}")
    return build(settings)
