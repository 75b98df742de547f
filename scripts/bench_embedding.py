#!/usr/bin/env python3
"""Embedding throughput of the backends and their settings on the same chunks, in one run.

Usage: scripts/bench_embedding.py [--chunks 300] [--runs 3] [--variants A,B,...] [--min-chars N] REPO_DIR...
Chunks are sampled (fixed seed) from the repositories' chunks, every kind but files (a file chunk
is one in ten or more of a repository's). Each variant but `default` embeds the same embedding
texts (the code texts an earlier indexer gave the model: kind, name, signature, docstring, 30 body
lines, as code), input cut at 128 tokens; the variants take turns in each of `--runs` rounds, and
the figure is the median round.

Variants (all by default):
  default         what an index does now, from the settings' defaults: the default embedder, its
                  texts (embed_words: words only, the body without what it repeats), its input
                  limit (embed_max_tokens) and the chunks it skips (embed_min_chars), its rate
                  over every sampled chunk. Its cosine is taken with torch-fp32 reading the same
                  texts at the same limit (the backend's faithfulness); the cosine with the
                  128-token code vectors is printed beside (what the shorter input changes)
  torch-q8        sentence-transformers, int8 dynamic quantization, batch 8: the torch
                  backend, the reference for speed
  torch-fp32      the same unquantized: the reference for the vectors (the model's own)
  ort-bN          ONNX Runtime on the int8-weight ONNX model, N texts a batch (8, 32, 64)
  ort-b32-1t      ... on one thread (the daemon's background embedding)
  ort-b32-nospin  ... intra-op threads that sleep instead of spinning while they wait
  ort-b32-basic   ... basic graph optimizations only (no fusions)
  ort-b32-par     ... parallel execution mode (operators side by side)
  ov-bN           OpenVINO on the same ONNX file (8, 32, 64)
  ov-b32-1t       ... on one thread
  ov-b32-bf16     ... bfloat16 inference precision (AVX-512 BF16)
  ov-b32-skip     the default (OpenVINO, batch 32), with chunks that say nothing skipped
                  (embed_min_chars, --min-chars): its rate counts every sampled chunk, as an
                  index does, over the time spent on those that get a vector
  ...-tN          an ov-bN, ort-bN or ov-b32-bf16 variant with its input cut at N tokens instead of 128 (e.g.
                  ov-b32-t96, ov-b32-bf16-t64): its cosine is still taken with the 128-token
                  fp32 vectors, so it shows what the shorter input loses
For each: chunks/s, against torch-q8, the cosine with torch-fp32 per chunk (mean and lowest), and
a short query's embedding time (median of 40), alone and while another thread embeds batches (as
in the daemon, whose searches go on beside its background embedding).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from codesearch.analysis.embed_text import embed_text_of, worth_embedding
from codesearch.config import Settings
from codesearch.embedding import onnx as onnx_backend
from codesearch.embedding.backends import create_embedder
from codesearch.embedding.onnx import OnnxEmbedder
from codesearch.embedding.sentence_transformer import SentenceTransformerEmbedder
from codesearch.ingest.extract import SkipFile, extract_file
from codesearch.ingest.walker import RepoWalker, SourceFile

ALL = ["default", "torch-q8", "torch-fp32",
       "ort-b8", "ort-b32", "ort-b64", "ort-b32-1t", "ort-b32-nospin", "ort-b32-basic",
       "ort-b32-par", "ov-b8", "ov-b32", "ov-b64", "ov-b32-1t", "ov-b32-bf16", "ov-b32-skip"]
QUERIES = ["retry with exponential backoff", "where are routes registered", "parse the config file",
           "HTTPException", "who calls render_template", "flag parsing for subcommands", "close the connection",
           "load environment variables"]


def sample_chunks(roots: list[Path], n: int) -> list:
    settings = Settings()
    chunks: list = []
    for root in roots:
        for entry in RepoWalker(root, settings).walk():
            if isinstance(entry, SourceFile):
                result = extract_file(entry.rel, entry.path, entry.language, settings)
                if not isinstance(result, SkipFile) and result.parsed is not None:
                    chunks.extend(c for c in result.chunks if c.kind != "file")
    random.Random(7).shuffle(chunks)
    return chunks[:n]


def _ort_with(**options) -> OnnxEmbedder:
    """The onnx embedder on ONNX Runtime with session options the product does not expose."""
    import onnxruntime
    model_path, _ = onnx_backend.model_files("all-MiniLM-L6-v2")
    opts = onnxruntime.SessionOptions()
    opts.intra_op_num_threads = 0
    opts.log_severity_level = 3
    for name, value in options.items():
        if name == "spinning":
            opts.add_session_config_entry("session.intra_op.allow_spinning", value)
        else:
            setattr(opts, name, value)
    session = onnxruntime.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
    embedder = OnnxEmbedder("all-MiniLM-L6-v2", runtime="onnxruntime", batch_size=32)
    _, tokenizer = embedder._load()
    embedder._loaded = (onnx_backend._mean_pooled(lambda ids, mask: session.run(
        None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]), tokenizer)
    return embedder


def _base(name: str) -> tuple[str, int]:
    """A variant's name without its token limit, and the limit (`ov-b32-t96` -> ov-b32, 96)."""
    limit = re.search(r"-t(\d+)$", name)
    return (name[:limit.start()], int(limit.group(1))) if limit else (name, 128)


