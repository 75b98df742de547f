"""Helpers shared by the benchmark scripts: percentiles, query lists, a daemon to measure."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

# generic code questions and names: they fit any repository
GENERIC_QUERIES = ["error handling", "parse configuration file", "retry with backoff", "read from a socket",
                   "how are tests run", "logging setup", "convert to json", "cache invalidation",
                   "main entry point", "command line arguments", "http request", "thread pool",
                   "string formatting", "Error", "Config"]


def percentile(values: list[float], q: float) -> float:
    """The q-quantile by rank (q in [0, 1]) of a non-empty list."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def codesearch(*args: object, check: bool = True, checkout: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    """`codesearch ARGS` as a child process of the code in `checkout` (default: this one)."""
    return subprocess.run([sys.executable, "-m", "codesearch.cli", *map(str, args)], check=check,
                          capture_output=True, text=True, cwd=checkout)


@contextlib.contextmanager
def running_daemon(root: Path, checkout: Path = REPO_ROOT, index_dir: str | None = None,
                   extra: tuple[str, ...] = ()) -> Iterator[Path]:
    """A daemon of the code in `checkout` serving `root` (its index in `index_dir`, else where
    the environment says) for the block, started with `extra` flags; yields its socket."""
    from codesearch.daemon.client import socket_path
    where = ("--index-dir", index_dir) if index_dir else ()
    codesearch("daemon", "start", root, *where, *extra, checkout=checkout)
    try:
        yield socket_path(root, index_dir)
    finally:
        codesearch("daemon", "stop", root, *where, check=False, checkout=checkout)


def shown_path(path: Path | str) -> str:
    """A path as results show it: under the home folder as `~/...`, so that a JSON written here
    names no one's home."""
    text, home = str(path), str(Path.home())
    return "~" + text[len(home):] if text == home or text.startswith(home + "/") else text


def write_results(path: Path, figures: dict, **rows: list[dict]) -> None:
    """A benchmark's figures as JSON (docs/benchmarks/ keeps them): the figures indented, then each
    list of per-question rows one row to a line, so that a rerun's diff shows which rows moved."""
    parts = [f" {json.dumps(key)}: " + json.dumps(value, indent=1).replace("\n", "\n ")
             for key, value in figures.items()]
    parts += [f" {json.dumps(key)}: [\n" + ",\n".join("  " + json.dumps(row, ensure_ascii=False) for row in values)
              + "\n ]" for key, values in rows.items()]
    path.write_text("{\n" + ",\n".join(parts) + "\n}\n", encoding="utf-8")


def print_percentiles(label: str, results: dict[str, list[float]]) -> None:
    """One row per series: p50, p95 and how many."""
    width = max([len(label), *map(len, results)]) + 2
    print(f"{label:<{width}}{'p50 ms':>9}{'p95 ms':>9}{'n':>6}")
    for name, times in results.items():
        if times:
            print(f"{name:<{width}}{percentile(times, 0.5):>9.1f}{percentile(times, 0.95):>9.1f}{len(times):>6}")


def wait_until_embedded(sock: Path, timeout: float = 3600, interval: float = 1.0,
                        progress: Callable[[dict], None] | None = None) -> dict:
    """Wait until the daemon's model is loaded and every chunk has its vector; its status.
    `progress` sees each status read on the way (every `interval` seconds)."""
    from codesearch.daemon.client import call
    deadline = time.monotonic() + timeout
    while True:
        status = call(sock, "status")
        if status["model_ready"] and not status["embedding"]["chunks_without_vectors"]:
            return status
        if progress is not None:
            progress(status)
        if time.monotonic() > deadline:
            raise TimeoutError("the daemon did not finish embedding in time")
        time.sleep(interval)


def wait_until_idle(pid: int, quiet_seconds: float = 3.0, timeout: float = 600) -> float:
    """Wait until process `pid` has used almost no CPU for `quiet_seconds` (a daemon done loading
    its graph and model, and catching up with the disk): measurements then time the requests,
    not the daemon's start. Returns the seconds waited."""
    ticks = os.sysconf("SC_CLK_TCK")

    def cpu_seconds() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime

    started = time.monotonic()
    last, quiet_since = cpu_seconds(), time.monotonic()
    while time.monotonic() - quiet_since < quiet_seconds:
        if time.monotonic() - started > timeout:
            raise TimeoutError(f"process {pid} stayed busy for {timeout:.0f} s")
        time.sleep(0.5)
        now = cpu_seconds()
        if now - last > 0.05:  # more than 10% of a core over the half second
            quiet_since = time.monotonic()
        last = now
    return time.monotonic() - started
