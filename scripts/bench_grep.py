#!/usr/bin/env python3
"""`codesearch grep` against bare ripgrep on a large tree, in one run.

usage: scripts/bench_grep.py [--tree /tmp/grepbench/tree] [--copies 5] [--rounds 5] [--checkout PATH]

The tree is --copies copies of the benchmark's 22 checkouts (hard links; about 7,000 files a
copy), indexed once without vectors: grep needs none, and the daemon then embeds nothing while
the clock runs. For each of ten patterns (literal, word, regex; rare and common), the three take
turns every round:
- rg: the `rg` binary with the same flags codesearch gives it (line, column, NUL after the path),
  its output read whole;
- daemon: the grep method through the daemon's socket, its answer (limit 100,000) read whole: the
  JSON text that the CLI, MCP and HTTP pass on;
- CLI: `codesearch grep --json --limit 100000` as a process, through the daemon;
- typed: the daemon's answer read into records as well (DaemonClient.grep), for what a Python
  client pays on top.
Prints p50 per pattern, the ratios to rg, and whether the sets of (path, line) are equal.
--checkout runs the daemon and the CLI of another checkout of codesearch (e.g. the code before a
change) on the same tree and index.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchlib import REPO_ROOT, percentile, running_daemon, wait_until_idle

from codesearch.daemon.client import DaemonClient, call
from codesearch.eval.bench import DEFAULT_CHECKOUTS
from codesearch.search.requests import GrepRequest, SearchRequest
from codesearch.search.ripgrep import PIPE_BYTES, rg_command

PATTERNS: list[tuple[str, dict]] = [
    ("literal, common", {"pattern": "import", "fixed": True}),
    ("literal, rare", {"pattern": "Deprecated", "fixed": True}),
    ("literal, case-insensitive", {"pattern": "todo", "fixed": True, "ignore_case": True}),
    ("word, common", {"pattern": "self", "word": True}),
    ("word, rare", {"pattern": "backoff", "word": True}),
    ("regex, function definitions", {"pattern": r"\bfunc?t?i?o?n?\s+\w+\("}),
    ("regex, class names", {"pattern": r"class [A-Z][a-z]+[A-Z]\w*"}),
    ("regex, URLs", {"pattern": r"https?://[a-z0-9.-]+/[\w/.-]*"}),
    ("regex, dates", {"pattern": r"\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b"}),
    ("regex, rare", {"pattern": r"retry\w*\s*\(.*backoff"}),
]
LIMIT = 100_000


def build_tree(tree: Path, copies: int) -> None:
    if (tree / ".complete").exists():
        return
    shutil.rmtree(tree, ignore_errors=True)
    for i in range(1, copies + 1):
        target = tree / f"copy{i}"
        target.mkdir(parents=True)
        for checkout in sorted(DEFAULT_CHECKOUTS.iterdir()):
            subprocess.run(["cp", "-al", str(checkout), str(target / checkout.name)], check=True)
    (tree / ".complete").write_text("")


def read_whole(command: list[str], cwd: Path) -> tuple[float, bytes]:
    """Run `command`; the milliseconds until its output is read whole, and the output. Read as
    codesearch reads ripgrep's: a pipe as large as Linux allows, read to its end in one call
    (`subprocess.run`'s 32-KB reads in a Python loop held ripgrep back on large outputs)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL)
    assert process.stdout is not None
    with contextlib.suppress(AttributeError, OSError):
        fcntl.fcntl(process.stdout.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    out = process.stdout.read()
    process.stdout.close()
    process.wait()
    return (time.perf_counter() - started) * 1000, out


def rg_lines(root: Path, index_dir: Path, request: GrepRequest) -> tuple[float, set[tuple[str, int]]]:
    """rg's time and its matching (path, line) pairs: its output is `path NUL line:...` a line, or
    with --heading (no context asked for) each file's `path NUL` before its first line only."""
    command = rg_command(root, index_dir, request)
    elapsed, out = read_whole(command, root)
    found = set()
    path = b""
    for raw in out.splitlines():
        if b"\0" in raw or "--heading" not in command:
            path, _, raw = raw.partition(b"\0")
        number = raw.split(b":", 1)[0]
        if number.isdigit():
            found.add((os.fsdecode(path), int(number)))
    return elapsed, found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, default=Path("/tmp/grepbench/tree"))
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--checkout", type=Path, default=REPO_ROOT, help="the codesearch whose daemon and CLI run")
    parser.add_argument("--no-update", action="store_true", help="use the index as it is (checking it: minutes)")
    args = parser.parse_args()
    checkout = args.checkout.resolve()
    python = checkout / ".venv" / "bin" / "python"
    tree = args.tree.resolve()
    index_dir = tree.parent / "index"
    build_tree(tree, args.copies)
    # grep needs no vectors and no model: the daemon gets a model that cannot load, so it serves
    # keyword, graph and grep, and embeds nothing in the background while the clock runs
    os.environ["CODESEARCH_MODEL"] = str(tree.parent / "no-model")
    started = time.monotonic()
    if not (args.no_update and index_dir.exists()):
        subprocess.run([str(python), "-m", "codesearch.cli", "index", str(tree), "--index-dir", str(index_dir), "-q",
                        "--no-vectors"], check=True, cwd=checkout)
        print(f"indexed in {time.monotonic() - started:.0f} s", file=sys.stderr)
    with running_daemon(tree, checkout=checkout, index_dir=str(index_dir)) as sock:
        status = call(sock, "status")
        client = DaemonClient(sock, timeout=120)
        client.search(SearchRequest(query="warm", mode="graph"))  # loads the graph
        waited = wait_until_idle(status["pid"])
        print(f"daemon idle after {waited:.0f} s", file=sys.stderr)
        print(f"{checkout}: {status['files']:,} files, {status['chunks']:,} chunks; {args.rounds} rounds, "
              f"medians in ms; load average {os.getloadavg()[0]:.1f}")
        print(f"{'pattern':<30}{'lines':>8}{'rg':>8}{'daemon':>9}{'x rg':>6}{'CLI':>8}{'x rg':>6}"
              f"{'typed':>8}{'x rg':>6}{'in daemon: rg':>15}{'arrange':>9}  same lines")
        ratios = []
        for label, params in PATTERNS:
            request = GrepRequest(**params, limit=LIMIT)
            times: dict[str, list[float]] = {"rg": [], "daemon": [], "cli": [], "typed": [], "engine": [],
                                             "arrange": []}
            same = True
            cli = [str(python), "-m", "codesearch.cli", "grep", "--json", "--limit", str(LIMIT), "--repo",
                   str(tree), "--index-dir", str(index_dir)]
            cli += ["-F"] if params.get("fixed") else []
            cli += ["-w"] if params.get("word") else []
            cli += ["-i"] if params.get("ignore_case") else []
            cli += ["--", params["pattern"]]
            client.grep(request)  # warm the page cache for this pattern's files
            for _ in range(args.rounds):
                elapsed, expected = rg_lines(tree, index_dir, request)
                times["rg"].append(elapsed)
                t = time.perf_counter()
                text = client.call_json("grep", request.to_dict(), timeout=120)
                times["daemon"].append((time.perf_counter() - t) * 1000)
                elapsed, out = read_whole(cli, checkout)
                times["cli"].append(elapsed)
                t = time.perf_counter()
                answer = client.grep(request)
                times["typed"].append((time.perf_counter() - t) * 1000)
                served = json.loads(text)
                times["engine"].append(served["timing_ms"]["rg"])  # the daemon's own clock: rg run and read
                times["arrange"].append(served["timing_ms"].get("structure", 0.0))  # placed and ranked
                got = {(m["path"], m["line"]) for m in served["matches"]}
                cli_got = {(m["path"], m["line"]) for m in json.loads(out)["matches"]} if out else set()
                typed_got = {(m.path, m.line) for m in answer.matches}
                same = same and got == expected == cli_got == typed_got and not answer.truncated
            p50 = {k: percentile(v, 0.5) for k, v in times.items()}
            ratios.append((p50["daemon"] / p50["rg"], p50["cli"] / p50["rg"]))
            print(f"{label:<30}{len(expected):>8,}{p50['rg']:>8.0f}{p50['daemon']:>9.0f}"
                  f"{p50['daemon'] / p50['rg']:>6.2f}{p50['cli']:>8.0f}{p50['cli'] / p50['rg']:>6.2f}"
                  f"{p50['typed']:>8.0f}{p50['typed'] / p50['rg']:>6.2f}{p50['engine']:>15.0f}{p50['arrange']:>9.0f}"
                  f"  {'yes' if same else 'NO'}", flush=True)
        print(f"median ratio to rg: daemon {percentile([r[0] for r in ratios], 0.5):.2f}x, "
              f"CLI {percentile([r[1] for r in ratios], 0.5):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
