#!/usr/bin/env python3
"""Call edges drawn for checking by hand, where no type-aware tool is installed for a language:
index a repository (no vectors), list every call edge codesearch links (a call site and one
definition it links that site to, resolved or left to a name-only guess), draw a sample with a
fixed seed, and print each edge's site, the called name, the target and how it was resolved,
with the source line at each end, so that a reader can decide whether the target is right.

Usage: scripts/callgraph_handcheck.py [--repos-json FILE] [--bench-dir DIR] [--index-dir DIR]
           [--language LANG ...] [--sample N] [--seed S] [--json OUT] [--verdicts FILE]
           NAME|PATH
A NAME is a repository of --repos-json (its benchmark_root under --bench-dir is indexed); a PATH
is a folder indexed whole. --index-dir keeps the index (updated in place on the next run).
--json writes the sample as a list of {site, name, target, how, verdict, reason}, verdict and
reason left empty to fill in (or carried over from --verdicts, a file of such lists, or of an
object whose values are such lists, matched by site, name and target), and the verdicts are
counted per `how`. The codesearch package on PYTHONPATH is the one measured (an older checkout's,
for a "before"); an index kept with --index-dir is not parsed again after a change to the parser.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_callgraph import roots_of
from callgraph_links import NONE, RESOLVED, CallGraphView, CallSite, Definition, read_call_graph

from codesearch.config import load_settings
from codesearch.eval.bench import DEFAULT_CHECKOUTS, SHARED_BENCH
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer

GUESS_HOW = "name-only guess"  # a site left to the name's first definitions when read


def call_edges(view: CallGraphView, languages: set[str]) -> list[tuple[CallSite, Definition, str]]:
    """(site, target, how) for every link of every call site in these languages (all, if empty),
    in a fixed order."""
    by_id = {d.id: d for found in view.definitions.values() for d in found}
    edges = []
    for site, links in view.links.items():
        if links.kind == NONE or (languages and view.languages.get(site.path) not in languages):
            continue
        how = (links.how or "resolved") if links.kind == RESOLVED else GUESS_HOW
        edges += [(site, by_id[t], how) for t in links.targets if t in by_id]
    return sorted(edges, key=lambda e: (e[0], e[1].path, e[1].start_line, e[1].id))


def source_line(root: Path, path: str, line: int) -> str:
    try:
        lines = (root / path).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def entry(root: Path, site: CallSite, target: Definition, how: str) -> dict:
    """One edge as the JSON file holds it (verdict and reason to fill in)."""
    return {"site": f"{site.path}:{site.line}", "name": site.name,
            "target": f"{target.path}:{target.name_line or target.start_line} {target.name}", "how": how,
            "site_text": source_line(root, site.path, site.line),
            "target_text": source_line(root, target.path, target.name_line or target.start_line),
            "verdict": "", "reason": ""}


def _key(item: dict) -> tuple[str, str, str]:
    return item["site"], item["name"], item["target"]


def tally(sample: list[dict]) -> dict[str, Counter]:
    """how -> verdicts counted (right, wrong, or unchecked)."""
    out: dict[str, Counter] = {}
    for item in sample:
        out.setdefault(item["how"], Counter())[item["verdict"] or "unchecked"] += 1
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", metavar="NAME|PATH")
    parser.add_argument("--repos-json", type=Path, default=SHARED_BENCH / "repos.json")
    parser.add_argument("--bench-dir", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--index-dir", type=Path, help="keep the index here (default: a temporary folder)")
    parser.add_argument("--language", action="append", default=[],
                        help="only call sites in files of this language (as codesearch names it); repeatable")
    parser.add_argument("--sample", type=int, default=50, help="call edges to draw")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the sample here, with verdicts to fill in")
    parser.add_argument("--verdicts", type=Path, help="a filled-in sample: carry its verdicts over and count them")
    args = parser.parse_args(argv)
    root = roots_of([args.target], args.repos_json, args.bench_dir)[0][1]
    with tempfile.TemporaryDirectory(prefix="callgraph-handcheck-") as scratch:
        index = Index(root, load_settings(None, {"scip_discover": False}), args.index_dir or Path(scratch),
                      create=True)
        try:
            Indexer(index).run(embed=False)
            view = read_call_graph(index)
        finally:
            index.close()
    edges = call_edges(view, set(args.language))
    drawn = sorted(random.Random(args.seed).sample(edges, min(args.sample, len(edges))),
                   key=lambda e: (e[0], e[1].path, e[1].start_line))
    sample = [entry(root, *edge) for edge in drawn]
    if args.verdicts:
        filled = json.loads(args.verdicts.read_text())
        lists = [v for v in filled.values() if isinstance(v, list)] if isinstance(filled, dict) else [filled]
        known = {_key(item): item for entries in lists for item in entries}
        for item in sample:
            if _key(item) in known:
                item["verdict"], item["reason"] = known[_key(item)]["verdict"], known[_key(item)]["reason"]
    print(f"{root}: {len(edges)} call edges, {len(sample)} drawn (seed {args.seed}); "
          f"by how, all edges: {dict(sorted(Counter(how for _, _, how in edges).items()))}")
    for number, item in enumerate(sample, 1):
        print(f"{number:>3}. {item['site']}  {item['name']}  ->  {item['target']}  [{item['how']}]"
              + (f"  {item['verdict']}" if item["verdict"] else ""))
        print(f"       site:   {item['site_text']}")
        print(f"       target: {item['target_text']}")
    for how, counts in sorted(tally(sample).items()):
        print(f"{how:<16} " + ", ".join(f"{verdict} {n}" for verdict, n in sorted(counts.items())))
    if args.json:
        args.json.write_text(json.dumps(sample, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
