"""The onnx embedder: the packaged int8 model on ONNX Runtime, against the same model in torch."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from codesearch.config import Settings
from codesearch.embedding.base import EmbeddingError
from codesearch.embedding.onnx import OnnxEmbedder
from codesearch.embedding.registry import create_embedder
from codesearch.embedding.sentence_transformer import SentenceTransformerEmbedder

TEXTS = ["def compute_backoff(attempt):\n    return min(cap, base * 2 ** attempt)",
         "class HTTPException(Exception):\n    \"\"\"An HTTP error with a status code.\"\"\"",
         "how are routes registered", "Ünïcödé naïve café 数据", "x = 1\n" * 400]


@pytest.fixture(scope="module")
def onnx():
    return OnnxEmbedder("all-MiniLM-L6-v2", max_tokens=128)


def test_vectors_are_the_models_own(onnx):
    """Within rounding of the unquantized model at the same token limit."""
    reference = SentenceTransformerEmbedder("all-MiniLM-L6-v2", max_tokens=128).encode_documents(TEXTS)
    vectors = onnx.encode_documents(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.sum(vectors * reference, axis=1).min() > 0.99


def test_a_texts_vector_does_not_depend_on_its_batch(onnx):
    alone = np.stack([onnx.encode_query(t) for t in TEXTS])
    together = onnx.encode_documents(TEXTS)
    assert np.abs(alone - together).max() < 1e-5
    assert onnx.encode_documents([]).shape == (0, 384)


def test_the_setting_picks_it_and_its_vectors_have_their_own_key():
    embedder = create_embedder(Settings(embedder="onnx"))
    assert isinstance(embedder, OnnxEmbedder) and embedder.key == "all-MiniLM-L6-v2:onnx-q8:t128"
    assert embedder.key != create_embedder(Settings()).key


def test_a_model_folder_without_its_files_is_one_clear_error(tmp_path):
    with pytest.raises(EmbeddingError, match="needs .*model.onnx"):
        OnnxEmbedder(str(tmp_path)).encode_query("x")


def test_the_process_loads_no_torch():
    code = ("import sys\nfrom codesearch.embedding.onnx import OnnxEmbedder\n"
            "OnnxEmbedder('all-MiniLM-L6-v2').encode_query('q')\nprint('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr
