"""A sentence-transformers model (all-MiniLM-L6-v2 by default, from its PyPI package), loaded
offline, optionally int8-quantized on the CPU, with its input cut at a token limit."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from .base import GPU_BATCH, QUERY_MAX_TOKENS, EmbeddingError, length_sorted_encode, missing_extra, resolve_model_path

EXTRA = "sentence-transformers"  # the install extra that brings this backend's packages
# vectors whose key carries no ":tN" were made with the model's input cut at this many tokens
UNNAMED_TOKEN_LIMIT = 256
CPU_BATCH = 8  # texts per forward pass on a CPU (scripts/bench_embedding.py, variant torch-q8)


def quantize_linear_layers(model):
    """int8 dynamic quantization of every Linear layer: about twice the CPU throughput."""
    import warnings

    import torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


def load_sentence_transformer(path: str, device: str, threads: int = 0, extra: str = EXTRA):
    """A SentenceTransformer from a local path, offline, on `device` ("" = cuda when available),
    with `threads` intra-op threads on the CPU (0: torch's default, one per core). `extra` is the
    install extra named when its packages are missing."""
    try:  # offline and quiet: the package's import set the environment for that
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise missing_extra(f"the {extra} embedder", extra, exc) from None
    if threads:
        torch.set_num_threads(threads)
    chosen = device or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return SentenceTransformer(path, device=chosen, local_files_only=True), chosen
    except Exception as exc:  # noqa: BLE001 - any loader failure is one clear sentence
        raise EmbeddingError(f"cannot load embedding model {path!r} offline: {exc}") from None


def encode_batches(model, texts: Sequence[str], batch_size: int) -> np.ndarray:
    """A SentenceTransformer's unit-length vectors for `texts`, longest first in batches."""
    return length_sorted_encode(lambda batch: model.encode(
        batch, batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True,
        show_progress_bar=False), texts)


class SentenceTransformerEmbedder:
    """Loads the model on first use (once, under a lock); encoding may run on several threads."""

    def __init__(self, model: str, device: str = "", batch_size: int = 0, max_tokens: int = 128,
                 quantize: bool = False, threads: int = 0):
        self.model_name = model
        self.threads = threads
        self.quantize = quantize
        self.device = device
        self.batch_size = batch_size  # 0: chosen for the device
        self.max_tokens = max_tokens
        self._model = None
        self._lock = threading.Lock()

    @property
    def key(self) -> str:
        """The model, `:q8` when quantized, `:tN` for a token limit other than the one older
        caches assume."""
        name = f"{self.model_name}:q8" if self.quantize else self.model_name
        return name if self.max_tokens == UNNAMED_TOKEN_LIMIT else f"{name}:t{self.max_tokens}"

    def _load(self):
        model, device = load_sentence_transformer(resolve_model_path(self.model_name, EXTRA), self.device, self.threads)
        if self.max_tokens:
            model.max_seq_length = min(self.max_tokens, model.max_seq_length or self.max_tokens)
        if self.quantize and device == "cpu":
            model = quantize_linear_layers(model)
        if not self.batch_size:
            self.batch_size = GPU_BATCH if device.startswith("cuda") else CPU_BATCH
        model.eval()  # once: encode_query runs the modules directly
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

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, in input order; long texts batched together."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        # no lock here: inference is thread-safe, and a query must not wait for a batch
        return encode_batches(self.model, texts, self.batch_size)

    def encode_query(self, text: str) -> np.ndarray:
        """One text through the model's modules: `SentenceTransformer.encode` puts every module in
        eval mode on each call, Python under the GIL that is a large share of a short query.
        Read to QUERY_MAX_TOKENS at least, as the onnx embedder reads it."""
        model = self.model  # first: where the extra is missing, this is what says so
        import torch
        from sentence_transformers.util import batch_to_device
        limit = max(model.max_seq_length or 0, QUERY_MAX_TOKENS)  # past the documents' limit (base.py)
        features = batch_to_device(model.preprocess([text], max_length=limit), model.device)
        with torch.inference_mode():
            embedding = model(features)["sentence_embedding"]
        return torch.nn.functional.normalize(embedding, p=2, dim=1)[0].float().cpu().numpy()
