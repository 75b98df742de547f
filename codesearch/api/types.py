"""Requests and answers of the API methods other than search and relations (those live with the
search in `search/requests.py` and are re-exported here): one import for every front-end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..search.requests import (
    MAX_LIMIT,
    Definition,
    DefinitionAnswer,
    DefinitionRequest,
    Direction,
    GrepAnswer,
    GrepRequest,
    ImpactAnswer,
    ImpactFile,
    ImpactRequest,
    Reference,
    ReferencesAnswer,
    ReferencesRequest,
    RelatedResult,
    RelationsAnswer,
    RelationsRequest,
    RelationTarget,
    SearchAnswer,
    SearchRequest,
    SearchResult,
    SymbolsAnswer,
    SymbolsRequest,
)
from ..wire import Record, RequestError

__all__ = [
    "MAX_LIMIT",
    "Definition",
    "DefinitionAnswer",
    "DefinitionRequest",
    "Direction",
    "EmbeddingProgress",
    "Empty",
    "GrepAnswer",
    "GrepRequest",
    "Health",
    "ImpactAnswer",
    "ImpactFile",
    "ImpactRequest",
    "IndexAnswer",
    "IndexRequest",
    "Ok",
    "ReadAnswer",
    "ReadRequest",
    "Reference",
    "ReferencesAnswer",
    "ReferencesRequest",
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
    "SymbolsAnswer",
    "SymbolsRequest",
]

MAX_INDEX_WAIT_SECONDS = 24 * 3600.0
MAX_READ_LINES = 2000  # one read returns at most this many lines (and says when it stopped)


@dataclass(frozen=True)
class Empty(Record):
    """The parameters of a method that takes none."""


@dataclass(frozen=True)
class Ok(Record):
    ok: bool = True


@dataclass(frozen=True)
class IndexRequest(Record):
    """Bring the index up to date: these paths (relative to the root), or everything."""

    DOCS = {"paths": "Files or folders relative to the root (inside it); omit for everything.",
            "timeout": "Seconds to wait for the work to finish.",
            "verify": "Also check the database's integrity and reconcile every vector id.",
            "repo": "In a workspace: only this repository (by name); omit for all of them."}
    RANGES = {"timeout": (0.001, MAX_INDEX_WAIT_SECONDS)}
    OMIT_WHEN_NONE = frozenset({"repo"})

    paths: tuple[str, ...] | None = None
    timeout: float = 300.0
    verify: bool = False
    repo: str | None = None


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


def embedded_share(vectors: int, without_vectors: int) -> float:
    """The share of the chunks that get a vector which have it now (1.0: vector search sees all
    it ever will; chunks with nothing to say get no vector and do not count)."""
    total = vectors + without_vectors
    return round(vectors / total, 4) if total else 1.0


@dataclass(frozen=True)
class Stats(Record):
    """What an index holds (`codesearch stats --json`)."""

    OMIT_WHEN_NONE = frozenset({"vectors_in_store", "vector_store_error", "scip_path", "scip_files",
                                "scip_stale_files", "scip_problem"})

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
    # the SCIP index whose precise call edges the index holds (indexing/scip_source.py): the files
    # that take theirs from it, those changed since it was made, why it was not used
    scip_path: str | None = None
    scip_files: int | None = None
    scip_stale_files: int | None = None
    scip_problem: str | None = None


@dataclass(frozen=True)
class EmbeddingProgress(Record):
    chunks_without_vectors: int
    rate_per_second: float  # 0 while nothing is being embedded
    eta_seconds: float | None  # None unless embedding now at a known rate
    active: bool = False  # a slice was embedded in the last few seconds


@dataclass(frozen=True)
class Status(Record):
    """A running daemon: what it serves and what it is doing."""

    OMIT_WHEN_NONE = frozenset({"indexing", "idle_stop_minutes", "model_error", "write_error", "dormant"})

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
    embedded_share: float  # vectors / chunks: below 1, vector search does not see everything yet
    stale: bool  # changes are waiting to be indexed: answers may not reflect them yet
    # the writer's run now, one progress event per stage (`index --progress-json`'s objects)
    indexing: list[dict[str, Any]] | None = None
    idle_stop_minutes: float | None = None  # an auto-started daemon stops after this long idle
    model_error: str | None = None  # why the embedding model could not be loaded (keyword and graph only)
    # why the last write failed (a full disk, a lock held too long): its changes are kept and tried again
    write_error: str | None = None
    # true: its model and caches given back after quiet minutes; the next request wakes it (this
    # status is the one it had then)
    dormant: bool | None = None


@dataclass(frozen=True)
class Health(Record):
    OMIT_WHEN_NONE = frozenset({"http", "pending_changes", "stale", "write_error", "dormant"})

    ok: bool
    pid: int
    ready: bool
    root: str
    http: str | None = None  # HOST:PORT of the HTTP front-end, when the daemon serves one
    # a daemon's: changes not indexed yet (as in Status), and why its last write failed
    pending_changes: int | None = None
    stale: bool | None = None
    write_error: str | None = None
    dormant: bool | None = None  # true: a dormant daemon answered; the next other request wakes it


@dataclass(frozen=True)
class ReadRequest(Record):
    """Source text from the repository: a file (a line range of it), or one chunk by its id."""

    DOCS = {"path": "A file, relative to the root; it must lie inside the repository.",
            "start_line": "First line (1-based); default 1.",
            "end_line": "Last line, inclusive; default the end of the file (at most 2,000 lines per read); "
                        "an end_line before start_line reads no line.",
            "id": "A chunk id from a search result, instead of path and lines.",
            "repo": "In a workspace: the repository (by name) the path or id belongs to."}
    RANGES = {"start_line": (1, 1 << 31), "end_line": (1, 1 << 31)}
    OMIT_WHEN_NONE = frozenset({"repo"})
    NOT_BLANK = frozenset({"path"})
    OBJECT_SCHEMA = {"oneOf": [
        {"required": ["path"], "properties": {"path": {"type": "string"}, "id": {"type": "null"}}},
        {"required": ["id"], "properties": {"id": {"type": "string"}, "path": {"type": "null"},
                                            "start_line": {"type": "null"}, "end_line": {"type": "null"}}}]}

    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    id: str | None = None
    repo: str | None = None

    def __post_init__(self) -> None:
        if (self.path is None) == (self.id is None):
            raise RequestError("give either a path or a chunk id")
        if self.id is not None and (self.start_line is not None or self.end_line is not None):
            raise RequestError("lines go with a path, not with a chunk id")
        self.check()


@dataclass(frozen=True)
class ReadAnswer(Record):
    path: str
    start_line: int
    end_line: int  # the last line returned
    total_lines: int  # lines in the file
    text: str
    truncated: bool  # more lines were asked for than one read returns
