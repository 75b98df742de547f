#!/usr/bin/env python3
"""The team store on the shared benchmark: the 22 repositories indexed into one Milvus Lite store,
NDCG@10 per repository beside the local store's (same process, same queries), query latency
through the HTTP team service, and one changed file from `index` start to searchable. How far the
store grows: scripts/bench_team_scale.py.

Usage: scripts/bench_team.py [--store /tmp/team-bench.db] [--quality-only | --latency-only]
                             [--json OUT] [NAME ...]

The local side is a fresh local index of each repository made by this tree in a temporary folder
(so both stores are parsed and resolved by the same code; the benchmark's own indexes may have
been made by an earlier one), its embedding cache filled from the benchmark index's
(~/.cache/codesearch-bench-index/NAME, made by scripts/bench_quality.py). Vectors: each chunk's
vector is taken from that cache by its embed-text hash (the same model, the same text: the same
vector, as the local store holds it); the rest are embedded by the model.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from codesearch.api.local import open_local
from codesearch.api.workspace_service import WorkspaceService, open_members
from codesearch.config import load_settings
from codesearch.daemon.http_address import HttpAddress
from codesearch.embedding.backends import process_embedder
from codesearch.eval.bench import DEFAULT_CHECKOUTS, SHARED_BENCH, benchmark_roots, half_of
from codesearch.eval.metrics import mean, score_query
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.requests import SearchRequest
from codesearch.search.searcher import Searcher
from codesearch.team.front import index_repository, open_store
from codesearch.team.milvus_store import MilvusStore
from codesearch.team.team_search import Scope, TeamSearcher
from codesearch.team.team_service import TeamService
from codesearch.transports.http import HttpServer
from codesearch.workspace import RepoSpec, Workspace


class CachedVectors:
    """Vectors from a local index's embedding cache by text hash, the model for the rest."""

    def __init__(self, index: Index, embedder):
        self.index = index
        self.embedder = embedder
        self.hits = 0
        self.embedded = 0

    def __call__(self, hashes, texts) -> np.ndarray:
        cached = self.index.catalog.vectors.cached(list(hashes))
        missing = [i for i, h in enumerate(hashes) if h not in cached]
        made = self.embedder.encode_documents([texts[i] for i in missing]) if missing else []
        out = np.zeros((len(hashes), self.embedder.dimension), dtype=np.float32)
        for i, h in enumerate(hashes):
            if h in cached:
                out[i] = cached[h]
        for i, vector in zip(missing, made):
            out[i] = vector
        self.hits += len(hashes) - len(missing)
        self.embedded += len(missing)
        return out


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else 0.0


