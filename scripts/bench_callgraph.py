#!/usr/bin/env python3
"""The call graph measured against type-aware tools: for each repository, index it (no vectors),
read every call site codesearch records and the definitions it links each to, sample call sites
(fixed seed), ask jedi (Python), gopls (Go) or scip-typescript (TypeScript/JavaScript) where each
called name is defined, and report edge precision and recall, overall, per language and per kind
of link (resolved edge, name-only guess, none), the share of name-only links, and links from calls
into code outside the repository (which should get none).

Usage: scripts/bench_callgraph.py [--repos-json FILE] [--bench-dir DIR] [--index-root DIR]
           [--sample N] [--seed S] [--json OUT] NAME|PATH ...
A NAME is a repository of --repos-json (its benchmark_root under --bench-dir is indexed); a PATH
is a folder indexed whole (NAME=PATH names it). Indexes go to --index-root/NAME (default: a temporary folder).
Install the tools with: pip install -e .[oracle] (jedi); apt-get install gopls golang;
npm install --prefix /tmp/scip @sourcegraph/scip-typescript@0.4.0 (or set SCIP_TYPESCRIPT).
A language whose tool is missing is reported as such and left out.
With --scip, each repository is also indexed with a SCIP index that scip-typescript makes of it
(`codesearch index --scip`), and reported beside the plain index as NAME+scip, with both index
times (scip-typescript's own time apart).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import shown_path
from callgraph_links import CallGraphView, CallSite, read_call_graph
from callgraph_oracles import Answer, OracleMissing, gopls_answers, jedi_answers, run_scip_typescript, scip_answers
from callgraph_score import name_only_share, score

from codesearch.config import load_settings
from codesearch.eval.bench import DEFAULT_CHECKOUTS, SHARED_BENCH, benchmark_roots
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer

Oracle = Callable[[Path, list[CallSite]], dict[CallSite, Answer]]
# language (as codesearch names it) -> (the tool's name, its oracle)
ORACLES: dict[str, tuple[str, Oracle]] = {
    "python": ("jedi", jedi_answers), "go": ("gopls", gopls_answers), "typescript": ("scip-typescript", scip_answers),
    "tsx": ("scip-typescript", scip_answers), "javascript": ("scip-typescript", scip_answers)}
SAMPLE_SITES = 500


def roots_of(targets: list[str], repos_json: Path, bench_dir: Path) -> list[tuple[str, Path]]:
    """(name, folder to index) for each NAME of repos.json, PATH or NAME=PATH given."""
    known = {repo["name"] for repo in json.loads(repos_json.read_text())} if repos_json.exists() else set()
    out = []
    for target in targets:
        if target in known:
            out += benchmark_roots(repos_json, bench_dir, [target])
        elif Path(target.partition("=")[2] or target).is_dir():
            name, _, path = target.rpartition("=") if "=" in target else ("", "", target)
            out.append((name or Path(path).resolve().name, Path(path).resolve()))
        else:
            raise SystemExit(f"{target}: neither a repository of {repos_json} nor a folder")
    return out


def sample_sites(view: CallGraphView, count: int, seed: int) -> list[CallSite]:
    """`count` call sites of the languages a tool covers, drawn with a fixed seed."""
    covered = sorted(site for site in view.links if view.languages.get(site.path) in ORACLES)
    return sorted(random.Random(seed).sample(covered, min(count, len(covered))))


def measure(name: str, root: Path, index_dir: Path, count: int, seed: int, scip: Path | None = None) -> dict:
    """One repository's figures (see callgraph_score.Tally); `scip`: the SCIP index to index with
    (none found at the root otherwise)."""
    settings = load_settings(None, {"scip": str(scip)} if scip else {"scip_discover": False})
    index = Index(root, settings, index_dir, create=True)
    try:
        started = time.perf_counter()
        Indexer(index).run(embed=False)
        seconds = time.perf_counter() - started
        view = read_call_graph(index)
    finally:
        index.close()
    sites = sample_sites(view, count, seed)
    answers: dict[CallSite, Answer] = {}
    missing: dict[str, str] = {}
    tools: dict[str, set[str]] = {}  # one run of each tool, for all the languages it covers
    for site in sites:
        tools.setdefault(ORACLES[view.languages[site.path]][0], set()).add(view.languages[site.path])
    for tool, languages in sorted(tools.items()):
        oracle = ORACLES[min(languages)][1]
        try:
            answers.update(oracle(root, [s for s in sites if view.languages[s.path] in languages]))
        except OracleMissing as exc:
            missing.update((language, f"{tool}: {exc}") for language in languages)
    measured = [s for s in sites if view.languages[s.path] not in missing]
    tallies = score(view, answers, measured)
    languages = {view.languages[s.path] for s in measured}
    return {"repo": name, "root": shown_path(root), "index_seconds": round(seconds, 3), "call_sites": len(view.links),
            "sampled": len(sites),
            "name_only_share_all_sites": name_only_share(view, languages), "missing_oracles": missing,
            "groups": {group: tally.figures() for group, tally in sorted(tallies.items())}}


def _measure_with_scip(name: str, root: Path, index_root: Path, count: int, seed: int) -> dict:
    """The repository indexed with the SCIP index scip-typescript makes of it (written beside the
    index, outside the repository)."""
    output = index_root / f"{name}.scip"
    output.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    run_scip_typescript(root.resolve(), output)
    made = time.perf_counter() - started
    result = measure(f"{name}+scip", root, index_root / f"{name}+scip", count, seed, scip=output)
    return {**result, "scip_typescript_seconds": round(made, 3)}


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def print_report(results: list[dict]) -> None:
    print(f"{'repository':<12} {'group':<20} {'sites':>5} {'unkn':>5} {'outs':>5} {'links':>5} {'prec':>7} "
          f"{'recall':>7} {'name-only':>9} {'false-out':>9}")
    for result in results:
        for language, why in result["missing_oracles"].items():
            print(f"{result['repo']:<12} {language}: oracle missing: {why}")
        for group, f in result["groups"].items():
            print(f"{result['repo']:<12} {group:<20} {f['sites']:>5} {f['unknown']:>5} {f['outside']:>5} "
                  f"{f['links']:>5} {_percent(f['precision']):>7} {_percent(f['recall']):>7} "
                  f"{_percent(f['name_only_share']):>9} {f['false_outside_sites']:>4}/{f['false_outside_links']:<4}")
        print(f"{result['repo']:<12} name-only share over all {result['call_sites']} call sites: "
              f"{_percent(result['name_only_share_all_sites'])}; indexed in {result['index_seconds']:.2f}s"
              + (f" (scip-typescript {result['scip_typescript_seconds']:.1f}s)" if "scip_typescript_seconds" in result
                 else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="+", metavar="NAME|PATH|NAME=PATH")
    parser.add_argument("--repos-json", type=Path, default=SHARED_BENCH / "repos.json")
    parser.add_argument("--bench-dir", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--index-root", type=Path, help="keep indexes in DIR/NAME (default: a temporary folder)")
    parser.add_argument("--sample", type=int, default=SAMPLE_SITES, help="call sites per repository")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--scip", action="store_true",
                        help="also index each repository with a SCIP index made by scip-typescript (NAME+scip)")
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-callgraph-") as scratch:
        index_root = args.index_root or Path(scratch)
        for name, root in roots_of(args.targets, args.repos_json, args.bench_dir):
            results.append(measure(name, root, index_root / name, args.sample, args.seed))
            print(f"[{name}] measured", file=sys.stderr)
            if args.scip:
                results.append(_measure_with_scip(name, root, index_root, args.sample, args.seed))
                print(f"[{name}+scip] measured", file=sys.stderr)
    print_report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
