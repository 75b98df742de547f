"""The onnx embedder: the packaged int8-weight model on OpenVINO and ONNX Runtime, against the
same model in torch; which runtime and device it picks."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from codesearch.config import Settings
from codesearch.embedding.backends import create_embedder
from codesearch.embedding.base import GPU_BATCH, EmbeddingError
from codesearch.embedding.onnx import CPU_BATCH, CUDA_PROVIDER, OnnxEmbedder, choose_runtime
from codesearch.embedding.sentence_transformer import SentenceTransformerEmbedder

TEXTS = ["def compute_backoff(attempt):\n    return min(cap, base * 2 ** attempt)",
         "class HTTPException(Exception):\n    \"\"\"An HTTP error with a status code.\"\"\"",
         "how are routes registered", "Ünïcödé naïve café 数据", "x = 1\n" * 400]


@pytest.fixture(scope="module", params=["openvino", "onnxruntime"])
def onnx(request):
    embedder = OnnxEmbedder("all-MiniLM-L6-v2", max_tokens=128, runtime=request.param)
    embedder.encode_query("load")
    assert embedder.chosen == (request.param, "cpu") and embedder.batch_size == CPU_BATCH
    return embedder


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
    many = TEXTS * 20  # several batches, the texts in other batches and places
    assert np.abs(onnx.encode_documents(many) - np.tile(together, (20, 1))).max() < 1e-5


def test_queries_on_many_threads_get_the_same_vectors(onnx):
    """The daemon searches on several threads while its embedder thread encodes batches."""
    from concurrent.futures import ThreadPoolExecutor
    expected = [onnx.encode_query(t) for t in TEXTS]
    with ThreadPoolExecutor(4) as pool:
        batch = pool.submit(onnx.encode_documents, TEXTS * 10)
        got = list(pool.map(onnx.encode_query, TEXTS * 3))
        batch.result()
    assert all(np.abs(g - expected[i % len(TEXTS)]).max() < 1e-5 for i, g in enumerate(got))


@pytest.mark.parametrize("backend", [OnnxEmbedder, SentenceTransformerEmbedder])
def test_a_query_is_read_past_the_documents_token_limit(backend):
    """Documents are cut at embed_max_tokens (speed), a query at QUERY_MAX_TOKENS at least: a bug
    report's names and messages come after its title. Both backends."""
    embedder = backend("all-MiniLM-L6-v2", max_tokens=16)
    text = " ".join(["retry"] * 20 + ["database connection pool timeout"] * 8)
    query, document = embedder.encode_query(text), embedder.encode_documents([text])[0]
    assert float(query @ document) < 0.9  # the document saw only "retry"
    assert float(query @ embedder.encode_query(text + " and more words")) > 0.9


def test_both_runtimes_give_the_same_vectors_under_one_key():
    """Why the runtime is not part of the key: their vectors agree as a CPU's and a GPU's would."""
    ov = OnnxEmbedder("all-MiniLM-L6-v2", runtime="openvino")
    ort = OnnxEmbedder("all-MiniLM-L6-v2", runtime="onnxruntime")
    assert ov.key == ort.key
    agree = np.sum(ov.encode_documents(TEXTS) * ort.encode_documents(TEXTS), axis=1)
    assert agree.min() > 0.999


def test_it_is_the_default_and_its_vectors_have_their_own_key():
    embedder = create_embedder(Settings())
    assert isinstance(embedder, OnnxEmbedder) and embedder.key == "all-MiniLM-L6-v2:onnx-q8:t64"
    torch_backend = create_embedder(Settings(embedder="sentence-transformers"))
    assert isinstance(torch_backend, SentenceTransformerEmbedder) and torch_backend.key != embedder.key


ORT_GPU = ["CPUExecutionProvider", CUDA_PROVIDER]