def _ov_bf16(max_tokens: int) -> OnnxEmbedder:
    import openvino
    model_path, _ = onnx_backend.model_files("all-MiniLM-L6-v2")
    compiled = openvino.Core().compile_model(str(model_path), "CPU", {"PERFORMANCE_HINT": "LATENCY",
                                                                      "INFERENCE_PRECISION_HINT": "bf16"})
    embedder = OnnxEmbedder("all-MiniLM-L6-v2", runtime="openvino", batch_size=32, max_tokens=max_tokens)
    _, tokenizer = embedder._load()
    embedder._loaded = (onnx_backend._mean_pooled(lambda ids, mask: np.asarray(compiled.create_infer_request().infer(
        {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0])), tokenizer)
    return embedder


def make(variant: str) -> Any:
    """The embedder of a variant, loaded."""
    import onnxruntime
    name, max_tokens = _base(variant)
    level, mode = onnxruntime.GraphOptimizationLevel, onnxruntime.ExecutionMode
    st = lambda quantize: SentenceTransformerEmbedder("all-MiniLM-L6-v2", batch_size=8, max_tokens=128,
                                                      quantize=quantize)
    table: dict[str, Callable[[], object]] = {
        "torch-q8": lambda: st(True), "torch-fp32": lambda: st(False),
        "ort-b32-nospin": lambda: _ort_with(spinning="0"),
        "ort-b32-basic": lambda: _ort_with(graph_optimization_level=level.ORT_ENABLE_BASIC),
        "ort-b32-par": lambda: _ort_with(execution_mode=mode.ORT_PARALLEL, inter_op_num_threads=2),
        "ov-b32-bf16": lambda: _ov_bf16(max_tokens),
        "default": lambda: create_embedder(Settings()),
    }
    embedder: Any
    if name in table:
        embedder = table[name]()
    else:
        runtime, batch, *rest = name.split("-")
        embedder = OnnxEmbedder("all-MiniLM-L6-v2", runtime={"ort": "onnxruntime", "ov": "openvino"}[runtime],
                                batch_size=int(batch[1:]), threads=1 if "1t" in rest else 0, max_tokens=max_tokens)
    embedder.encode_query("warm up")  # loaded before the clock starts
    return embedder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--variants", default=",".join(ALL))
    parser.add_argument("--min-chars", type=int, default=Settings().embed_min_chars or 60,
                        help="the skip variant's embed_min_chars")
    parser.add_argument("roots", nargs="+", type=Path)
    args = parser.parse_args()
    names = args.variants.split(",")
    unknown = [n for n in names if _base(n)[0] not in ALL]
    if unknown:
        parser.error(f"unknown variants {unknown}; choose from {', '.join(ALL)}")
    chunks = sample_chunks(args.roots, args.chunks)
    defaults = Settings()
    body_lines = defaults.embed_body_lines
    texts = [embed_text_of(c, body_lines, False) for c in chunks]
    worth = [i for i, c in enumerate(chunks) if worth_embedding(c.kind, c.docstring, c.text, args.min_chars)]
    loads = [os.getloadavg()[0]]
    embedders = {name: make(name) for name in dict.fromkeys(["torch-fp32", *names])}
    times: dict[str, list[float]] = {name: [] for name in names}
    vectors: dict[str, np.ndarray] = {"torch-fp32": embedders["torch-fp32"].encode_documents(texts)}
    default_texts = [embed_text_of(c, body_lines, defaults.embed_words) for c in chunks]
    if "default" in names:  # the unquantized model reading the default's texts at its limit
        vectors["fp32-default"] = SentenceTransformerEmbedder(
            "all-MiniLM-L6-v2", batch_size=8, max_tokens=defaults.embed_max_tokens, quantize=False
        ).encode_documents(default_texts)
    for _ in range(args.runs):
        for name in names:
            if name == "default":
                subset = [default_texts[i] for i in worth]
            else:
                subset = [texts[i] for i in worth] if name.endswith("-skip") else texts
            started = time.perf_counter()
            out = embedders[name].encode_documents(subset)
            times[name].append(time.perf_counter() - started)
            vectors[name] = out if len(subset) == len(texts) else _spread(out, worth, vectors["torch-fp32"])
        loads.append(os.getloadavg()[0])
    skipping = [n for n in names if n == "default" or n.endswith("-skip")]
    query_ms = {name: _query_ms(embedders[name]) for name in names}
    beside_ms = {name: _query_ms(embedders[name], beside=texts[:64]) for name in names}
    print(f"{len(chunks)} chunks from {', '.join(str(r) for r in args.roots)}; {args.runs} rounds; "
          f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores")
    print(f"skip variant: {len(chunks) - len(worth)} of {len(chunks)} chunks get no vector "
          f"(embed_min_chars {args.min_chars})")
    reference = len(chunks) / statistics.median(times["torch-q8"]) if "torch-q8" in times else None
    print(f"  {'variant':<15} {'chunks/s':>8} {'vs torch-q8':>11}  {'cos with fp32 mean/lowest':>25}  "
          f"{'query alone / beside a batch':>28}")
    for name in names:
        rate = len(chunks) / statistics.median(times[name])
        against = "fp32-default" if name == "default" else "torch-fp32"
        agree = np.sum(vectors[name] * vectors[against], axis=1)
        if name in skipping:
            agree = agree[worth]
        ratio = f"x{rate / reference:.2f}" if reference else "-"
        print(f"  {name:<15} {rate:8.1f} {ratio:>11}  {float(agree.mean()):>17.4f} / {float(agree.min()):.4f}"
              f"  {query_ms[name]:12.1f} / {beside_ms[name]:6.1f} ms"
              f"   rounds: {', '.join(f'{len(chunks) / t:.1f}' for t in times[name])}")
    if "default" in names:
        moved = np.sum(vectors["default"] * vectors["torch-fp32"], axis=1)[worth]
        print(f"  default against the 128-token code vectors (what its texts and limit change): cosine "
              f"{float(moved.mean()):.4f} mean / {float(moved.min()):.4f} lowest")
    return 0


def _spread(out: np.ndarray, worth: list[int], like: np.ndarray) -> np.ndarray:
    """The subset's vectors in their places (zeros where no vector was made)."""
    full = np.zeros_like(like)
    full[worth] = out
    return full


def _query_ms(embedder, beside: list[str] | None = None) -> float:
    """Median time to embed a short query; `beside`: while another thread embeds these texts."""
    stop = threading.Event()

    def batches() -> None:
        while not stop.is_set():
            embedder.encode_documents(beside)
    worker = threading.Thread(target=batches) if beside else None
    if worker:
        worker.start()
        time.sleep(0.5)
    spent = []
    try:
        for i in range(40 if not beside else 20):
            started = time.perf_counter()
            embedder.encode_query(QUERIES[i % len(QUERIES)])
            spent.append(time.perf_counter() - started)
            if beside:
                time.sleep(0.05)
    finally:
        stop.set()
        if worker:
            worker.join()
    return statistics.median(spent) * 1000


if __name__ == "__main__":
    sys.exit(main())
