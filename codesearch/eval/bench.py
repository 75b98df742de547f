"""Where the shared benchmark's repositories are: one place for the benchmark scripts."""

from __future__ import annotations

import json
from pathlib import Path

SHARED_BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench"
DEFAULT_CHECKOUTS = Path.home() / ".cache" / "codesearch-bench"


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
