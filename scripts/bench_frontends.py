#!/usr/bin/env python3
"""Search latency through each front-end of a warm daemon: the Unix socket (the CLI's path),
HTTP (one keep-alive connection) and MCP (the SDK's client over stdio, framing included).

usage: scripts/bench_frontends.py REPO [--index-dir DIR] [--rounds N] [--mode hybrid]

The daemon is started with --http on a free loopback port, waited for until every chunk has its
vector, and stopped at the end. Queries: the benchmark's for REPO when its annotations exist
(by folder name), else generic ones. The front-ends take turns, round by round, so drift in the
machine's speed hits them alike. Prints p50/p95 per front-end.
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import time
from pathlib import Path

from benchlib import GENERIC_QUERIES, REPO_ROOT, print_percentiles, running_daemon, wait_until_embedded

from codesearch.daemon.client import call
from codesearch.eval.bench import SHARED_BENCH


def queries_for(root: Path) -> list[str]:
    for candidate in (root, *root.parents):
        path = SHARED_BENCH / "annotations" / f"{candidate.name}.json"
        if path.exists():
            return [q["query"] for q in json.loads(path.read_text())]
    return GENERIC_QUERIES


def socket_times(sock: Path, queries: list[str], mode: str) -> list[float]:
    times = []
    for q in queries:
        t = time.perf_counter()
        call(sock, "search", {"query": q, "mode": mode})
        times.append((time.perf_counter() - t) * 1000)
    return times


def http_times(address: str, queries: list[str], mode: str) -> list[float]:
    host, _, port = address.rpartition(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    times = []
    for q in queries:
        body = json.dumps({"query": q, "mode": mode})
        t = time.perf_counter()
        conn.request("POST", "/v1/codebase/search", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response_body = response.read()
        times.append((time.perf_counter() - t) * 1000)
        assert response.status == 200, response_body[:200]
    conn.close()
    return times


def run_rounds(root: Path, index_dir: str | None, rounds: int, queries: list[str], mode: str, sock: Path,
               address: str) -> dict[str, list[float]]:
    """One MCP session (started once, as an agent's is); each round asks every query through MCP,
    then the socket, then HTTP."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    args = ["-m", "codesearch.cli", "mcp", str(root)] + (["--index-dir", index_dir] if index_dir else [])
    results: dict[str, list[float]] = {"socket": [], "http": [], "mcp": []}

    async def main() -> None:
        async with Client(StdioServerParameters(command=sys.executable, args=args, cwd=str(REPO_ROOT))) as client:
            for q in queries[:5]:  # warm
                await client.call_tool("search", {"query": q, "mode": mode})
            for _ in range(rounds):
                for q in queries:
                    t = time.perf_counter()
                    result = await client.call_tool("search", {"query": q, "mode": mode})
                    results["mcp"].append((time.perf_counter() - t) * 1000)
                    assert not result.is_error, getattr(result.content[0], "text", result.content[0])
                results["socket"] += socket_times(sock, queries, mode)  # blocking: the session idles meanwhile
                results["http"] += http_times(address, queries, mode)

    anyio.run(main)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--index-dir")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mode", default="hybrid")
    args = parser.parse_args()
    root = args.repo.resolve()
    with running_daemon(root, index_dir=args.index_dir, extra=("--http", "0")) as sock:
        status = wait_until_embedded(sock)
        address = call(sock, "health")["http"]
        queries = queries_for(root)
        print(f"{root.name}: {status['files']} files, {status['chunks']} chunks, {len(queries)} queries, "
              f"mode {args.mode}, {args.rounds} rounds; HTTP on {address}", flush=True)
        socket_times(sock, queries[:5], args.mode)  # warm
        http_times(address, queries[:5], args.mode)
        print_percentiles("front-end", run_rounds(root, args.index_dir, args.rounds, queries, args.mode, sock,
                                                  address))
    return 0


if __name__ == "__main__":
    sys.exit(main())