@pytest.mark.parametrize(("runtime", "device", "openvino", "providers", "gpu", "torch_cuda", "chosen"), [
    # nothing asked: a CUDA GPU when there is one and a runtime can drive it, torch first
    ("auto", "", True, ORT_GPU, True, True, ("torch", "cuda")),
    ("auto", "", True, ["CPUExecutionProvider"], True, True, ("torch", "cuda")),
    ("auto", "", True, ORT_GPU, True, False, ("onnxruntime", "cuda")),
    # onnxruntime-gpu installed on a machine without a GPU: the CPU, and OpenVINO there
    ("auto", "", True, ORT_GPU, False, True, ("openvino", "cpu")),
    # a GPU that neither torch nor onnxruntime can use: the CPU
    ("auto", "", True, ["CPUExecutionProvider"], True, False, ("openvino", "cpu")),
    ("auto", "", False, ["CPUExecutionProvider"], False, False, ("onnxruntime", "cpu")),
    ("auto", "cpu", True, ORT_GPU, True, True, ("openvino", "cpu")),
    ("onnxruntime", "", True, ["CPUExecutionProvider"], False, False, ("onnxruntime", "cpu")),
    ("onnxruntime", "", True, ORT_GPU, True, True, ("onnxruntime", "cuda")),
    ("torch", "", True, ORT_GPU, True, False, ("torch", "cpu")),
    ("torch", "cpu", True, ORT_GPU, True, True, ("torch", "cpu")),
    # OpenVINO named: the CPU even beside a GPU (it does not run on CUDA)
    ("openvino", "", True, ORT_GPU, True, True, ("openvino", "cpu")),
    ("auto", "cuda:1", True, ORT_GPU, True, False, ("onnxruntime", "cuda:1")),
    ("auto", "cuda:1", True, ORT_GPU, True, True, ("torch", "cuda:1")),
])
def test_the_runtime_and_device_it_chooses(runtime, device, openvino, providers, gpu, torch_cuda, chosen):
    assert choose_runtime(runtime, device, openvino, providers, gpu, lambda: torch_cuda) == chosen


def test_torch_is_imported_only_where_a_gpu_is_wanted():
    def no_torch_here() -> bool:
        raise AssertionError("asked whether torch has CUDA on a machine without a GPU")
    assert choose_runtime("auto", "", True, ["CPUExecutionProvider"], False, no_torch_here) == ("openvino", "cpu")
    assert choose_runtime("auto", "cpu", True, ["CPUExecutionProvider"], True, no_torch_here) == ("openvino", "cpu")


@pytest.mark.parametrize(("runtime", "device", "providers", "message"), [
    ("auto", "cuda", ["CPUExecutionProvider"], "a torch built with CUDA, or pip install onnxruntime-gpu"),
    ("onnxruntime", "cuda", ["CPUExecutionProvider"], "pip install onnxruntime-gpu"),
    ("torch", "cuda", ORT_GPU, "a torch built with CUDA"),
    ("openvino", "cuda", ORT_GPU, "OpenVINO does not run on CUDA"),
    ("auto", "mps", ["CPUExecutionProvider"], "runs on cpu or cuda"),
    ("tensorrt", "", ["CPUExecutionProvider"], "unknown embed_runtime"),
])
def test_a_runtime_or_device_it_cannot_use_is_one_clear_error(runtime, device, providers, message):
    with pytest.raises(EmbeddingError, match=message):
        choose_runtime(runtime, device, True, providers, True, lambda: False)


def test_cuda_asked_for_on_this_machine_is_one_clear_error_or_the_gpu():
    embedder = OnnxEmbedder("all-MiniLM-L6-v2", device="cuda")
    try:
        embedder.encode_query("x")
    except EmbeddingError as exc:
        assert "CUDA" in str(exc)
    else:  # a machine with a GPU that torch or onnxruntime-gpu can use: it runs there, with the GPU's batch size
        assert embedder.chosen is not None and embedder.chosen[1] == "cuda" and embedder.batch_size == GPU_BATCH


