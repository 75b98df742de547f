#!/usr/bin/env python3
"""How well the near-duplicate fingerprints find copied code, and how often the collapse must read
texts to be sure (search/collapse.py).

Every pair of code definitions of one name in one index (functions and methods; at most GROUP of
a name) is a copy when its texts' resemblance (runs of SHINGLE words shared) is COPY_RESEMBLANCE
or more. Per band of fingerprint distance, the pairs that are copies, alike (resemblance 0.4 and
more) and different; then, for each cut-off, the share of copies within it (recall) and the
different pairs that the fingerprints alone would call copies. The collapse calls a pair a copy at
CODE_BITS or less, reads the texts up to CANDIDATE_BITS, and never past it.

Usage: scripts/bench_near_duplicates.py [--index-root DIR ...] [--json OUT]
Each index under an --index-root (default: the benchmark's and the docs-heavy set's) is read as
it is; its files are read from the root its catalog names.
"""

from __future__ import annotations

import argparse
import itertools
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import write_results

from codesearch.analysis.content_class import CLASS_NUMBERS
from codesearch.analysis.fingerprint import distance
from codesearch.model import Chunk
from codesearch.search.collapse import CALLABLE_KINDS, CANDIDATE_BITS, CODE_BITS, COPY_RESEMBLANCE, Resemblance
from codesearch.search.source import fill_text

DEFAULT_ROOTS = [Path.home() / ".cache" / name for name in ("codesearch-bench-index", "codesearch-bench-docs-index")]
GROUP = 30
ALIKE = 0.4
CUTS = (CODE_BITS, 5, 7, 9, 11, 13, CANDIDATE_BITS, 20)


def pairs_of(index_dir: Path) -> list[tuple[int, float]]:
    """(fingerprint distance, text resemblance) of each pair of one name's code definitions."""
    db = sqlite3.connect(f"file:{index_dir / 'catalog.sqlite3'}?mode=ro", uri=True)
    root = Path(db.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()[0])
    kinds = ",".join(f"'{k}'" for k in sorted(CALLABLE_KINDS))
    rows = db.execute(
        "SELECT c.id, c.kind, c.name, f.path, f.language, c.start_line, c.end_line, c.fingerprint FROM chunks c "
        f"JOIN files f USING (fid) WHERE c.fingerprint IS NOT NULL AND c.kind IN ({kinds}) AND c.content_class = ?",
        (CLASS_NUMBERS["code"],)).fetchall()
    db.close()
    by_name: dict[str, list[tuple[Chunk, int]]] = defaultdict(list)
    for cid, kind, name, path, language, start, end, fingerprint in rows:
        if len(by_name[name]) < GROUP:
            by_name[name].append((Chunk(cid, None, path, language, kind, name, name, "", "", start, end, "", "", ""),
                                  fingerprint))
    resemblance = Resemblance(lambda chunks: fill_text(root, chunks))
    return [(distance(fa, fb), resemblance(a, b)) for group in by_name.values()
            for (a, fa), (b, fb) in itertools.combinations(group, 2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index-root", type=Path, action="append")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    pairs: list[tuple[int, float]] = []
    for index_root in args.index_root or DEFAULT_ROOTS:
        for index_dir in sorted(p for p in index_root.iterdir() if (p / "catalog.sqlite3").exists()):
            of_index = pairs_of(index_dir)
            print(f"{index_dir.name:<20} {len(of_index):>7} pairs", file=sys.stderr)
            pairs.extend(of_index)
    copies = [bits for bits, r in pairs if r >= COPY_RESEMBLANCE]
    alike = [bits for bits, r in pairs if ALIKE <= r < COPY_RESEMBLANCE]
    different = [bits for bits, r in pairs if r < ALIKE]
    print(f"\n{len(pairs)} pairs of one name's definitions: {len(copies)} copies (resemblance >= "
          f"{COPY_RESEMBLANCE}), {len(alike)} alike, {len(different)} different")
    print(f"{'bits <=':>8}{'copies found':>14}{'recall':>8}{'alike':>8}{'different':>11}")
    rows = []
    for cut in CUTS:
        found = sum(b <= cut for b in copies)
        row = {"bits": cut, "copies": found, "recall": round(found / max(1, len(copies)), 3),
               "alike": sum(b <= cut for b in alike), "different": sum(b <= cut for b in different)}
        rows.append(row)
        print(f"{cut:>8}{found:>14}{row['recall']:>8.2f}{row['alike']:>8}{row['different']:>11}")
    doubt = sum(CODE_BITS < b <= CANDIDATE_BITS for b, _ in pairs)
    print(f"pairs whose texts the collapse reads (CODE_BITS < bits <= CANDIDATE_BITS): {doubt} of {len(pairs)}")
    if args.json:
        write_results(args.json, {"pairs": len(pairs), "copies": len(copies), "alike": len(alike),
                                  "different": len(different), "cuts": rows, "read": doubt})


if __name__ == "__main__":
    main()
