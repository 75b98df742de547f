"""What an index holds: the `stats` answer, for the CLI and the daemon alike."""

from __future__ import annotations

import os
from pathlib import Path

from ..indexing.index import Index
from ..indexing.scip_source import read_state
from .types import Stats


def disk_size(folder: Path) -> int:
    """The bytes of the files under `folder`. Parts may vanish while it counts (a damaged vector
    store moved aside and deleted): those are skipped, not an error."""
    total = 0
    for parent, _dirs, files in os.walk(folder):  # os.walk ignores folders that vanish; rglob raised
        for name in files:
            try:
                total += os.stat(os.path.join(parent, name), follow_symlinks=False).st_size
            except OSError:
                continue
    return total


def collect_stats(index: Index, count_vectors: bool = True) -> Stats:
    """`count_vectors` also counts what the vector store holds, opening it in a child process
    (a second or two; a damaged store is reported, not crashed into)."""
    cat = index.catalog
    counts = cat.stats.counts()
    in_store: int | None = None
    store_error: str | None = index.vectors.problem
    if count_vectors and not cat.is_empty() and store_error is None:
        result = index.vectors.probe()
        in_store = result.count or 0
        store_error = index.vectors.problem
    last = cat.get_meta("last_index_time")
    seconds = cat.get_meta("last_index_seconds")
    scip = read_state(cat)
    return Stats(
        files=counts["files"], chunks=counts["chunks"], vectors=counts["vectors"], edges=counts["edges"],
        skipped=counts["skipped"], languages=counts["languages"],
        chunks_without_vectors=counts["without_vectors"], index_bytes=disk_size(index.dir),
        source_bytes=counts["source_bytes"], index_dir=str(index.dir), root=str(index.root),
        model=cat.get_meta("model") or index.settings.model,
        last_index_time=float(last) if last else None, last_index_seconds=float(seconds) if seconds else None,
        vectors_in_store=in_store, vector_store_error=store_error, scip_path=scip.path or None,
        scip_files=scip.files if scip.path else None, scip_stale_files=scip.stale if scip.path else None,
        scip_problem=scip.problem or None)
