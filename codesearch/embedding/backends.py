"""Which embedding backend the settings ask for (setting `embedder`), built without loading it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from ..config import Settings
from .base import Embedder, WrappedEmbedder

QUERY_MEMO_SIZE = 64  # recent query vectors kept: an editor asks again as its user types


def _sentence_transformer(s: Settings) -> Embedder:
    from .sentence_transformer import SentenceTransformerEmbedder
    return SentenceTransformerEmbedder(s.model, s.device, s.embed_batch_size, s.embed_max_tokens, s.embed_quantize,
                                       s.embed_threads)


def _onnx(s: Settings) -> Embedder:
    from .onnx import OnnxEmbedder
    return OnnxEmbedder(s.model, s.device, s.embed_batch_size, s.embed_max_tokens, s.embed_threads, s.embed_runtime)


def _static(s: Settings) -> Embedder:
    from .static import StaticEmbedder
    return StaticEmbedder(s.model, s.device, threads=s.embed_threads)


BACKENDS: dict[str, Callable[[Settings], Embedder]] = {
    "sentence-transformers": _sentence_transformer,
    "onnx": _onnx,
    "static": _static,
}


def create_embedder(settings: Settings) -> Embedder:
    """The backend `settings.embedder` names (one of config.EMBEDDERS: Settings checks it)."""
    return BACKENDS[settings.embedder](settings)


class SharedEmbedder(WrappedEmbedder):
    """A model with its recent query vectors kept (an index's own, or one shared by the
    repositories of a workspace: memory does not grow by a model per repository, and a query
    asked of each repository is embedded once).
    The repositories' background embedding takes turns, so a workspace embeds with one model's
    threads like a one-repository daemon, whatever its size."""

    def __init__(self, inner: Embedder, memo_size: int = QUERY_MEMO_SIZE):
        self.inner = inner
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()
        self._memo_size = memo_size
        self._lock = threading.Lock()
        self._documents = threading.Lock()

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        with self._documents:
            return self.inner.encode_documents(texts)

    def close(self) -> None:
        """Let the model go what it holds apart from itself (a child process; see worker.py)."""
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    def encode_query(self, text: str) -> np.ndarray:
        with self._lock:
            found = self._memo.get(text)
            if found is not None:
                self._memo.move_to_end(text)
                return found
        vector = self.inner.encode_query(text)
        vector.flags.writeable = False  # handed to every repository's search: nobody may change it
        with self._lock:
            self._memo[text] = vector
            while len(self._memo) > self._memo_size:
                self._memo.popitem(last=False)
        return vector


def process_embedder(settings: Settings) -> SharedEmbedder:
    """A model in this process for queries and batches alike (a CLI process, an index run)."""
    return SharedEmbedder(create_embedder(settings))


class EmbedderPool:
    """Embedders shared by the indexes of one process, one per distinct embedding setting;
    `make` builds each (process_embedder, or daemon_embedder in a daemon)."""

    def __init__(self, make: Callable[[Settings], SharedEmbedder] = process_embedder) -> None:
        self._make = make
        self._made: dict[tuple, SharedEmbedder] = {}
        self._lock = threading.Lock()

    def get(self, settings: Settings) -> SharedEmbedder:
        key = (settings.embedder, settings.model, settings.device, settings.embed_batch_size,
               settings.embed_max_tokens, settings.embed_quantize, settings.embed_threads, settings.embed_runtime,
               settings.daemon_embed_in_child)
        with self._lock:
            if key not in self._made:
                self._made[key] = self._make(settings)
            return self._made[key]
