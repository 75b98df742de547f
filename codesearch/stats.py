"""What an index holds, for `codesearch stats` and the daemon's status."""

from __future__ import annotations

import time
from pathlib import Path

from .index import Index


def _disk_size(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        try:
            if path.is_file():
                total += path.stat().st_size
        except OSError:
            continue
    return total


def collect_stats(index: Index, count_vectors: bool = True) -> dict:
    cat = index.catalog
    data = cat.counts()
    if count_vectors and not cat.is_empty():
        try:
            data["vectors_in_store"] = index.vectors.count()
        except Exception as exc:  # noqa: BLE001 - stats should still print
            data["vectors_in_store"] = None
            data["vector_store_error"] = str(exc)
    data["chunks_without_vectors"] = data["chunks"] - data["vectors"]
    data["index_bytes"] = _disk_size(index.dir)
    data["index_dir"] = str(index.dir)
    data["root"] = str(index.root)
    data["model"] = cat.get_meta("model") or index.settings.model
    last = cat.get_meta("last_index_time")
    data["last_index_time"] = float(last) if last else None
    seconds = cat.get_meta("last_index_seconds")
    data["last_index_seconds"] = float(seconds) if seconds else None
    return data


def format_stats(data: dict) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(data["last_index_time"])) if data["last_index_time"] else "never"
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(data["skipped"].items())) or "none"
    languages = ", ".join(f"{k} {v}" for k, v in data["languages"].items()) or "none"
    lines = [
        f"index:     {data['index_dir']} ({data['index_bytes'] / 1e6:.1f} MB)",
        f"files:     {data['files']}   ({languages})",
        f"chunks:    {data['chunks']}   vectors: {data['vectors']}   edges: {data['edges']}",
        f"skipped:   {skipped}",
        f"model:     {data['model']}",
        f"indexed:   {when}" + (f" in {data['last_index_seconds']:.1f}s" if data["last_index_seconds"] else ""),
    ]
    return "\n".join(lines)
