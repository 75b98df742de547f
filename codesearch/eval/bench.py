"""Where the shared benchmark's repositories are: one place for the benchmark scripts."""

from __future__ import annotations

import json
from pathlib import Path

SHARED_BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench"
DEFAULT_CHECKOUTS = Path.home() / ".cache" / "codesearch-bench"


# The 22 repositories of ../shared/bench in two halves, for honest tuning: every ranking weight is
# tuned on one half and reported on the other, then the other way round. The repositories are
# paired by language family and each pair split (the first of a pair in repos.json order goes to
# half A): Python web | Python libraries | JavaScript/TypeScript | Java/C# | Scala/Kotlin | C++/C |
# Rust/Zig | PHP/Ruby | Bash/Lua | Elixir/Haskell | Go/Swift. Fixed here, never chosen by score.
HALF_PAIRS = (("flask", "click"), ("model2vec", "requests"), ("express", "zod"), ("gson", "dapper"),
              ("cats", "kotlinx-coroutines"), ("fmtlib", "libuv"), ("serde", "zig-clap"), ("monolog", "sinatra"),
              ("bats-core", "lazy.nvim"), ("plug", "xmonad"), ("cobra", "alamofire"))
HALVES = {"A": tuple(a for a, _ in HALF_PAIRS), "B": tuple(b for _, b in HALF_PAIRS)}


def half_of(name: str) -> str:
    """'A' or 'B' for a benchmark repository, '-' for any other (a held-out set's)."""
    return next((half for half, names in HALVES.items() if name in names), "-")


class MissingCheckout(FileNotFoundError):
    """A benchmark repository has not been exported yet."""


def benchmark_roots(repos_json: Path, checkouts: Path, names: list[str] | None = None,
                    whole: bool = False) -> list[tuple[str, Path]]:
    """(name, folder to index) per repository of repos.json: its `benchmark_root`, or the whole
    checkout when that is null, missing, or `whole` is asked for."""
    roots = []
    for repo in json.loads(Path(repos_json).read_text()):
        if names and repo["name"] not in names:
            continue
        root = Path(checkouts) / repo["name"]
        if not whole and repo.get("benchmark_root"):
            root = root / repo["benchmark_root"]
        if not root.is_dir():
            raise MissingCheckout(f"missing checkout: {root} (see ../shared/bench/README.md)")
        roots.append((repo["name"], root))
    return roots
