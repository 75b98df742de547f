#!/usr/bin/env python3
"""Train a learned ranking stage on the benchmark and judge it where it did not learn.

Usage:
  scripts/train_ranker.py [--dump FEATURES.json]   # record every query's candidates, then judge
  scripts/train_ranker.py --from-dump FEATURES.json [--weights OUT.json]

Recording needs each repository's index (scripts/bench_quality.py builds them under
~/.cache/codesearch-bench-index): every benchmark query is searched once with the shipped rules,
and the rules' top --candidates results are kept with the features the engine already has of
them (FEATURES: the rules' score and place, each retriever's rank, the fused score, what each
rule saw in Ranked.signals, the content class, the kind, the file's other candidates) and whether
each matches the query's annotated targets; the time the stage would take per query (features
and a linear score over the candidates) is measured on the same candidates.

Two linear models are trained in numpy (a LambdaRank-weighted pairwise logistic loss, an L2
penalty chosen inside the training set): "learned" without the rules' score and place, and
"rules+learned", which adds to the rules' score. Each is judged where it did not learn:
leave-one-repository-out (each repository scored by a model trained on the other 21) and per half
(trained on A, scored on B, and the other way round), beside the rules. --weights writes the
rules+learned model trained on every repository (feature -> weight).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codesearch.analysis.content_class import CODE
from codesearch.config import load_settings
from codesearch.eval.bench import DEFAULT_CHECKOUTS, HALVES, SHARED_BENCH, benchmark_roots, half_of
from codesearch.eval.metrics import RelevantSpan, matches, mean, ndcg_at, score_query
from codesearch.indexing.index import Index
from codesearch.search.class_weights import asked_classes, class_of
from codesearch.search.fusion import weighted_rrf
from codesearch.search.query import Query
from codesearch.search.ranking import Ranked, RankingOptions
from codesearch.search.requests import SearchRequest
from codesearch.search.retrievers.retriever import Hits, Retriever
from codesearch.search.searcher import Searcher, fusion_weights
from codesearch.vocabulary import DEFINITION_KINDS, RETRIEVER_NAMES, TYPE_KINDS

LIMIT = 30  # results asked per query, as scripts/bench_quality.py asks
TIMING_RUNS = 5  # the learned stage's time on a query is the least of this many runs (the machine is shared)
RULE_SIGNALS = ("path_words", "name_words", "identifier", "main_definition", "joined_stem", "coherence",
                "symbol_tier", "exact", "named_file", "parent_child", "file_position")  # Ranked.signals
FEATURES = ("rules_score", "rules_position", "fused",
            *(f"{name}_{part}" for name in RETRIEVER_NAMES for part in ("found", "rank", "share")),
            "vector_similarity", "file_vector_share", "file_keyword_share", "lists_agree",
            *RULE_SIGNALS, "other_class", "asked_class", "file_chunk", "definition", "type_definition",
            "lines", "file_candidates")
AGREEING_RANK = 10  # a chunk both the vector and the keyword list hold this high
LOWEST_LOG_SHARE = -10.0  # a score this far (in e-folds) below the top counts as this far
L2_GRID = (1.0, 10.0, 100.0, 1000.0)  # penalties on the standardized weights, chosen within the training set
NEWTON_STEPS = 30
LAMBDA_ROUNDS = 2
BOOTSTRAP_SAMPLES = 2000
MIN_SUPPORT = 0.25  # of the training queries in which a feature must vary for the model to weigh it
MODELS = {"learned": False, "rules+learned": True}  # name -> anchored on the rules' score


# --- the stage as it would run in the searcher ------------------------------------------------
def features(query: Query, ranked: list[Ranked], lists: dict[str, list[str]], scores: dict[str, dict[str, float]],
             fused: dict[str, float], vendored: frozenset[str]) -> list[list[float]]:
    """One row of FEATURES per candidate of `ranked` (the rules' order, best first): what the
    engine knows of it at the end of the rules. `lists`: each retriever's ids, best first;
    `scores`: each retriever's scores by id; `fused`: chunk id -> its fused score before the rules."""
    if not ranked:
        return []
    positions = {name: {cid: i for i, cid in enumerate(ids, start=1)} for name, ids in lists.items()}
    shares = {name: _shares(found) for name, found in scores.items()}
    file_best: dict[str, dict[str, float]] = {name: {} for name in ("vector", "keyword")}
    for r in ranked:
        for name, best in file_best.items():
            share = shares.get(name, {}).get(r.chunk.id, 0.0)
            best[r.chunk.path] = max(best.get(r.chunk.path, 0.0), share)
    top = max(ranked[0].score, 1e-12)
    top_fused = max(fused.values(), default=0.0) or 1.0
    asked = asked_classes(query)
    per_file = Counter(r.chunk.path for r in ranked)
    rows = []
    for position, r in enumerate(ranked):
        c = r.chunk
        row = [max(LOWEST_LOG_SHARE, math.log(r.score / top)) if r.score > 0 else LOWEST_LOG_SHARE,
               math.log1p(position), fused.get(c.id, 0.0) / top_fused]
        for name in RETRIEVER_NAMES:
            rank = positions.get(name, {}).get(c.id)
            row += [1.0, math.log(rank), shares.get(name, {}).get(c.id, 0.0)] if rank else [0.0, 0.0, 0.0]
        vector_rank = positions.get("vector", {}).get(c.id, AGREEING_RANK + 1)
        keyword_rank = positions.get("keyword", {}).get(c.id, AGREEING_RANK + 1)
        row += [scores.get("vector", {}).get(c.id, 0.0), file_best["vector"][c.path], file_best["keyword"][c.path],
                float(max(vector_rank, keyword_rank) <= AGREEING_RANK)]
        row += [float(r.signals.get(name, 0.0)) for name in RULE_SIGNALS]
        content = class_of(c.path, c.language, vendored)
        row += [float(content != CODE and content not in asked), float(content != CODE and content in asked),
                float(c.kind == "file"), float(c.kind in DEFINITION_KINDS), float(c.kind in TYPE_KINDS),
                math.log1p(max(0, c.end_line - c.start_line + 1)), math.log(per_file[c.path])]
        rows.append(row)
    return rows


def _shares(found: dict[str, float]) -> dict[str, float]:
    """Each score as a share of the list's best (BM25's negative scores as well as similarities)."""
    top = max(found.values(), key=abs, default=0.0)
    return {cid: score / top for cid, score in found.items()} if top else {}


def reorder(query: Query, ranked: list[Ranked], lists: dict[str, list[str]], scores: dict[str, dict[str, float]],
            fused: dict[str, float], vendored: frozenset[str], weights: np.ndarray) -> list[Ranked]:
    """The rules' candidates in a linear model's order (what a shipped stage would do per query)."""
    rows = features(query, ranked, lists, scores, fused, vendored)
    model = [math.fsum(a * b for a, b in zip(weights, row)) for row in rows]
    return [r for _, r in sorted(zip(model, ranked), key=lambda pair: -pair[0])]


class ScoreKeeper:
    """A retriever that keeps its last answer's scores (the searcher keeps only the ids)."""

    def __init__(self, inner: Retriever, name: str, sink: dict[str, dict[str, float]]):
        self.inner, self.name, self.sink = inner, name, sink
        self.seeds_from = inner.seeds_from

    def search(self, query, limit, lists) -> Hits:
        hits = self.inner.search(query, limit, lists)
        self.sink[self.name] = dict(zip(hits.ids, hits.scores))
        return hits

    def coverage(self) -> float | None:
        return self.inner.coverage()


class CapturingSearcher(Searcher):
    """A Searcher that keeps what its ranking saw of the last query (the rules' order, the
    retrievers' lists and scores, the fused scores)."""

    captured: tuple

    def __init__(self, index: Index):
        super().__init__(index)
        self.scores: dict[str, dict[str, float]] = {}
        self.keepers: dict[str, ScoreKeeper] = {}

    def retriever(self, name):
        if name not in self.keepers:
            self.keepers[name] = ScoreKeeper(super().retriever(name), name, self.scores)
        return self.keepers[name]

    def _rank(self, query, lists, options, exact=None, templates=None):
        ranked = super()._rank(query, lists, options, exact, templates)
        fused = dict(weighted_rrf(lists, fusion_weights(self.settings, lists, query.long), k=self.settings.rrf_k))
        scores = {name: dict(self.scores.get(name, {})) for name in lists}
        self.captured = (query, copy.deepcopy(ranked), {k: list(v) for k, v in lists.items()}, scores, fused)
        return ranked


def record(index_root: Path, bench_dir: Path, candidates: int) -> dict:
    """Per query: its repository, category, the searched NDCG@10 of the rules, and its candidates
    (feature rows, target matches, the result fields NDCG reads); the learned stage's time."""
    rules = RankingOptions()
    queries_out, timings = [], []
    weights = np.ones(len(FEATURES))  # the time does not depend on the values
    for name, root in benchmark_roots(SHARED_BENCH / "repos.json", bench_dir):
        index_dir = index_root / name
        if not (index_dir / "catalog.sqlite3").exists():
            raise SystemExit(f"no index of {name} in {index_dir}: run scripts/bench_quality.py first")
        searcher = CapturingSearcher(Index(root, load_settings(root), index_dir))
        started = time.monotonic()
        for q in json.loads((SHARED_BENCH / "annotations" / f"{name}.json").read_text()):
            answer = searcher.search(SearchRequest(query=q["query"], limit=LIMIT, ranking=rules), side_by_side=False)
            searched = score_query([r.to_dict() for r in answer.results], q["relevant"],
                                   q.get("secondary", []))["ndcg@10"]
            query, ranked, lists, scores, fused = searcher.captured
            targets = [RelevantSpan.parse(t) for t in [*q["relevant"], *q.get("secondary", [])]]
            head = ranked[:candidates]
            rows = features(query, head, lists, scores, fused, searcher.vendored_folders())
            results = [{"path": r.chunk.path, "start_line": r.chunk.start_line, "end_line": r.chunk.end_line,
                        "kind": r.chunk.kind} for r in head]
            labels = [float(any(matches(res, t) for t in targets)) for res in results]
            queries_out.append({"repo": name, "category": q["category"], "searched": searched,
                                "targets": [*q["relevant"], *q.get("secondary", [])],
                                "results": results, "features": rows, "labels": labels})
            runs = []
            for _ in range(TIMING_RUNS):
                trial = copy.deepcopy(ranked)
                t = time.perf_counter()
                reorder(query, trial[:candidates], lists, scores, fused, searcher.vendored_folders(), weights)
                runs.append((time.perf_counter() - t) * 1000)
            timings.append(min(runs))
        searcher.index.close()
        print(f"[{name}] recorded in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return {"features": list(FEATURES), "candidates": candidates, "queries": queries_out,
            "rerank_ms": timings}


# --- training -------------------------------------------------------------------------------
def lambda_pairs(queries: list[dict], w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(feature differences matching - other, pair weights) under the order `w` gives (the
    rules' with None). Results count once per file (NDCG@10 reads each file's first result), so
    a pair is each file's first matching candidate against each other file's first candidate
    that matches nothing, weighed by how much NDCG@10's gain changes if the two swap files'
    places (LambdaRank); pairs that cannot change the top ten weigh nothing."""
    diffs, weights = [], []
    for q in queries:
        x, y = q["x"], q["y"]
        if not len(y):
            continue
        order = np.arange(len(y)) if w is None else np.argsort(-(x @ w), kind="stable")
        place = np.zeros(len(y))
        places: dict[str, int] = {}
        firsts, first_matches = set(), set()
        matching, other = [], []
        for i in order:
            path = q["results"][i]["path"]
            place[i] = places.setdefault(path, len(places) + 1)
            if y[i] and path not in first_matches:
                first_matches.add(path)
                matching.append(i)
            if path not in firsts:
                firsts.add(path)
                if not y[i]:
                    other.append(i)
        if not matching or not other:
            continue
        pi, ni = (a.ravel() for a in np.meshgrid(matching, other, indexing="ij"))
        gain = np.where(place <= 10, 1 / np.log2(1 + place), 0.0)
        delta = np.abs(gain[pi] - gain[ni])
        keep = delta > 0
        diffs.append(x[pi[keep]] - x[ni[keep]])
        weights.append(delta[keep])
    return np.concatenate(diffs), np.concatenate(weights)


def train(queries: list[dict], l2: float, anchored: bool) -> np.ndarray:
    """Raw-feature weights minimizing the LambdaRank-weighted pairwise logistic loss plus `l2`
    on the standardized weights (Newton's method: the features are few), LAMBDA_ROUNDS times,
    each round's pairs weighed under the order the round before learned. `anchored`: the model
    adds to the rules' score (its weight fitted alone first, not penalized); else it does
    without the rules' score and position."""
    x = np.concatenate([q["x"] for q in queries])
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    rules = FEATURES.index("rules_score")
    free = supported(queries)
    free[[rules, FEATURES.index("rules_position")] if not anchored else [rules]] = False
    w: np.ndarray | None = None
    for _ in range(LAMBDA_ROUNDS):
        diffs, weights = lambda_pairs(queries, w)
        weights = weights / weights.sum()
        offset = np.zeros(len(diffs))
        anchor = 0.0
        if anchored:
            anchor = _newton(diffs[:, [rules]], weights, np.zeros(len(diffs)), 0.0)[0]
            offset = anchor * diffs[:, rules]
        z = diffs[:, free] / scale[free]
        v = _newton(z, weights, offset, l2 / len(queries))
        w = np.zeros(len(FEATURES))
        w[free] = v / scale[free]
        w[rules] = anchor
    assert w is not None
    return w


def supported(queries: list[dict]) -> np.ndarray:
    """The features that tell candidates of one query apart in at least MIN_SUPPORT of `queries`:
    a rarer one (a symbol's tier, a pasted message's exact text, a class the question names) has
    too few examples to weigh, and the rules' score carries it."""
    varies = np.mean([np.ptp(q["x"], axis=0) > 0 for q in queries if len(q["x"])], axis=0)
    return varies >= MIN_SUPPORT


def _newton(z: np.ndarray, weights: np.ndarray, offset: np.ndarray, penalty: float) -> np.ndarray:
    """argmin over v of sum(weights * log(1 + exp(-(offset + z v)))) + penalty / 2 |v|^2."""
    v = np.zeros(z.shape[1])
    for _ in range(NEWTON_STEPS):
        p = 0.5 * (1 + np.tanh((offset + z @ v) / 2))  # the logistic function, without overflow
        grad = z.T @ (weights * (p - 1)) + penalty * v
        hessian = z.T @ (z * (weights * p * (1 - p))[:, None]) + (penalty + 1e-9) * np.eye(len(v))
        step = np.linalg.solve(hessian, grad)
        v -= step
        if np.abs(step).max() < 1e-6:
            break
    return v


def chosen_l2(queries: list[dict], anchored: bool) -> float:
    """The L2_GRID penalty that does best where it did not learn, within `queries` alone: their
    repositories in two groups (alternately, by name), each scored by the model of the other."""
    repos = sorted({q["repo"] for q in queries})
    groups = (set(repos[0::2]), set(repos[1::2]))
    best, best_l2 = -1.0, L2_GRID[0]
    for l2 in L2_GRID:
        score = 0.0
        for learn, judge_on in (groups, groups[::-1]):
            w = train([q for q in queries if q["repo"] in learn], l2, anchored)
            score += repo_mean([q for q in queries if q["repo"] in judge_on], w)
        if score > best + 1e-9:
            best, best_l2 = score, l2
    return best_l2


def fit(queries: list[dict], anchored: bool) -> np.ndarray:
    return train(queries, chosen_l2(queries, anchored), anchored)


def ndcg(q: dict, order: np.ndarray) -> float:
    return ndcg_at([q["results"][i] for i in order], q["spans"], 10)


def scored(queries: list[dict], w: np.ndarray | None) -> list[float]:
    """NDCG@10 per query: the rules' order (w None) or the model's (stable: ties keep the rules' order)."""
    out = []
    for q in queries:
        n = len(q["results"])
        order = np.arange(n) if w is None or not n else np.argsort(-(q["x"] @ w), kind="stable")
        out.append(ndcg(q, order))
    return out


def per_repo(queries: list[dict], scores: list[float]) -> dict[str, float]:
    by: dict[str, list[float]] = {}
    for q, s in zip(queries, scores):
        by.setdefault(q["repo"], []).append(s)
    return {name: mean(v) for name, v in by.items()}


def repo_mean(queries: list[dict], w: np.ndarray | None) -> float:
    """The mean over repositories of each one's mean NDCG@10, as the benchmark reports it."""
    return mean(list(per_repo(queries, scored(queries, w)).values()))


def judge(queries: list[dict]) -> dict:
    """NDCG@10 per query: searched with the rules, the rules' candidates in the rules' order, and
    in each model's order (MODELS) where it did not learn (leave one repository out); and per
    held-out half."""
    repos = list(dict.fromkeys(q["repo"] for q in queries))
    columns = {"searched": [q["searched"] for q in queries], "rules": scored(queries, None)}
    halves: dict[str, dict[str, float]] = {}
    for held in ("B", "A"):
        halves[held] = {"rules": repo_mean([q for q in queries if q["repo"] in HALVES[held]], None)}
    for model, anchored in MODELS.items():
        by_query: dict[int, float] = {}
        for name in repos:
            w = fit([q for q in queries if q["repo"] != name], anchored)
            held_out = [i for i, q in enumerate(queries) if q["repo"] == name]
            by_query.update(zip(held_out, scored([queries[i] for i in held_out], w)))
        columns[model] = [by_query[i] for i in range(len(queries))]
        for held, learn in (("B", "A"), ("A", "B")):
            w = fit([q for q in queries if q["repo"] in HALVES[learn]], anchored)
            halves[held][model] = repo_mean([q for q in queries if q["repo"] in HALVES[held]], w)
    return {"repos": repos, "queries": queries, "columns": columns, "halves": halves}


def interval(queries: list[dict], new: list[float], old: list[float]) -> tuple[float, float]:
    """The 95% interval of the change in the benchmark's mean (over repositories of their queries'
    mean) from `old` to `new`, by a paired bootstrap of each repository's queries."""
    rng = np.random.default_rng(0)
    by_repo: dict[str, list[float]] = {}
    for q, a, b in zip(queries, new, old):
        by_repo.setdefault(q["repo"], []).append(a - b)
    changes = [np.asarray(v) for v in by_repo.values()]
    means = [np.mean([rng.choice(c, len(c)).mean() for c in changes]) for _ in range(BOOTSTRAP_SAMPLES)]
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


def report(result: dict) -> None:
    repos, queries = result["repos"], result["queries"]
    columns = {name: per_repo(queries, scores) for name, scores in result["columns"].items()}
    rules = columns["rules"]
    print("NDCG@10; learned columns: leave-one-repository-out (each repository scored by a model that never saw it)")
    print(f"{'repository':20} {'half':4} " + " ".join(f"{name:>13}" for name in columns))
    for name in repos:
        print(f"{name:20} {half_of(name):4} " + " ".join(f"{column[name]:13.3f}" for column in columns.values()))
    print(f"{'overall':25} " + " ".join(f"{mean(list(column.values())):13.3f}" for column in columns.values()))
    for model in MODELS:
        loro = columns[model]
        wins = sum(loro[n] > rules[n] + 1e-9 for n in repos)
        losses = sum(loro[n] < rules[n] - 1e-9 for n in repos)
        low, high = interval(queries, result["columns"][model], result["columns"]["rules"])
        print(f"{model}: {wins} repositories better than the rules, {losses} worse, {len(repos) - wins - losses} "
              f"same; change in the mean {mean(list(loro.values())) - mean(list(rules.values())):+.4f}, 95% "
              f"interval {low:+.4f} to {high:+.4f}")
    best = per_repo(queries, [ndcg(q, np.argsort(-q["y"], kind="stable")) for q in queries])
    print(f"the same candidates in the best order (matching ones first): {mean(list(best.values())):.3f}")
    for held, figures in sorted(result["halves"].items()):
        learn = "A" if held == "B" else "B"
        print(f"trained on {learn}, scored on {held}: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index-root", type=Path, default=Path.home() / ".cache/codesearch-bench-index")
    parser.add_argument("--bench-dir", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--candidates", type=int, default=50, help="the rules' top candidates re-ordered")
    parser.add_argument("--dump", type=Path, help="record the features into this file")
    parser.add_argument("--from-dump", type=Path, help="train on features recorded before")
    parser.add_argument("--weights", type=Path, help="write the rules+learned model trained on every repository")
    args = parser.parse_args()
    if args.from_dump:
        data = json.loads(args.from_dump.read_text())
        if data["features"] != list(FEATURES):
            raise SystemExit(f"{args.from_dump} holds other features than this version's: record it again")
    else:
        data = record(args.index_root, args.bench_dir, args.candidates)
        if args.dump:
            args.dump.write_text(json.dumps(data))
    timings = sorted(data["rerank_ms"])
    median, p95 = timings[len(timings) // 2], timings[int(len(timings) * 0.95)]
    print(f"the stage per query (features and scores) over {data['candidates']} candidates, the least of "
          f"{TIMING_RUNS} runs: median {median:.3f} ms, p95 {p95:.3f} ms, max {timings[-1]:.3f} ms")
    queries = data["queries"]
    for q in queries:
        q["x"] = np.asarray(q["features"], dtype=float).reshape(-1, len(FEATURES))
        q["y"] = np.asarray(q["labels"])
        q["spans"] = [RelevantSpan.parse(t) for t in q["targets"]]
    report(judge(queries))
    if args.weights:
        w = fit(queries, MODELS["rules+learned"])
        args.weights.write_text(json.dumps(dict(zip(FEATURES, w.round(6).tolist())), indent=1) + "\n")
        print(f"wrote {args.weights}")
    print(f"command: {' '.join(sys.argv)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
