#!/usr/bin/env python3
"""Embedding on a CUDA GPU: the onnx embedder's GPU runtime (torch, float16) at several batch
sizes, against the sentence-transformers backend on the same GPU, on the same texts, in one run.

Usage: scripts/bench_gpu_embedding.py --texts FILE [--model DIR] [--runs 3] [--reference NAME=FILE.npy ...]
       scripts/bench_gpu_embedding.py --save-texts FILE [--chunks N] REPO_DIR...   (on a machine with the repositories)

The texts are what the indexer gives the model (scripts/bench_embedding.py samples them); a GPU
machine without the repositories or tree-sitter reads them from a JSON list (.json or .json.gz).
`--model`: a folder with the model's weights and tokenizer.json (the default: the packaged
all-MiniLM-L6-v2). Each variant embeds every text in calls of `--call` texts (256: what the
indexer hands the embedder at a time) and in one call; variants take turns in each of `--runs`
rounds, and the figure is the median round. It prints texts/s, the time spent tokenizing, a
short query's time (median of 50), and the cosine per text with each reference (vectors of the
first texts made elsewhere, e.g. on a CPU: mean and lowest).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from codesearch.embedding.onnx import OnnxEmbedder
from codesearch.embedding.sentence_transformer import SentenceTransformerEmbedder


def read_texts(path: Path) -> list[str]:
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return list(json.loads(raw))


def save_texts(path: Path, roots: list[Path], n: int) -> None:
    from bench_embedding import sample_chunks  # tree-sitter: only where the repositories are

    from codesearch.analysis.embed_text import embed_text_of
    from codesearch.config import Settings
    settings = Settings()
    texts = [embed_text_of(c, settings.embed_body_lines, settings.embed_words) for c in sample_chunks(roots, n)]
    data = json.dumps(texts).encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    print(f"{len(texts)} texts written to {path}")


def timed(embed, texts: list[str], call: int) -> float:
    started = time.perf_counter()
    for start in range(0, len(texts), call):
        embed(texts[start:start + call])
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=Path)
    parser.add_argument("--save-texts", type=Path)
    parser.add_argument("--chunks", type=int, default=20000)
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--call", type=int, default=256)
    parser.add_argument("--batches", default="128,256,512,1024")
    parser.add_argument("--reference", action="append", default=[], help="NAME=FILE.npy")
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of this script on a machine without a GPU")
    parser.add_argument("roots", nargs="*", type=Path)
    args = parser.parse_args()
    if args.save_texts:
        save_texts(args.save_texts, args.roots, args.chunks)
        return 0
    if not args.texts:
        parser.error("--texts FILE or --save-texts FILE REPO_DIR...")
    import torch
    gpu = args.device.startswith("cuda")
    if gpu and not torch.cuda.is_available():
        print("no CUDA GPU here: nothing to measure", file=sys.stderr)
        return 1
    sync = torch.cuda.synchronize if gpu else lambda: None
    texts = read_texts(args.texts)
    print(f"{torch.cuda.get_device_name() if gpu else 'CPU'}; torch {torch.__version__}; {len(texts)} texts")
    variants: dict[str, Any] = {}
    started = time.perf_counter()
    default = OnnxEmbedder(args.model, device="" if gpu else "cpu", runtime="auto" if gpu else "torch")
    default.encode_query("load")
    print(f"default embedder chose {default.chosen}, batch {default.batch_size}, "
          f"loaded in {time.perf_counter() - started:.1f} s")
    variants[f"onnx-default-b{default.batch_size}"] = default
    for batch in [int(b) for b in args.batches.split(",")]:
        if batch != default.batch_size:
            variants[f"onnx-torch-b{batch}"] = OnnxEmbedder(args.model, device=args.device, runtime="torch",
                                                            batch_size=batch)
    single = OnnxEmbedder(args.model, device=args.device, runtime="torch")
    single.encode_query("load")
    single._tokenizers = None  # the GPU runtime with one tokenizing thread: what the threads buy
    variants[f"onnx-b{single.batch_size}-1-tokenizer"] = single
    st = SentenceTransformerEmbedder(args.model, device=args.device, max_tokens=128)
    variants[f"st-{str(next(st.model.parameters()).dtype).removeprefix('torch.')}-b{st.batch_size}"] = st
    for embedder in variants.values():
        embedder.encode_documents(texts[:2048])  # loaded and warm before the clock starts
    references = {name: np.load(path) for name, path in (r.split("=", 1) for r in args.reference)}
    calls = {"calls": args.call, "one call": len(texts)}
    times: dict[tuple[str, str], list[float]] = {}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.runs):
        for name, embedder in variants.items():
            for how, size in calls.items():
                sync()
                times.setdefault((name, how), []).append(timed(embedder.encode_documents, texts, size))
            vectors[name] = embedder.encode_documents(texts[:2000])
    _, tokenizer = default._load()
    tokenize_s = timed(lambda part: default._tokenize(tokenizer, part), texts, len(texts))
    print(f"tokenizing all texts on the default's threads: {tokenize_s:.2f} s")
    head = "  ".join(f"{how} of {size}" for how, size in calls.items())
    print(f"{'variant':<20} texts/s ({head})   query p50   " + "   ".join(f"cos {r} mean/min" for r in references))
    for name, embedder in variants.items():
        rates = [len(texts) / statistics.median(times[(name, how)]) for how in calls]
        spent = []
        for i in range(50):
            begun = time.perf_counter()
            embedder.encode_query(f"retry with exponential backoff {i}")
            spent.append(time.perf_counter() - begun)
        agree = []
        for ref in references.values():
            cos = np.sum(vectors[name][:len(ref)] * ref[:len(vectors[name])], axis=1)
            agree.append(f"{cos.mean():.5f}/{cos.min():.5f}")
        print(f"{name:<20} {rates[0]:8.0f} {rates[1]:10.0f}   {1000 * statistics.median(spent):8.2f} ms   "
              + "   ".join(agree))
    if gpu:
        print(f"peak GPU memory {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
