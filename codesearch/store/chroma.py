"""Chroma: the vector mirror of the catalog. Vectors are always passed in (no embedding function).

Chroma's native code can crash (a segmentation fault, an abort) on damaged files instead of
raising, so a store that may be damaged is first opened in a child process (`probe`, which runs this
module), never in the process that would die with it. It may be damaged when a process died with it open: every
process that opens the store leaves a marker (`vectors.open.PID`) until it closes it, and a
marker whose process is gone means exactly that. Errors Chroma does raise become
VectorStoreError; the catalog, not Chroma, is the truth, so a damaged store is rebuilt from it.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..filters import Filters

STORE_FOLDER = "chroma"
OPEN_MARKER_PREFIX = "vectors.open."
PROBE_TIMEOUT_SECONDS = 300.0
UPSERT_SLICE = 2000
LOOKUP_SLICE = 5000  # ids looked up at once


class VectorStoreError(RuntimeError):
    """Chroma cannot be reached or used; the message says how, in one line."""


@dataclass(frozen=True)
class ProbeResult:
    """What opening the store in a child process showed: `count` vectors (None when the
    collection does not exist yet), or the `problem` that makes it unusable."""

    count: int | None = None
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def _client(index_dir: Path, chroma_url: str):
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
    try:
        if chroma_url:
            from urllib.parse import urlparse
            url = urlparse(chroma_url if "://" in chroma_url else f"http://{chroma_url}")
            return chromadb.HttpClient(host=url.hostname or "localhost", port=url.port or 8000,
                                       ssl=url.scheme == "https", settings=settings)
        return chromadb.PersistentClient(path=str(index_dir / STORE_FOLDER), settings=settings)
    except Exception as exc:  # noqa: BLE001 - any failure to open is one sentence
        where = chroma_url or index_dir / STORE_FOLDER
        if not chroma_url:
            _forget_failed_system(str(where))
        raise VectorStoreError(f"cannot open the Chroma store at {where}: {_one_line(exc)}") from None


def _forget_failed_system(path: str) -> None:
    """Chroma keeps one system per path for the whole process, registered before it starts: one
    whose start failed (a full disk) was found half made by the next open, which then failed
    otherwise and had the store taken for damaged. Dropped here, the next open starts afresh."""
    from chromadb.api.shared_system_client import SharedSystemClient
    system = SharedSystemClient._identifier_to_system.pop(path, None)
    SharedSystemClient._identifier_to_refcount.pop(path, None)
    if system is not None:
        with contextlib.suppress(Exception):  # half started: whatever it opened is let go
            system.stop()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


@contextlib.contextmanager
def _chroma_errors(what: str) -> Iterator[None]:
    """Chroma's own exceptions (InternalError on a damaged segment, ...) as VectorStoreError."""
    try:
        yield
    except VectorStoreError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever Chroma raises means the store failed
        raise VectorStoreError(f"the vector store failed to {what}: {_one_line(exc)}") from None


