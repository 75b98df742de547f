#!/usr/bin/env python3
"""What a SCIP index costs an index: a folder indexed from scratch without vectors, with resolution
by name alone (`scip_discover` off) and with a SCIP index (`scip` set), the two alternating, each
run into a fresh index folder; the median and every run of each.

Usage: scripts/callgraph_scip_timing.py ROOT SCIP_FILE [--runs N] [--scratch DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer


def index_seconds(root: Path, folder: Path, overrides: dict) -> float:
    shutil.rmtree(folder, ignore_errors=True)
    index = Index(root, load_settings(None, overrides), folder, create=True)
    try:
        started = time.perf_counter()
        Indexer(index).run(embed=False)
        return time.perf_counter() - started
    finally:
        index.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("scip", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scratch", type=Path, help="where the indexes go (default: a temporary folder)")
    args = parser.parse_args(argv)
    variants: dict[str, dict] = {"resolution by name": {"scip_discover": False},
                "with the SCIP index": {"scip": str(args.scip.resolve())}}
    times: dict[str, list[float]] = {label: [] for label in variants}
    with tempfile.TemporaryDirectory(prefix="scip-timing-") as scratch:
        where = args.scratch or Path(scratch)
        for _ in range(args.runs):
            for label, overrides in variants.items():
                times[label].append(index_seconds(args.root.resolve(), where / label.replace(" ", "-"), overrides))
    for label, values in times.items():
        print(f"{label:<20} median {statistics.median(values):.2f} s   runs {', '.join(f'{v:.2f}' for v in values)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
