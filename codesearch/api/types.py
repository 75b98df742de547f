"""Requests and answers of the API methods other than search and relations (those live with the
search in `search/types.py` and are re-exported here): one import for every front-end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..search.types import (
    MAX_LIMIT,
    Direction,
    RelatedResult,
    RelationsAnswer,
    RelationsRequest,
    RelationTarget,
    SearchAnswer,
    SearchRequest,
    SearchResult,
)
from ..wire import Record, RequestError

__all__ = [
    "MAX_LIMIT",
    "Direction",
    "EmbeddingProgress",
    "Empty",
    "Health",
    "IndexAnswer",
    "IndexRequest",
    "Ok",
    "RelatedResult",
    "RelationTarget",
    "RelationsAnswer",
    "RelationsRequest",
    "RequestError",
    "SearchAnswer",
    "SearchRequest",
    "SearchResult",
    "Stats",
    "Status",
]

MAX_INDEX_WAIT_SECONDS = 24 * 3600.0


@dataclass(frozen=True)
class Empty(Record):
    """The parameters of a method that takes none."""


@dataclass(frozen=True)
class Ok(Record):
    ok: bool = True


@dataclass(frozen=True)
class IndexRequest(Record):
    """Bring the index up to date: these paths (relative to the root), or everything."""

    paths: tuple[str, ...] | None = None
    timeout: float = 300.0  # seconds to wait for the work to finish
    verify: bool = False  # also check the catalog's integrity and reconcile every vector id

    def __post_init__(self) -> None:
        if not 0 < self.timeout <= MAX_INDEX_WAIT_SECONDS:
            raise RequestError(f"timeout must be between 0 and {MAX_INDEX_WAIT_SECONDS:.0f} seconds")


@dataclass(frozen=True)
class IndexAnswer(Record):
    """What an index run changed. `ok` is false when the run did not finish within the timeout."""

    OMIT_WHEN_NONE = frozenset({"note"})

    ok: bool
    added: int = 0
    modified: int = 0
    deleted: int = 0
    renamed: int = 0
    unchanged: int = 0
    skipped: dict[str, int] | None = None
    chunks_written: int = 0
    vectors_embedded: int = 0
    vectors_from_cache: int = 0
    vectors_deleted: int = 0
    seconds: float = 0.0
    rebuilt: str = ""  # why the index was rebuilt from scratch, if it was
    vectors_repaired: str = ""  # why the vector store was rebuilt from the catalog, if it was
    vectors_reconciled: int = 0  # vectors that the store had lost or held astray, put right
    verified: bool = False  # the catalog's integrity and every vector id were checked
    note: str | None = None


@dataclass(frozen=True)
class Stats(Record):
    """What an index holds (`codesearch stats --json`)."""

    OMIT_WHEN_NONE = frozenset({"vectors_in_store", "vector_store_error"})

    files: int
    chunks: int
    vectors: int
    edges: int
    skipped: dict[str, int]  # files left out, by reason
    languages: dict[str, int]  # files by language
    chunks_without_vectors: int
    index_bytes: int
    source_bytes: int  # the bytes of the indexed files
    index_dir: str
    root: str
    model: str
    last_index_time: float | None
    last_index_seconds: float | None
    vectors_in_store: int | None = None  # counted in Chroma itself, when asked
    vector_store_error: str | None = None


@dataclass(frozen=True)
class EmbeddingProgress(Record):
    chunks_without_vectors: int
    rate_per_second: float
    eta_seconds: float | None  # None while the rate is unknown


@dataclass(frozen=True)
class Status(Record):
    """A running daemon: what it serves and what it is doing."""

    pid: int
    root: str
    uptime_seconds: float
    ready: bool
    model_ready: bool
    files: int
    chunks: int
    vectors: int
    edges: int
    skipped: dict[str, int]
    pending_changes: int
    last_reindex: dict[str, Any] | None
    reindex_count: int
    embedding: EmbeddingProgress
    watcher: str | None
    watcher_note: str


@dataclass(frozen=True)
class Health(Record):
    ok: bool
    pid: int
    ready: bool
    root: str