def test_the_torch_runtime_gives_the_models_own_vectors_under_the_same_key():
    """The GPU's runtime, here on the CPU: the unquantized model, so the model's own vectors, and
    within rounding of the int8 file's (why the key is shared)."""
    embedder = OnnxEmbedder("all-MiniLM-L6-v2", runtime="torch")
    vectors = embedder.encode_documents(TEXTS * 3)
    assert embedder.chosen == ("torch", "cpu") and embedder.key == OnnxEmbedder("all-MiniLM-L6-v2").key
    reference = SentenceTransformerEmbedder("all-MiniLM-L6-v2", max_tokens=128).encode_documents(TEXTS * 3)
    assert np.sum(vectors * reference, axis=1).min() > 0.9999
    int8 = OnnxEmbedder("all-MiniLM-L6-v2", runtime="onnxruntime").encode_documents(TEXTS * 3)
    assert np.sum(vectors * int8, axis=1).min() > 0.99
    assert np.abs(np.stack([embedder.encode_query(t) for t in TEXTS]) - vectors[:len(TEXTS)]).max() < 1e-5


def test_tokenizing_on_threads_gives_the_same_ids(onnx):
    """What a GPU's embedder does (several threads, in slices), in the order of the texts."""
    from concurrent.futures import ThreadPoolExecutor
    _, tokenizer = onnx._load()
    many = [f"{t} {i}" for i, t in enumerate(TEXTS * 60)]
    alone = onnx._tokenize(tokenizer, many)
    onnx._tokenizers, onnx._tokenizing_threads = ThreadPoolExecutor(3), 3
    try:
        assert onnx._tokenize(tokenizer, many) == alone
        assert onnx._tokenize(tokenizer, many[:40]) == alone[:40]  # fewer than a slice a thread
    finally:
        onnx._tokenizers.shutdown()
        onnx._tokenizers, onnx._tokenizing_threads = None, 1


def test_a_model_folder_without_its_files_is_one_clear_error(tmp_path):
    with pytest.raises(EmbeddingError, match=r"needs .*model\.onnx"):
        OnnxEmbedder(str(tmp_path)).encode_query("x")


def test_the_process_loads_no_torch():
    code = ("import sys\nfrom codesearch.embedding.onnx import OnnxEmbedder\n"
            "OnnxEmbedder('all-MiniLM-L6-v2').encode_query('q')\nprint('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr


def test_openvino_starts_no_telemetry():
    """OpenVINO's converter sends usage events (from a forked process) unless opted out: the
    embedder keeps its telemetry package from loading, so nothing is sent and nothing forks."""
    code = ("import sys\nfrom codesearch.embedding.onnx import OnnxEmbedder\n"
            "OnnxEmbedder('all-MiniLM-L6-v2', runtime='openvino').encode_query('q')\n"
            "print(sorted(m for m in sys.modules if m.startswith('openvino_telemetry.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


FIRST_CALLS_AT_ONCE = """
import sys, threading
sys.setswitchinterval(1e-6)  # threads change hands often: the race is met at once, not now and then
from codesearch.embedding.onnx import OnnxEmbedder
embedder = OnnxEmbedder('all-MiniLM-L6-v2', threads=1, runtime=sys.argv[1])
embedder._load()
start = threading.Barrier(8)
def first_query(i):
    start.wait()
    embedder.encode_query(f'warm up {i}')
threads = [threading.Thread(target=first_query, args=(i,)) for i in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print('answered')
"""


def test_threads_making_their_first_calls_at_once_all_get_answers():
    """A workspace daemon warms one shared model from each repository's thread at once. Without
    the first calls taken one at a time, OpenVINO's bindings deadlocked two threads on a C++
    static while one held the GIL, and the whole daemon stopped answering (4 of 6 such processes
    hung before the fix); three processes make the race near certain."""
    runs = [subprocess.Popen([sys.executable, "-c", FIRST_CALLS_AT_ONCE, "openvino"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(3)]
    try:
        for run in runs:
            out, err = run.communicate(timeout=90)
            assert out.strip() == "answered", err
    finally:
        for run in runs:
            run.kill()
