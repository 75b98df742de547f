"""Settings: defaults < .codesearch.toml < environment (CODESEARCH_*) < command-line flags."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_FILE_NAME = ".codesearch.toml"
IGNORE_FILE_NAME = ".codesearchignore"


class ConfigError(ValueError):
    """A setting has a bad value; the message says which and why."""


@dataclass(frozen=True)
class Settings:
    """Every tunable of indexing and search. Fields that change the index are in INDEX_AFFECTING."""

    # walking
    max_file_bytes: int = 1024 * 1024
    max_line_chars: int = 2000  # a longer line marks a minified or generated file
    max_mean_line_chars: int = 300
    # chunking (unit: non-whitespace characters, as cAST measures)
    max_chunk_chars: int = 1500
    text_window_lines: int = 60
    # embedding
    # a backend of embedding/registry.py: "onnx" (the model as int8-weight ONNX, no torch: about 2.5x
    # the throughput of "sentence-transformers" with int8 quantization, and the model's own vectors;
    # scripts/bench_embedding.py, README), "sentence-transformers" (torch) or "static"
    embedder: str = "onnx"
    # the onnx embedder's: auto (a CUDA GPU through torch or onnxruntime-gpu, else openvino), openvino,
    # onnxruntime, torch
    embed_runtime: str = "auto"
    model: str = "all-MiniLM-L6-v2"
    # the model's input is cut here: 64 tokens of words (embed_words) embed about 2x faster than
    # 128 tokens of code, NDCG@10 within 0.005 (scripts/bench_embedding.py, scripts/bench_quality.py; README)
    embed_max_tokens: int = 64
    embed_body_lines: int = 30
    # the model reads a chunk's words only (no punctuation), its body without the signature and
    # docstring it repeats (analysis/embed_text.py); false: the code as written
    embed_words: bool = True
    embed_batch_size: int = 0  # texts per forward pass; 0: chosen for the backend and device
    # a chunk under this many non-whitespace characters, without a docstring (not a file), gets
    # no vector: keyword and graph search find it by name (analysis/embed_text.py). 60 leaves out
    # 15% of the chunks (6% of the tokens) and NDCG@10 did not move on the benchmark (README)
    embed_min_chars: int = 60
    embed_quantize: bool = True  # int8 dynamic quantization on CPU: about 2x faster
    device: str = ""  # "" = cuda when available, else cpu
    # vectors
    chroma_url: str = ""
    hnsw_m: int = 16
    hnsw_construction_ef: int = 100
    hnsw_search_ef: int = 100
    # search
    rrf_k: int = 60
    weight_vector: float = 0.6
    weight_keyword: float = 0.3
    weight_graph: float = 0.1
    candidates: int = 100
    min_idf: float = 0.0
    min_semantic_score: float = 0.0
    file_aggregation: str = "weighted_top"
    ranking: bool = True
    # daemon
    debounce_ms: int = 500
    # the model's threads for the daemon's background embedding (0: all cores). Its child process
    # runs at a lower priority (embedding/worker.py), so searches take the cores they need: with
    # all cores the monorepo embedded 1.6x faster than on one, keyword searches meanwhile p50 41
    # and 45 ms against 40 (README: Monorepo). Queries embed on one thread (embedding/registry.py). With
    # daemon_embed_in_child false, one model in the daemon does both at its priority: 1 there
    # leaves the other cores to searches.
    daemon_embed_threads: int = 0
    # the daemon embeds its background batches in a child process that exits once idle, and gives
    # back what the model's runtime grew (embedding/worker.py); false: in the daemon itself
    daemon_embed_in_child: bool = True
    embed_threads: int = 0  # the model's threads in this process (0: the library's default)
    # a query that finds no daemon starts one (the first query of a repository indexes keyword and
    # graph at once and lets that daemon embed); false: everything in the foreground, as --no-daemon
    auto_daemon: bool = True
    daemon_idle_minutes: float = 60.0  # an auto-started daemon stops after this long with nothing to do
    extra: dict[str, Any] = field(default_factory=dict)


INDEX_AFFECTING = ("max_file_bytes", "max_line_chars", "max_mean_line_chars", "max_chunk_chars",
                   "text_window_lines", "model", "embed_max_tokens", "embed_body_lines", "embed_quantize",
                   "embed_min_chars", "embed_words")


def _coerce(name: str, value: Any, default: Any) -> Any:
    """Convert a TOML or environment value to the type of the field's default."""
    try:
        if isinstance(default, bool):
            if isinstance(value, str):
                if value.lower() in ("1", "true", "yes", "on"):
                    return True
                if value.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError(value)
            return bool(value)
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
        return str(value)
    except (TypeError, ValueError):
        raise ConfigError(f"setting {name!r} expects a {type(default).__name__}, got {value!r}") from None


def load_settings(root: Path | None = None, overrides: dict[str, Any] | None = None,
                  environ: dict[str, str] | None = None) -> Settings:
    """Layer the configuration sources for the repository at `root`."""
    defaults = Settings()
    known = {f.name: getattr(defaults, f.name) for f in fields(Settings) if f.name != "extra"}
    values: dict[str, Any] = {}
    if root is not None:
        path = Path(root) / CONFIG_FILE_NAME
        if path.is_file():
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{path} is not valid TOML: {exc}") from None
            for key, value in data.items():
                key = key.replace("-", "_")
                if key not in known:
                    raise ConfigError(f"{path}: unknown setting {key!r}")
                values[key] = _coerce(key, value, known[key])
    env = os.environ if environ is None else environ
    for key, default in known.items():
        raw = env.get("CODESEARCH_" + key.upper())
        if raw is not None and raw != "":
            values[key] = _coerce(key, raw, default)
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key not in known:
            raise ConfigError(f"unknown setting {key!r}")
        values[key] = _coerce(key, value, known[key])
    return replace(defaults, **values)
