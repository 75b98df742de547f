#!/usr/bin/env python3
"""Editor latency with the daemon warm: `workspace/symbol` and `codesearch/search` through
`codesearch lsp` (pygls's client over stdio), and `:CodeSearch` in headless Neovim from the
command to a filled quickfix list (the plugin over the daemon's socket).

usage: scripts/bench_editors.py REPO [--index-dir DIR] [--rounds N]

Symbol queries are prefixes (4 to 8 characters) of 30 definition names drawn from the index with
a fixed seed, as one types them; search queries are the benchmark's for REPO (else generic ones).
Prints p50/p95 per request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_frontends import queries_for
from benchlib import REPO_ROOT, print_percentiles, running_daemon, wait_until_embedded

from codesearch.config import load_settings
from codesearch.indexing.index import Index


def symbol_queries(root: Path, index_dir: str | None, count: int = 30) -> list[str]:
    index = Index(root, load_settings(root), index_dir)
    names = sorted({c.name for c in index.catalog.files.chunks_by_ids(
        index.catalog.graph.ids_defining_like("", 100_000)).values() if len(c.name) >= 4})
    index.close()
    rng = random.Random(7)
    return [name[:rng.randint(4, min(8, len(name)))] for name in rng.sample(names, min(count, len(names)))]


async def lsp_times(root: Path, index_dir: str | None, symbols: list[str], searches: list[str],
                    rounds: int) -> dict[str, list[float]]:
    from lsprotocol import types as lsp
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("bench", "1")
    args = ["-m", "codesearch.cli", "lsp"] + (["--index-dir", index_dir] if index_dir else [])
    await client.start_io(sys.executable, *args, cwd=str(REPO_ROOT))
    await client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=root.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))
    client.initialized(lsp.InitializedParams())
    out: dict[str, list[float]] = {"workspace/symbol": [], "codesearch/search": []}
    for q in symbols[:3] + searches[:3]:  # warm
        await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=q))
    for _ in range(rounds):
        for q in symbols:
            t = time.perf_counter()
            await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=q))
            out["workspace/symbol"].append((time.perf_counter() - t) * 1000)
        for q in searches:
            t = time.perf_counter()
            await client.protocol.send_request_async("codesearch/search", {"query": q})
            out["codesearch/search"].append((time.perf_counter() - t) * 1000)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return out


NVIM_SCRIPT = """
local out_path, queries, rounds = %s, vim.json.decode(%s), %d
require("codesearch").setup({ cmd = %s, index_dir = %s, open_quickfix = false })
local times = {}
for _ = 1, rounds do
  for _, q in ipairs(queries) do
    vim.fn.setqflist({}, " ")
    local started = vim.loop.hrtime()
    vim.cmd("CodeSearch " .. q)
    vim.wait(30000, function() return #vim.fn.getqflist() > 0 end, 1)
    table.insert(times, (vim.loop.hrtime() - started) / 1e6)
  end
end
local f = io.open(out_path, "w")
f:write(vim.json.encode(times))
f:close()
vim.cmd("qa!")
"""


def nvim_times(root: Path, index_dir: str | None, searches: list[str], rounds: int) -> list[float]:
    nvim = shutil.which("nvim")
    if nvim is None:
        print("nvim not found: the :CodeSearch row is skipped", file=sys.stderr)
        return []
    with tempfile.TemporaryDirectory() as tmp:
        out, script = Path(tmp) / "times.json", Path(tmp) / "bench.lua"
        lua = json.dumps  # a JSON string is a Lua string literal here
        script.write_text(NVIM_SCRIPT % (lua(str(out)), lua(json.dumps(searches)), rounds,
                                         lua(str(Path(sys.executable).parent / "codesearch")),
                                         lua(str(index_dir)) if index_dir else "nil"))
        plugin = REPO_ROOT / "editors" / "nvim"
        subprocess.run([nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "--cmd", f"set rtp^={plugin}",
                        "-c", "runtime plugin/codesearch.lua", "-c", f"luafile {script}"],
                       cwd=root, check=True, timeout=1800, capture_output=True)
        return json.loads(out.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--index-dir")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    root = args.repo.resolve()
    index_dir = str(Path(args.index_dir).resolve()) if args.index_dir else None
    with running_daemon(root, index_dir=index_dir) as sock:
        status = wait_until_embedded(sock)
        symbols, searches = symbol_queries(root, index_dir), queries_for(root)
        print(f"{root.name}: {status['files']} files, {status['chunks']} chunks; {len(symbols)} symbol prefixes, "
              f"{len(searches)} searches, {args.rounds} rounds", flush=True)
        results = asyncio.run(lsp_times(root, index_dir, symbols, searches, args.rounds))
        results[":CodeSearch (Neovim)"] = nvim_times(root, index_dir, searches, args.rounds)
        print_percentiles("request", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
