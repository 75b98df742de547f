#!/usr/bin/env python3
"""What opening files safely costs, measured beside what it guards, in one process.

usage: scripts/bench_safe_open.py TREE [--index-dir DIR] [--rounds 7] [--files 2000]

- grep: for each pattern of bench_grep, ripgrep's run alone (`run_rg`) against the run with its
  check that no folder on each matched file's way changed meanwhile and that the access rule
  allows it (`run_rg_steadily`), in turns; the check is also timed alone, on the run's files.
- snippets: reading the first 64 KB of --files indexed files through `paths.read_inside` (open
  with O_NOFOLLOW and O_NONBLOCK, fstat, the descriptor's real path from /proc) against a plain
  open and read, in turns.
Prints medians in ms and the ratios. TREE must hold an index (`codesearch index TREE`).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_grep import PATTERNS
from benchlib import percentile

from codesearch.access import AccessRule
from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.paths import on_disk, read_inside, unsteady
from codesearch.search.requests import GrepRequest
from codesearch.search.ripgrep import run_rg, run_rg_steadily

READ_BYTES = 1 << 16
T = TypeVar("T")


def timed(work: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    out = work()
    return (time.perf_counter() - started) * 1000, out


def check(root: Path, index_dir: Path, names: list[str]) -> None:
    """What run_rg_steadily adds to a run that found these files and nothing changed."""
    access = AccessRule(root, index_dir)
    unsteady(root, names, time.time() - 1)
    for name in names:
        access.refusal(name)


def bench_grep(root: Path, index_dir: Path, rounds: int) -> None:
    print(f"{'grep pattern':<30}{'files':>7}{'rg':>9}{'checked':>9}{'ratio':>7}{'check alone':>13}")
    ratios = []
    for label, params in PATTERNS:
        request = GrepRequest(**params, limit=100_000)
        plain, checked, alone = [], [], []
        files = 0
        for _ in range(rounds):
            t, (hits, _) = timed(partial(run_rg, root, index_dir, request))
            plain.append(t)
            checked.append(timed(partial(run_rg_steadily, root, index_dir, request))[0])
            names = [name.removeprefix("./") for name in hits.files]
            alone.append(timed(partial(check, root, index_dir, names))[0])
            files = len(names)
        p, c, a = percentile(plain, 0.5), percentile(checked, 0.5), percentile(alone, 0.5)
        ratios.append(c / p)
        print(f"{label:<30}{files:>7,}{p:>9.1f}{c:>9.1f}{c / p:>7.2f}{a:>13.2f}")
    print(f"median ratio checked / rg: {percentile(ratios, 0.5):.3f}")


def bench_reads(root: Path, rels: list[str], rounds: int) -> None:
    def plain() -> int:
        total = 0
        for rel in rels:
            with open(on_disk(root, rel), "rb") as handle:
                total += len(handle.read(READ_BYTES))
        return total

    def safe() -> int:
        return sum(len(read_inside(root, rel, READ_BYTES) or b"") for rel in rels)

    plain_ms, safe_ms = [], []
    for _ in range(rounds):
        plain_ms.append(timed(plain)[0])
        safe_ms.append(timed(safe)[0])
    p, s = percentile(plain_ms, 0.5), percentile(safe_ms, 0.5)
    print(f"snippet reads of {len(rels):,} files: plain open {p:.1f} ms, read_inside {s:.1f} ms "
          f"({(s - p) / len(rels) * 1000:.1f} us a file more)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", type=Path)
    parser.add_argument("--index-dir", type=Path)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()
    root = args.tree.resolve()
    index = Index(root, load_settings(root), index_dir=args.index_dir)
    try:
        index_dir = index.dir
        rels = sorted(index.catalog.files.records())[:args.files]
    finally:
        index.close()
    bench_grep(root, index_dir, args.rounds)
    bench_reads(root, rels, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
