#!/usr/bin/env python3
"""Embedding throughput: the naive baseline against codesearch's settings, in one run.

Usage: scripts/bench_embedding.py [--chunks 400] [--runs 3] REPO_DIR...
Chunks are sampled (fixed seed) from the repositories' code chunks. Variants:
  naive      every chunk's full text through model.encode with default settings
  bounded    kind + qualified name + signature + docstring + first 30 body lines, length-sorted,
             batch 8, input cut at 256 tokens (the model's own limit)
  bounded+q  the same with int8 dynamic quantization of the linear layers (torch)
  +q,128tok  bounded+q with the input cut at 128 tokens: the torch backend's default
  fp32,128   bounded, no quantization, 128 tokens: the reference the quantized variants approximate
  onnx,128   the onnx backend (int8 ONNX Runtime, no torch), 128 tokens
Also prints the cosine agreement of each variant's vectors with the naive ones, with fp32,128
(the same input unquantized) and with +q,128tok, the mean over chunks and the lowest.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from codesearch.analysis.embed_text import embed_text
from codesearch.config import Settings
from codesearch.embedding.sentence_transformer import SentenceTransformerEmbedder as Embedder
from codesearch.ingest.extract import SkipFile, extract_file
from codesearch.ingest.walker import RepoWalker, SourceFile


def sample_chunks(roots: list[Path], n: int) -> list:
    settings = Settings()
    chunks = []
    for root in roots:
        for entry in RepoWalker(root, settings).walk():
            if isinstance(entry, SourceFile):
                result = extract_file(entry.rel, entry.path, entry.language, settings)
                if not isinstance(result, SkipFile) and result.parsed is not None:
                    chunks.extend(c for c in result.chunks if c.kind != "file")
    random.Random(7).shuffle(chunks)
    return chunks[:n]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=400)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("roots", nargs="+", type=Path)
    args = parser.parse_args()
    chunks = sample_chunks(args.roots, args.chunks)
    settings = Settings()
    full = [f"{c.header}\n{c.text}" for c in chunks]
    bounded = [embed_text(c.kind, c.qualified_name, c.signature, c.docstring, c.text, settings.embed_body_lines)
               for c in chunks]
    base = Embedder(settings.model, max_tokens=256)
    model = base.model

    def naive():
        return model.encode(full, normalize_embeddings=True, show_progress_bar=False)

    def ours():
        return base.encode_documents(bounded)

    quant = Embedder(settings.model, max_tokens=256, quantize=True)

    def ours_q():
        return quant.encode_documents(bounded)

    short = Embedder(settings.model, max_tokens=128, quantize=True)

    def ours_q_short():
        return short.encode_documents(bounded)

    reference = Embedder(settings.model, max_tokens=128)

    def fp32_short():
        return reference.encode_documents(bounded)

    from codesearch.embedding.onnx import OnnxEmbedder
    onnx = OnnxEmbedder(settings.model, max_tokens=128)

    def onnx_short():
        return onnx.encode_documents(bounded)

    variants = {"naive": naive, "bounded": ours, "bounded+q": ours_q, "+q,128tok": ours_q_short,
                "fp32,128": fp32_short, "onnx,128": onnx_short}
    times = {name: [] for name in variants}
    vectors = {}
    for _ in range(args.runs):
        for name, fn in variants.items():
            t = time.perf_counter()
            vectors[name] = np.asarray(fn())
            times[name].append(time.perf_counter() - t)
    import torch
    print(f"{len(chunks)} chunks, {args.runs} runs, torch threads {torch.get_num_threads()}")
    naive_rate = len(chunks) / statistics.median(times["naive"])
    print(f"  {'':<10} {'chunks/s':>8}  {'x naive':>7}  cos with: {'naive':>11}  {'fp32,128':>11}  {'+q,128tok':>11}"
          "  (mean/lowest)")
    for name in variants:
        rate = len(chunks) / statistics.median(times[name])
        agree = [np.sum(vectors[name] * vectors[other], axis=1) for other in ("naive", "fp32,128", "+q,128tok")]
        cells = "  ".join(f"{float(a.mean()):.4f}/{float(a.min()):.3f}" for a in agree)
        print(f"  {name:<10} {rate:8.1f}  x{rate / naive_rate:6.2f}  {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
