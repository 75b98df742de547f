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

from .vocabulary import FILE_RANKINGS

CONFIG_FILE_NAME = ".codesearch.toml"
IGNORE_FILE_NAME = ".codesearchignore"


class ConfigError(ValueError):
    """A setting has a bad value; the message says which and why."""


# the words the settings that name one thing accept: embedding/backends.py, the ONNX embedder and the
# ranking read these, so a word is refused as the settings are read, not after a build
EMBEDDERS = ("onnx", "sentence-transformers", "static")
EMBED_RUNTIMES = ("auto", "openvino", "onnxruntime", "torch")
FILE_AGGREGATIONS = ("max_p", "top_m_sum", "top_m_avg", "rrf_per_doc", "weighted_top")


@dataclass(frozen=True)
class Settings:
    """Every tunable of indexing and search. Fields that change the index are in INDEX_AFFECTING."""

    # walking
    max_file_bytes: int = 1024 * 1024
    max_line_chars: int = 2000  # a file mostly in longer lines is minified or generated
    max_mean_line_chars: int = 300
    # chunking (unit: non-whitespace characters, as cAST measures)
    max_chunk_chars: int = 1500
    text_window_lines: int = 60
    # embedding
    # a backend of embedding/backends.py: "onnx" (the model as int8-weight ONNX, no torch: more
    # throughput than "sentence-transformers" with int8 quantization, and the model's own vectors;
    # scripts/bench_embedding.py, docs/benchmarks.md, "Indexing"), "sentence-transformers" (torch) or "static"
    embedder: str = "onnx"
    # the onnx embedder's: auto (a CUDA GPU through torch or onnxruntime-gpu, else openvino), openvino,
    # onnxruntime, torch
    embed_runtime: str = "auto"
    model: str = "all-MiniLM-L6-v2"
    # the model's input is cut here: 64 tokens of words (embed_words) embed faster than 128 tokens
    # of code at the same retrieval quality (scripts/bench_embedding.py, scripts/bench_quality.py;
    # docs/benchmarks.md, "Indexing")
    embed_max_tokens: int = 64
    embed_body_lines: int = 30
    # the model reads a chunk's words only (no punctuation), its body without the signature and
    # docstring it repeats (analysis/embed_text.py); false: the code as written
    embed_words: bool = True
    embed_batch_size: int = 0  # texts per forward pass; 0: chosen for the backend and device
    # a chunk under this many non-whitespace characters, without a docstring (not a file), gets
    # no vector: keyword and graph search find it by name (analysis/embed_text.py). 60 leaves out
    # many one-line chunks without moving NDCG@10 (docs/benchmarks.md, "Indexing": "Embedding less")
    embed_min_chars: int = 60
    embed_quantize: bool = True  # int8 dynamic quantization on CPU: faster (docs/benchmarks.md, "Indexing")
    device: str = ""  # "" = cuda when available, else cpu
    # vectors
    chroma_url: str = ""
    # a team store (team/, docs/team.md) that index, query, callers and callees use instead of the local
    # index: milvus:///ABS/PATH.db, milvus://HOST:19530; "" = the local index
    store: str = ""
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
    # how --files ranks files: fuse_first (the fused, ranked chunks aggregated per file by
    # file_aggregation) or per_retriever (each retriever's list made a file list, then fused)
    file_ranking: str = "fuse_first"
    ranking: bool = True
    # graph: a SCIP index (written by a type-aware indexer: scip-typescript, scip-python, ...) whose
    # precise edges replace the name-based ones of the files it covers; a path relative to the
    # repository, or "" for the one at its root (`index.scip`) when scip_discover is on
    scip: str = ""
    scip_discover: bool = True
    # daemon
    debounce_ms: int = 500
    # the model's threads for the daemon's background embedding (0: all cores). Its child process
    # runs at a lower priority (embedding/worker.py), so searches take the cores they need: all
    # cores embed faster than one and barely slow the searches meanwhile (docs/benchmarks.md, "A
    # 100,000-file monorepo"). Queries embed on one thread (embedding/worker.py). With
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
    # after this long with nothing to do, a daemon gives back its model and caches: a small dormant
    # process keeps its socket and locks and wakes it on the next request (0: never)
    daemon_dormant_minutes: float = 5.0
    # on-demand daemons on this machine: starting one more stops the least recently used first
    max_auto_daemons: int = 8
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Settings made any way (a file, the environment, flags, `replace`) are in range, so a bad
        one fails here in one line, not as a crash in a native library after a whole build."""
        for f in fields(self):
            if f.name != "extra":
                check_setting(f.name, getattr(self, f.name))


GIB_BYTES = 1 << 30
# inclusive bounds of every numeric setting (tests/test_config.py: each one has its bounds)
SETTING_RANGES: dict[str, tuple[float, float]] = {
    "max_file_bytes": (1, GIB_BYTES),
    "max_line_chars": (1, GIB_BYTES),
    "max_mean_line_chars": (1, GIB_BYTES),
    "max_chunk_chars": (1, GIB_BYTES),
    "text_window_lines": (1, 1_000_000),
    # below 8 a text is little more than the model's special tokens; past 512, the positions of the
    # BERT-size models the backends run (all-MiniLM-L6-v2's), the ONNX embedder failed mid-index
    "embed_max_tokens": (8, 512),
    "embed_body_lines": (0, 1_000_000),
    "embed_batch_size": (0, 65_536),
    "embed_min_chars": (0, GIB_BYTES),
    "hnsw_m": (2, 512),  # Chroma's HNSW crashes the process at 0 and finds a single neighbour at 1
    "hnsw_construction_ef": (1, 10_000),
    "hnsw_search_ef": (1, 10_000),
    "rrf_k": (0, 1_000_000),
    "weight_vector": (0.0, 1000.0),
    "weight_keyword": (0.0, 1000.0),
    "weight_graph": (0.0, 1000.0),
    "candidates": (1, 100_000),
    "min_idf": (0.0, 1000.0),
    "min_semantic_score": (-1.0, 1.0),  # a cosine similarity
    "debounce_ms": (0, 3_600_000),
    "daemon_embed_threads": (0, 1024),
    "embed_threads": (0, 1024),
    "daemon_idle_minutes": (0.01, 525_600.0),  # up to a year
    "daemon_dormant_minutes": (0.0, 525_600.0),
    "max_auto_daemons": (1, 100_000),
}
SETTING_CHOICES: dict[str, tuple[str, ...]] = {
    "embedder": EMBEDDERS, "embed_runtime": EMBED_RUNTIMES, "file_aggregation": FILE_AGGREGATIONS,
    "file_ranking": FILE_RANKINGS}


def check_setting(name: str, value: Any) -> None:
    """Refuse a value outside the setting's range (NaN and infinities included) or choices, naming
    the key, the value and what is allowed."""
    bounds = SETTING_RANGES.get(name)
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise ConfigError(f"setting {name!r} must be from {_number(bounds[0])} to {_number(bounds[1])}, not {value!r}")
    choices = SETTING_CHOICES.get(name)
    if choices is not None and value not in choices:
        raise ConfigError(f"setting {name!r} must be one of {', '.join(choices)}, not {value!r}")


def _number(value: float) -> str:
    return f"{value:,}".replace(",", "_") if isinstance(value, int) else f"{value:g}"


INDEX_AFFECTING = ("max_file_bytes", "max_line_chars", "max_mean_line_chars", "max_chunk_chars",
                   "text_window_lines", "model", "embed_max_tokens", "embed_body_lines", "embed_quantize",
                   "embed_min_chars", "embed_words")


def _coerce(name: str, value: Any, default: Any, source: str) -> Any:
    """A TOML or environment value as the type of the field's default, checked (`source` names
    where it came from, for the error)."""
    try:
        converted = _converted(value, default)
        check_setting(name, converted)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"{source}: setting {name!r} expects {_TYPE_WORDS[type(default)]}, got {value!r}") from None
    return converted


_TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def _converted(value: Any, default: Any) -> Any:
    """`value` as the type of `default`; a TOML value of another type (5 for a switch, 2.5 for a
    count) is refused rather than bent."""
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            return value.lower() in ("1", "true", "yes", "on")
        raise ValueError(value)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise TypeError(value)
    if isinstance(default, int):
        if isinstance(value, float):
            raise ValueError(value)
        return int(value)
    if isinstance(default, float):
        return float(value)
    if not isinstance(value, str):
        raise TypeError(value)
    return value


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
                values[key] = _coerce(key, value, known[key], str(path))
    env = os.environ if environ is None else environ
    for key, default in known.items():
        variable = "CODESEARCH_" + key.upper()
        raw = env.get(variable)
        if raw is not None and raw != "":
            values[key] = _coerce(key, raw, default, variable)
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key not in known:
            raise ConfigError(f"unknown setting {key!r}")
        values[key] = _coerce(key, value, known[key], "--" + key.replace("_", "-"))
    return replace(defaults, **values)