def post(conn: http.client.HTTPConnection, path: str, body: dict) -> dict:
    conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    return json.loads(conn.getresponse().read())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=Path(tempfile.gettempdir()) / "codesearch-team-bench.db")
    parser.add_argument("--bench-dir", type=Path, default=DEFAULT_CHECKOUTS)
    parser.add_argument("--index-root", type=Path, default=Path.home() / ".cache/codesearch-bench-index")
    parser.add_argument("--annotations", type=Path, default=SHARED_BENCH / "annotations")
    parser.add_argument("--repos-json", type=Path, default=SHARED_BENCH / "repos.json")
    parser.add_argument("--fresh", action="store_true", help="start from an empty store")
    parser.add_argument("--no-quality", action="store_true", help="index, but skip the NDCG@10 comparison")
    parser.add_argument("--http-queries", type=int, default=0, help="at most this many queries through HTTP (0: all)")
    parser.add_argument("--quality-only", action="store_true", help="index and compare NDCG@10 only (no latency, "
                        "incremental or size figures)")
    parser.add_argument("--latency-only", action="store_true", help="the HTTP latency over an existing store only")
    parser.add_argument("--json", type=Path)
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    if args.fresh and args.store.exists():
        shutil.rmtree(args.store) if args.store.is_dir() else args.store.unlink()
    roots = benchmark_roots(args.repos_json, args.bench_dir, args.names)
    settings = load_settings(None)
    embedder = process_embedder(settings)
    store = open_store(f"milvus://{args.store}")
    if args.latency_only:
        every = {name: json.loads((args.annotations / f"{name}.json").read_text()) for name, _ in roots}
        print(json.dumps({"team": http_latency(TeamService(store, settings, embedder), every, args.http_queries),
                          "local_workspace": http_latency(local_workspace(roots, args.index_root, settings), every,
                                                          args.http_queries)}))
        store.close()
        return 0
    figures: dict = {"per_repo": {}, "index": {}}
    local_latency: list[float] = []
    queries_of: dict[str, list[dict]] = {}
    locals_dir = Path(tempfile.mkdtemp(prefix="bench-team-local-"))
    for name, root in roots:  # every repository in first: the keyword statistics are the whole store's
        index = fresh_local_index(name, root, settings, embedder, args.index_root / name, locals_dir / name)
        vectors = CachedVectors(index, embedder)
        t = time.perf_counter()
        report = index_repository(store, root, settings, name=name, branch="main", embedder=embedder,
                                  vectors=vectors)
        figures["index"][name] = {"seconds": round(time.perf_counter() - t, 2), "chunks": report.chunks_written,
                                  "vectors_from_local_index": vectors.hits, "vectors_embedded": vectors.embedded}
        queries_of[name] = json.loads((args.annotations / f"{name}.json").read_text())
        print(f"[{name}] {report.summary()}; vectors {vectors.hits} from the local index, {vectors.embedded} "
              "embedded", file=sys.stderr, flush=True)
        index.close()
    team = TeamSearcher(store, settings, embedder)
    for name, root in roots if not args.no_quality else ():
        queries = queries_of[name]
        index = Index(root, settings, locals_dir / name, embedder=embedder)
        local = Searcher(index)
        team_scores, local_scores = [], []
        for q in queries:
            request = SearchRequest(query=q["query"], limit=30)
            answer = local.search(request)
            local_latency.append(answer.timing_ms["total"])
            local_scores.append(score_query([r.to_dict() for r in answer.results], q["relevant"],
                                            q.get("secondary", []))["ndcg@10"])
            mine = team.search(request, Scope(repo=name))
            team_scores.append(score_query([r.to_dict() for r in mine.results], q["relevant"],
                                           q.get("secondary", []))["ndcg@10"])
        figures["per_repo"][name] = {"half": half_of(name), "local": mean(local_scores), "team": mean(team_scores)}
        print(f"[{name}] NDCG@10 local {mean(local_scores):.3f} team {mean(team_scores):.3f}", file=sys.stderr,
              flush=True)
        index.close()
    per_repo = figures["per_repo"]
    if per_repo:
        figures["mean"] = {"local": mean([v["local"] for v in per_repo.values()]),
                           "team": mean([v["team"] for v in per_repo.values()])}
        for half in ("A", "B"):
            figures[f"half_{half}"] = {k: mean([v[k] for v in per_repo.values() if v["half"] == half] or [0.0])
                                       for k in ("local", "team")}
        figures["local_latency_ms"] = {"p50": percentile(local_latency, 0.5),
                                       "p95": percentile(local_latency, 0.95)}
    shutil.rmtree(locals_dir, ignore_errors=True)
    if args.quality_only:
        report_figures(figures)
        if args.json:
            args.json.write_text(json.dumps(figures, indent=1))
        store.close()
        return 0
    figures["http_latency_ms"] = http_latency(TeamService(store, settings, embedder), queries_of, args.http_queries)
    print(f"http: {figures['http_latency_ms']}", file=sys.stderr, flush=True)
    figures["local_workspace_http_latency_ms"] = http_latency(local_workspace(roots, args.index_root, settings),
                                                              queries_of, args.http_queries)
    figures["incremental"] = incremental(store, settings, embedder, roots)
    print(f"incremental: {figures['incremental']}", file=sys.stderr, flush=True)
    figures["store_bytes"] = folder_bytes(args.store)
    report_figures(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    store.close()
    return 0


def fresh_local_index(name: str, root: Path, settings, embedder, bench_index: Path, folder: Path) -> Index:
    """A local index of `root` made by this tree in `folder`, its embedding cache first filled
    from the benchmark index's (no chunk whose text that index embedded is embedded again)."""
    index = Index(root, settings, folder, create=True, embedder=embedder)
    if (bench_index / "catalog.sqlite3").exists():
        cached = Index(root, settings, bench_index, embedder=embedder)
        index.catalog.vectors.restore_cache_rows(list(cached.catalog.vectors.cache_rows()))
        cached.close()
    report = Indexer(index).run()
    print(f"[{name}] local: {report.summary()}", file=sys.stderr, flush=True)
    return index


def local_workspace(roots: list[tuple[str, Path]], index_root: Path, settings) -> WorkspaceService:
    """The repositories' local indexes (INDEX_ROOT/NAME) served as one workspace, in process: the
    local way to search them all at once."""
    workspace = Workspace(tuple(RepoSpec(name, root.resolve()) for name, root in roots))
    return WorkspaceService(workspace, open_members(
        workspace, lambda spec: open_local(spec.root, settings, str(index_root / spec.name))))


def http_latency(service, queries_of: dict[str, list[dict]], most: int = 0) -> dict:
    """Queries across all repositories at once, through an HTTP service (one client: the team
    service, or a local workspace), after one query that warms it (the team's: each branch's live
    file map and graph read)."""
    server = HttpServer(HttpAddress("127.0.0.1", 0), service)
    server.serve_in_thread()
    conn = http.client.HTTPConnection(server.address.host, server.address.port, timeout=600)
    took = []
    texts = [q["query"] for queries in queries_of.values() for q in queries]
    if most:  # spread over the repositories' queries
        texts = texts[::max(1, len(texts) // most)][:most]
    try:
        t = time.perf_counter()
        post(conn, "/v1/codebase/search", {"query": "warm up", "limit": 10})
        warm_ms = (time.perf_counter() - t) * 1000
        for text in texts:
            t = time.perf_counter()
            post(conn, "/v1/codebase/search", {"query": text, "limit": 10})
            took.append((time.perf_counter() - t) * 1000)
    finally:
        conn.close()
        server.close()
    return {"p50": percentile(took, 0.5), "p95": percentile(took, 0.95), "queries": len(took),
            "first_ms": round(warm_ms, 1), "load_average": os.getloadavg()[0]}


def incremental(store: MilvusStore, settings, embedder, roots) -> dict:
    """A copy of the first repository indexed, one of its files changed: from `index` start until a
    search finds the new word."""
    name, root = roots[0]
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / name
        shutil.copytree(root, copy)
        index_repository(store, copy, settings, name=f"{name}-edit", branch="main", embedder=embedder)
        changed = next(p for p in sorted(copy.rglob("*")) if p.is_file() and p.suffix in (".py", ".js", ".ts",
                                                                                            ".go", ".rs", ".java"))
        changed.write_text(changed.read_text() + "\n\ndef zanzibar_quokka_marker():\n    return 42\n")
        t = time.perf_counter()
        report = index_repository(store, copy, settings, name=f"{name}-edit", branch="main", embedder=embedder)
        found = False
        team = TeamSearcher(store, settings, None)
        while not found and time.perf_counter() - t < 60:
            answer = team.search(SearchRequest(query="zanzibar_quokka_marker", mode="keyword"),
                                 Scope(repo=f"{name}-edit"))
            found = any(r.name == "zanzibar_quokka_marker" for r in answer.results)
        seconds = time.perf_counter() - t
    return {"repo": name, "file": str(changed.relative_to(copy)), "seconds": round(seconds, 2), "found": found,
            "modified": report.modified, "chunks_written": report.chunks_written}


def folder_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def report_figures(figures: dict) -> None:
    if figures["per_repo"]:
        print("\nNDCG@10 per repository: local store | team store (Milvus Lite)")
        for name, v in figures["per_repo"].items():
            print(f"  {name:<20} {v['half']}  {v['local']:.3f}  {v['team']:.3f}  {v['team'] - v['local']:+.3f}")
        m = figures["mean"]
        print(f"mean: local {m['local']:.3f} team {m['team']:.3f} ({m['team'] - m['local']:+.3f})")
        for half in ("A", "B"):
            h = figures[f"half_{half}"]
            print(f"half {half}: local {h['local']:.3f} team {h['team']:.3f}")
    if "local_latency_ms" in figures:
        print(f"local in-process query latency: p50 {figures['local_latency_ms']['p50']:.1f} ms, "
              f"p95 {figures['local_latency_ms']['p95']:.1f} ms")
    if "http_latency_ms" not in figures:
        return
    h = figures["http_latency_ms"]
    print(f"team HTTP query latency over all repositories: p50 {h['p50']:.1f} ms, p95 {h['p95']:.1f} ms "
          f"({h['queries']} queries)")
    w = figures["local_workspace_http_latency_ms"]
    print(f"local workspace HTTP query latency over the same repositories: p50 {w['p50']:.1f} ms, "
          f"p95 {w['p95']:.1f} ms")
    print(f"incremental: {figures['incremental']}")
    print(f"store bytes: {figures['store_bytes']}")


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