class VectorStore:
    """One Chroma collection per (index, embedder key): cosine space, configurable HNSW."""

    def __init__(self, index_dir: Path, collection: str, chroma_url: str = "", hnsw_m: int = 16,
                 construction_ef: int = 100, search_ef: int = 100):
        self.marker = None if chroma_url else open_marker(index_dir)
        self.client = _client(index_dir, chroma_url)
        configuration = {"hnsw": {"space": "cosine", "ef_construction": construction_ef,
                                  "ef_search": search_ef, "max_neighbors": hnsw_m}}
        with _chroma_errors(f"open collection {collection!r}"):
            self.collection = self.client.get_or_create_collection(
                collection, embedding_function=None, configuration=configuration)
        self._follow_search_ef(search_ef)

    def _follow_search_ef(self, search_ef: int) -> None:
        """A collection keeps the configuration it was made with, but its search breadth may
        change (Chroma allows it): an index made before follows the setting. Where the change
        cannot be written (another process holds the store), the search keeps the old breadth."""
        hnsw = (self.collection.configuration_json or {}).get("hnsw") or {}
        if hnsw.get("ef_search", search_ef) == search_ef:
            return
        try:
            self.collection.modify(configuration={"hnsw": {"ef_search": search_ef}})
        except Exception:  # noqa: BLE001 - a narrower search, never a failed open
            pass

    def upsert(self, ids: list[str], vectors: np.ndarray, metadatas: list[dict[str, Any]]) -> None:
        with _chroma_errors("store vectors"):
            for start in range(0, len(ids), UPSERT_SLICE):
                end = start + UPSERT_SLICE
                self.collection.upsert(ids=ids[start:end], embeddings=vectors[start:end],
                                       metadatas=metadatas[start:end])

    def delete(self, ids: list[str]) -> None:
        with _chroma_errors("delete vectors"):
            for start in range(0, len(ids), UPSERT_SLICE):
                self.collection.delete(ids=ids[start:start + UPSERT_SLICE])

    def holding(self, ids: list[str]) -> set[str]:
        """Those of `ids` that the store holds, looked up a slice at a time: paging through its
        whole list grows with the square of the store (docs/benchmarks.md, "Rebuilds")."""
        out: set[str] = set()
        with _chroma_errors("look up its vectors"):
            for start in range(0, len(ids), LOOKUP_SLICE):
                out.update(self.collection.get(ids=ids[start:start + LOOKUP_SLICE], include=[])["ids"])
        return out

    def ids(self) -> set[str]:
        """Every id the store holds: each page is found by its offset, so the whole list costs
        time that grows with the square of the store's size."""
        out: set[str] = set()
        offset = 0
        with _chroma_errors("list its vectors"):
            while True:
                page = self.collection.get(include=[], limit=5000, offset=offset)["ids"]
                out.update(page)
                if len(page) < 5000:
                    return out
                offset += len(page)

    def count(self) -> int:
        with _chroma_errors("count its vectors"):
            return self.collection.count()

    def query(self, vector: np.ndarray, limit: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the nearest vectors that pass the language and kind filters
        (a path glob is the caller's to check: Chroma cannot match globs), best first. Chroma
        answers fewer when it holds fewer (no count first: it cost every query time)."""
        with _chroma_errors("search"):
            result = self.collection.query(query_embeddings=[vector], n_results=limit,
                                           where=chroma_where(filters), include=["distances"])
        return [(i, 1.0 - d) for i, d in zip(result["ids"][0], result["distances"][0])]

    def close(self) -> None:
        """Let go of the store (Chroma keeps a process-wide system per path: drop it too)."""
        with contextlib.suppress(Exception):
            self.client.clear_system_cache()
        if self.marker is not None:
            close_marker(self.marker)
            self.marker = None


def chroma_where(filters: Filters | None) -> dict | None:
    """The language and kind filters as a Chroma `where` (vectors carry them as metadata)."""
    parts: list[dict] = []
    if filters and filters.language:
        parts.append({"language": filters.language})
    if filters and filters.kind:
        parts.append({"kind": filters.kind})
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else {"$and": parts}


# --- open markers ---------------------------------------------------------------------------
_OUR_MARKERS: set[Path] = set()


def open_marker(index_dir: Path) -> Path:
    marker = index_dir / f"{OPEN_MARKER_PREFIX}{os.getpid()}"
    marker.touch()
    _OUR_MARKERS.add(marker)
    return marker


def close_marker(marker: Path) -> None:
    _OUR_MARKERS.discard(marker)
    with contextlib.suppress(FileNotFoundError):
        marker.unlink()


@atexit.register
def _close_markers() -> None:
    for marker in list(_OUR_MARKERS):
        close_marker(marker)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def died_with_store_open(index_dir: Path) -> list[int]:
    """Pids of processes that had the store open and are gone (a crash or a kill -9): the store
    may be damaged."""
    dead = []
    for marker in index_dir.glob(f"{OPEN_MARKER_PREFIX}*"):
        pid = marker.name[len(OPEN_MARKER_PREFIX):]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            dead.append(int(pid))
    return dead


def forget_dead_markers(index_dir: Path, pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(FileNotFoundError):
            (index_dir / f"{OPEN_MARKER_PREFIX}{pid}").unlink()


# --- probing and removing ---------------------------------------------------------------------
def probe(index_dir: Path, collection: str, dimension: int, timeout: float = PROBE_TIMEOUT_SECONDS) -> ProbeResult:
    """Open the store, count and search it, in a child process: a crash there is a finding."""
    if not (index_dir / STORE_FOLDER).exists():
        return ProbeResult(count=None)
    command = [sys.executable, "-m", "codesearch.store.chroma", str(index_dir), collection, str(dimension)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return ProbeResult(problem=f"opening it took over {timeout:.0f} s")
    if done.returncode == 0:
        answer = json.loads(done.stdout.strip().splitlines()[-1])
        return ProbeResult(count=answer["count"])
    if done.returncode < 0:
        return ProbeResult(problem=f"opening it crashed Chroma ({signal.Signals(-done.returncode).name})")
    last = (done.stderr.strip().splitlines() or ["no message"])[-1]
    return ProbeResult(problem=f"opening it failed: {last[:300]}")


def remove_store(index_dir: Path) -> None:
    """Delete the store's files (moved aside first, so a crash midway leaves no half store)."""
    folder = index_dir / STORE_FOLDER
    if folder.exists():
        folder.rename(index_dir / f"{STORE_FOLDER}.removing-{os.getpid()}-{time.time_ns()}")
    for doomed in index_dir.glob(f"{STORE_FOLDER}.removing-*"):  # this one, and any a crash left
        shutil.rmtree(doomed, ignore_errors=True)


def _probe_in_child(argv: list[str]) -> int:
    """What `probe`'s child process does: open the store, count it, search it once, and print
    {"count": N} (null when the collection does not exist). A crash here harms no one."""
    index_dir, collection, dimension = Path(argv[0]), argv[1], int(argv[2])
    client = _client(index_dir, "")
    if collection not in {c.name for c in client.list_collections()}:
        print(json.dumps({"count": None}))
        return 0
    store = client.get_collection(collection)
    count = store.count()
    if count:
        probe_vector = np.full(dimension, 1 / np.sqrt(dimension), dtype=np.float32)
        store.query(query_embeddings=[probe_vector], n_results=min(10, count), include=["distances"])
        store.get(include=[], limit=10)
    print(json.dumps({"count": count, "folder": str(index_dir / STORE_FOLDER)}))
    return 0


if __name__ == "__main__":
    sys.exit(_probe_in_child(sys.argv[1:]))
