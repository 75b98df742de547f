#!/usr/bin/env python3
"""Does fusion that adapts to each query help on the benchmark half it was not tuned on?

Usage: scripts/bench_fusion.py [--bench-dir ~/.cache/codesearch-bench] [--index-root
           ~/.cache/codesearch-bench-index] [--cases RAISE_CASES.json] [--json OUT] [NAME ...]

Every benchmark question (scripts/bench_quality.py: NDCG@10) and raise-site case
(scripts/bench_raise.py: Acc@1) is searched once with the indexes scripts/bench_quality.py
builds, its retrievers' lists and scores kept; the rest of the search (fusion, ranking, collapsing)
is then replayed under each fusion variant: other RRF k for the keyword or vector list, the keyword
list's first results counted more. A rule gives a query one variant when a signal its lists carry
(the keyword list's lead: BM25 of its first result against the second, or against the mean of the
second to fifth; the vector list's lead in cosine; the share of the top 10 both lists hold) or its
shape (words, terms, a bare name) passes a threshold, and the default fusion otherwise. Rules are
chosen on one half (codesearch/eval/bench.py HALVES): neither figure of that half lower, their
gains' sum highest (NDCG@10 plus raise Acc@1); the chosen rule is then reported on the other half.
A fitted gate per variant (a ridge regression of the variant's gain on a query from its signals,
learned on one half) is reported on the other half the same way.
Also shown: the NDCG@10 the default fusion loses, by where each missed question's answer lay in
the retrievers' lists (the top 3 of which, a place below, none): what fusion and ranking could
still win, and what only retrieval could.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_raise import DEFAULT_CASES, rank_of
from benchlib import write_results

from codesearch.config import load_settings
from codesearch.eval.bench import DEFAULT_CHECKOUTS, SHARED_BENCH, benchmark_roots, half_of
from codesearch.eval.metrics import RelevantSpan, matches, mean, score_query
from codesearch.indexing.index import Index
from codesearch.search.query import Query
from codesearch.search.ranking import IDENTIFIER, QUALIFIER, Ranked, RankingOptions, rank
from codesearch.search.requests import SearchRequest
from codesearch.search.searcher import Searcher, fusion_weights

QUALITY_LIMIT = 30  # results asked per question, as scripts/bench_quality.py asks
RAISE_LIMIT = 10  # and per raise case, as scripts/bench_raise.py asks
QUANTILES = [i / 20 for i in range(1, 20)]  # a signal's thresholds: these quantiles of its values
RIDGE = 10.0  # the fitted gate's L2 penalty (its signals standardized over the half it learns from)
RESAMPLES = 2000  # of the paired bootstrap of a variant's NDCG@10 change (questions drawn within each repository)


@dataclass(frozen=True)
class Variant:
    """A fusion: RRF k per list (others the setting's), the keyword list's first `top` results times `lift`."""

    k: dict[str, float] = field(default_factory=dict)
    top: int = 0
    lift: float = 1.0


DEFAULT = "default"
VARIANTS = {DEFAULT: Variant(), "keyword k30": Variant({"keyword": 30}), "keyword k15": Variant({"keyword": 15}),
            "vector k120": Variant({"vector": 120}),
            "keyword k30, vector k120": Variant({"keyword": 30, "vector": 120}),
            "k120": Variant({"keyword": 120, "vector": 120}), "k240": Variant({"keyword": 240, "vector": 240}),
            "keyword top x2": Variant(top=1, lift=2), "keyword top x4": Variant(top=1, lift=4),
            "keyword top 3 x2": Variant(top=3, lift=2)}


def fuse(lists: dict[str, list[str]], weights: dict[str, float], k: float, variant: Variant) -> list[tuple[str, float]]:
    """Weighted RRF (search/fusion.py) with the variant's k per list and lift of the keyword list's top."""
    scores: dict[str, float] = {}
    for name, ids in lists.items():
        list_k = variant.k.get(name, k)
        for place, item in enumerate(dict.fromkeys(ids), start=1):
            share = weights.get(name, 1.0) / (list_k + place)
            scores[item] = scores.get(item, 0.0) + share * (variant.lift if name == "keyword" and place <= variant.top
                                                            else 1.0)
    return sorted(scores.items(), key=lambda pair: -pair[1])


class ReplaySearcher(Searcher):
    """A searcher that answers from recorded retriever lists and fuses them as `variant` says."""

    recorded: dict[str, tuple[list[str], list[float]]] = {}
    variant = Variant()

    def _retrieve(self, query, names, limit, side_by_side=True):
        lists = {n: list(self.recorded[n][0]) for n in names}
        return lists, {n: list(self.recorded[n][1]) for n in names}, dict.fromkeys(names, ""), {}, []

    def _rank(self, query: Query, lists: dict[str, list[str]], options: RankingOptions,
              exact: dict[str, float] | None = None, templates: dict[str, float] | None = None) -> list[Ranked]:
        fused = fuse(lists, fusion_weights(self.settings, lists, query.long), self.settings.rrf_k, self.variant)
        taken = {i for i, _ in fused}
        fused += [(i, 0.0) for i in exact or {} if i not in taken]
        chunks = self.catalog.files.chunks_by_ids([i for i, _ in fused])
        return rank(query, [(chunks[i], score) for i, score in fused if i in chunks], options,
                    self.vendored_folders(), exact or {}, templates or {})


def code_names(text: str) -> set[str]:
    """The names a query writes as code (`bats_pipe`, `safeParse`, `Plug.Conn`: the last part), lower-cased."""
    return {QUALIFIER.split(m)[-1].lower() for m in IDENTIFIER.findall(text)
            if "_" in m.strip("_") or QUALIFIER.search(m) or re.search(r"[a-z][A-Z]", m)}


def signals(query: Query, recorded: dict[str, tuple[list[str], list[float]]], top_name: str) -> dict[str, float]:
    """What a query's lists and shape say, before fusion (`top_name`: the keyword list's first chunk's name)."""
    keyword_ids, keyword = recorded["keyword"]
    vector_ids, vector = recorded["vector"]
    rest = keyword[1:5]
    found = {
        "keyword_lead": (keyword[0] - keyword[1]) / abs(keyword[0]) if len(keyword) > 1 and keyword[0] else 0.0,
        "keyword_lead_5": keyword[0] / mean(rest) if rest and mean(rest) else 0.0,
        "vector_lead_5": vector[0] - mean(vector[1:5]) if len(vector) > 1 else 0.0,
        "agreement_10": len(set(keyword_ids[:10]) & set(vector_ids[:10])) / 10,
        "words": float(len(query.text.split())), "terms": float(len(query.terms)), "symbol": float(query.symbol),
        "keyword_top_named": float(top_name.lower() in code_names(query.text))}
    return found


@dataclass
class Case:
    """One query of either benchmark: its half, its signals, and its outcome under each variant."""

    kind: str  # "quality" (outcome NDCG@10) or "raise" (outcome the truth's rank, 0 when not in the top 10)
    repo: str
    half: str
    signals: dict[str, float]
    outcome: dict[str, float]
    found_at: dict[str, int]  # a question's: each list's best place of a chunk of its answer (0: none)


def replay(searcher: ReplaySearcher, text: str, limit: int, judge: Callable[[list], float],
           targets: list[RelevantSpan]) -> tuple[dict, dict, dict]:
    """(signals, variant -> outcome, list -> best place of a chunk matching `targets`) of one
    query, its lists recorded once."""
    query = Query.parse(text)
    recorded: dict[str, tuple[list[str], list[float]]] = {}
    lists: dict[str, list[str]] = {}
    for name in ("keyword", "vector", "graph"):
        hits = searcher.retriever(name).search(query, max(searcher.settings.candidates, limit * 3), lists)
        lists[name], recorded[name] = hits.ids, (hits.ids, hits.scores)
    searcher.recorded = recorded
    top = searcher.catalog.files.chunks_by_ids(lists["keyword"][:1])
    outcome = {}
    for name, variant in VARIANTS.items():
        searcher.variant = variant
        outcome[name] = judge(list(searcher.search(SearchRequest(query=text, limit=limit), side_by_side=False).results))
    return signals(query, recorded, top[lists["keyword"][0]].name if top else ""), outcome, places(
        searcher, lists, targets)


def places(searcher: Searcher, lists: dict[str, list[str]], targets: list[RelevantSpan]) -> dict[str, int]:
    """Each list's best 1-based place of a chunk that matches one of `targets` (0: none does)."""
    if not targets:
        return {}
    chunks = searcher.catalog.files.chunks_by_ids(list({i for ids in lists.values() for i in ids}))
    found = {}
    for name, ids in lists.items():
        hits = (place for place, i in enumerate(ids, start=1) if i in chunks and any(
            matches({"path": chunks[i].path, "start_line": chunks[i].start_line, "end_line": chunks[i].end_line,
                     "kind": chunks[i].kind}, t) for t in targets))
        found[name] = next(hits, 0)
    return found


def losses(cases: list[Case], half: str) -> dict[str, tuple[int, float]]:
    """Where the answers of a half's questions that the default fusion ranks below 1 NDCG@10 lay in
    the lists: bucket -> (questions, NDCG@10 lost, summed over them)."""
    found: dict[str, tuple[int, float]] = {}
    for c in cases:
        if c.kind != "quality" or c.half != half or c.outcome[DEFAULT] >= 1.0 - 1e-9:
            continue
        best = min([p for p in c.found_at.values() if p] or [0])
        top = "+".join(n for n, p in c.found_at.items() if 0 < p <= 3)
        bucket = (f"in the top 3 of {top}" if top else "in no list" if not best
                  else "best place 4-10" if best <= 10 else "best place 11-100")
        count, lost = found.get(bucket, (0, 0.0))
        found[bucket] = (count + 1, lost + 1.0 - c.outcome[DEFAULT])
    return found


def figure(cases: list[Case], choose: Callable[[dict[str, float]], str], kind: str, half: str) -> float:
    """NDCG@10 (mean over repositories) or raise Acc@1 (mean over cases) of one half under a rule."""
    chosen = [c for c in cases if c.kind == kind and c.half == half]
    if kind == "raise":
        return mean([1.0 if c.outcome[choose(c.signals)] == 1 else 0.0 for c in chosen])
    by_repo: dict[str, list[float]] = defaultdict(list)
    for c in chosen:
        by_repo[c.repo].append(c.outcome[choose(c.signals)])
    return mean([mean(v) for v in by_repo.values()])


def interval(cases: list[Case], variant: str, half: str) -> tuple[float, float]:
    """The 95% interval of `variant`'s NDCG@10 change on one half, by a paired bootstrap of each
    repository's questions (seeded: a rerun gives the same interval)."""
    gains: dict[str, list[float]] = defaultdict(list)
    for c in cases:
        if c.kind == "quality" and c.half == half:
            gains[c.repo].append(c.outcome[variant] - c.outcome[DEFAULT])
    draw = random.Random(0)
    means = sorted(mean([mean(draw.choices(g, k=len(g))) for g in gains.values()]) for _ in range(RESAMPLES))
    return means[int(0.025 * RESAMPLES)], means[int(0.975 * RESAMPLES) - 1]


def fitted_gate(cases: list[Case], variant: str, half: str) -> Callable[[dict[str, float]], str]:
    """A ridge regression, learned on one half's cases, of what `variant` gains on a query (NDCG@10,
    or a raise case's Acc@1) from its signals; the variant where it predicts a gain."""
    learned = [c for c in cases if c.half == half]
    names = list(learned[0].signals)
    x = np.array([[c.signals[n] for n in names] for c in learned])
    centre, spread = x.mean(axis=0), x.std(axis=0) + 1e-9
    gains = [c.outcome[variant] - c.outcome[DEFAULT] if c.kind == "quality"
             else float(c.outcome[variant] == 1) - float(c.outcome[DEFAULT] == 1) for c in learned]
    a = np.hstack([(x - centre) / spread, np.ones((len(learned), 1))])
    w = np.linalg.solve(a.T @ a + RIDGE * np.eye(a.shape[1]), a.T @ np.array(gains))

    def choose(s: dict[str, float]) -> str:
        row = (np.array([s[n] for n in names]) - centre) / spread
        return variant if float(np.append(row, 1.0) @ w) > 0 else DEFAULT
    return choose


Chooser = Callable[[dict[str, float]], str]  # a query's signals -> the fusion variant it gets


def always(variant: str) -> Chooser:
    return lambda signals: variant


def above(signal: str, threshold: float, variant: str) -> Chooser:
    return lambda signals: variant if signals[signal] > threshold else DEFAULT


def at_most(signal: str, threshold: float, variant: str) -> Chooser:
    return lambda signals: variant if signals[signal] <= threshold else DEFAULT


def rules(cases: list[Case]) -> list[tuple[str, Callable[[dict[str, float]], str]]]:
    """Every variant always, and for each signal and threshold, each variant above it or at most it."""
    found: list[tuple[str, Callable[[dict[str, float]], str]]] = [
        (f"always {v}", always(v)) for v in VARIANTS if v != DEFAULT]
    for signal in cases[0].signals:
        values = sorted(c.signals[signal] for c in cases)
        for threshold in sorted({values[int(q * len(values))] for q in QUANTILES}):
            for v in VARIANTS:
                if v != DEFAULT:
                    found.append((f"{signal} > {threshold:.3g}: {v}", above(signal, threshold, v)))
                    found.append((f"{signal} <= {threshold:.3g}: {v}", at_most(signal, threshold, v)))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench-dir", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--index-root", type=Path, default=Path.home() / ".cache/codesearch-bench-index")
    parser.add_argument("--annotations", type=Path, default=SHARED_BENCH / "annotations")
    parser.add_argument("--repos-json", type=Path, default=SHARED_BENCH / "repos.json")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="the raise-site cases")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()

    raise_cases: dict[str, list[dict]] = defaultdict(list)
    for case in json.loads(args.cases.read_text()):
        raise_cases[case["repo"]].append(case)
    cases: list[Case] = []
    for name, root in benchmark_roots(args.repos_json, args.bench_dir, args.names):
        t = time.monotonic()
        index = Index(root, load_settings(None, {}), args.index_root / name, create=True)
        searcher = ReplaySearcher(index)
        for q in json.loads((args.annotations / f"{name}.json").read_text()):
            def ndcg(results: list, q: dict = q) -> float:
                return score_query([r.to_dict() for r in results], q["relevant"], q.get("secondary", []))["ndcg@10"]
            targets = [RelevantSpan.parse(t) for t in [*q["relevant"], *q.get("secondary", [])]]
            cases.append(Case("quality", name, half_of(name), *replay(searcher, q["query"], QUALITY_LIMIT, ndcg,
                                                                      targets)))
        for rc in raise_cases[name]:
            def place(results: list, rc: dict = rc) -> float:
                return rank_of([(r.path, r.start_line, r.end_line) for r in results], rc)
            cases.append(Case("raise", name, rc["half"], *replay(searcher, rc["query"], RAISE_LIMIT, place, [])))
        index.close()
        print(f"[{name}] {time.monotonic() - t:.0f}s", file=sys.stderr)

    base = {(kind, h): figure(cases, lambda s: DEFAULT, kind, h) for kind in ("quality", "raise") for h in "AB"}
    print("\nevery query one variant (change against the default fusion; NDCG@10, raise Acc@1):")
    print(f"  {'variant':<26} {'NDCG A':>8} {'NDCG B':>8} {'raise A':>8} {'raise B':>8}"
          "   NDCG A, 95% interval   NDCG B, 95% interval")
    print(f"  {'default':<26} " + " ".join(f"{base[key]:>8.3f}" for key in sorted(base)))
    variants: dict[str, dict] = {}
    for v in VARIANTS:
        if v != DEFAULT:
            changes = {f"{kind} {h}": figure(cases, always(v), kind, h) - base[(kind, h)]
                       for kind in ("quality", "raise") for h in "AB"}
            bounds = {h: interval(cases, v, h) for h in "AB"}
            variants[v] = {**changes, **{f"quality {h} interval": list(bounds[h]) for h in "AB"}}
            print(f"  {v:<26} " + " ".join(f"{changes[key]:>+8.3f}" for key in sorted(changes))
                  + "".join(f"   {bounds[h][0]:+.3f} to {bounds[h][1]:+.3f}   " for h in "AB"))
    print("\nthe default's lost NDCG@10 (questions below 1), by where their answers lay in the lists:")
    lost = {h: losses(cases, h) for h in "AB"}
    for h in "AB":
        total = sum(v for _, v in lost[h].values())
        for bucket, (count, value) in sorted(lost[h].items(), key=lambda item: -item[1][1]):
            print(f"  {h} {bucket:<36} {count:>3} questions, {value:5.2f} lost ({value / total:.0%})")
    candidates = rules([c for c in cases if c.kind == "quality"] + [c for c in cases if c.kind == "raise"])
    changes_of = {label: {(kind, h): figure(cases, choose, kind, h) - base[(kind, h)]
                          for kind in ("quality", "raise") for h in "AB"} for label, choose in candidates}
    chosen = {}
    print(f"\nrules chosen on one half ({len(candidates)} tried), reported on the other:")
    for tuned, other in (("A", "B"), ("B", "A")):
        fit = [(label, c) for label, c in changes_of.items() if c[("quality", tuned)] >= 0 and c[("raise", tuned)] >= 0]
        label, c = max(fit, key=lambda pair: pair[1][("quality", tuned)] + pair[1][("raise", tuned)])
        chosen[tuned] = {"rule": label, **{f"{kind} {h}": c[(kind, h)] for kind in ("quality", "raise") for h in "AB"}}
        print(f"  tuned on {tuned}: {label}\n    on {tuned}: NDCG {c[('quality', tuned)]:+.4f}, raise Acc@1 "
              f"{c[('raise', tuned)]:+.3f}; on {other}: NDCG {c[('quality', other)]:+.4f}, raise Acc@1 "
              f"{c[('raise', other)]:+.3f}")
    gates = {}
    print("\na fitted gate per variant (ridge over the signals), learned on one half, reported on the other:")
    for tuned, other in (("A", "B"), ("B", "A")):
        for v in VARIANTS:
            if v != DEFAULT:
                choose = fitted_gate(cases, v, tuned)
                gate = {f"{kind} {h}": figure(cases, choose, kind, h) - base[(kind, h)]
                        for kind in ("quality", "raise") for h in "AB"}
                gates[f"{v}, learned on {tuned}"] = gate
                print(f"  {v:<26} learned on {tuned}: on {tuned} NDCG {gate[f'quality {tuned}']:+.4f}, raise Acc@1 "
                      f"{gate[f'raise {tuned}']:+.3f}; on {other} NDCG {gate[f'quality {other}']:+.4f}, raise Acc@1 "
                      f"{gate[f'raise {other}']:+.3f}")
    if args.json:
        counts = {kind: sum(1 for c in cases if c.kind == kind) for kind in ("quality", "raise")}
        write_results(args.json, {"default": {f"{kind} {h}": v for (kind, h), v in base.items()},
                                  "variants": variants, "chosen": chosen, "fitted_gates": gates,
                                  "losses": {h: {b: {"questions": n, "lost": v} for b, (n, v) in lost[h].items()}
                                             for h in "AB"},
                                  "rules_tried": len(candidates), "cases": counts})
    return 0


if __name__ == "__main__":
    sys.exit(main())
