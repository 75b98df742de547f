"""What a search or a relation query asks and answers: the one definition of that part of the
JSON contract. Light on purpose: the CLI sends these to the daemon without loading the search
machinery, torch, Chroma or NetworkX."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..vocabulary import MODES, RETRIEVER_NAMES, Filters
from ..wire import Record, RequestError

MAX_LIMIT = 1000
MAX_QUERY_CHARS = 65_536  # a longer query is cut here, and the answer says so
MAX_CONTEXT_LINES = 100
MAX_RELATION_DEPTH = 10
Direction = Literal["callers", "callees"]


@dataclass(frozen=True)
class SearchRequest(Record):
    """A search: the query and its options (the `query` command's flags)."""

    query: str
    mode: str = "hybrid"
    limit: int = 10
    filters: Filters = field(default_factory=Filters)
    files: bool = False
    explain: bool = False
    context: int = 0  # extra lines around the snippet
    truncated: bool = False  # the query was cut at MAX_QUERY_CHARS (set when it is)
    # in process only: ablations choose retrievers and ranking steps
    retrievers: tuple[str, ...] | None = field(default=None, metadata={"wire": False})
    ranking: Any = field(default=None, metadata={"wire": False})  # a ranking.RankingOptions; None: settings

    def __post_init__(self) -> None:
        if not self.query.strip():
            raise RequestError("the query is empty")
        if len(self.query) > MAX_QUERY_CHARS:  # frozen: set once, here, as the record is made
            object.__setattr__(self, "query", self.query[:MAX_QUERY_CHARS])
            object.__setattr__(self, "truncated", True)
        if self.mode not in MODES:
            raise RequestError(f"unknown mode {self.mode!r}; choose from {', '.join(MODES)}")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise RequestError(f"limit must be between 1 and {MAX_LIMIT}, not {self.limit}")
        if not 0 <= self.context <= MAX_CONTEXT_LINES:
            raise RequestError(f"context must be between 0 and {MAX_CONTEXT_LINES} lines, not {self.context}")
        unknown = set(self.retrievers or ()) - set(RETRIEVER_NAMES)
        if unknown:
            raise RequestError(f"unknown retriever {sorted(unknown)[0]!r}")


@dataclass(frozen=True)
class SearchResult(Record):
    """One chunk found: where it is, what it is, how it ranked, and a snippet."""

    OMIT_WHEN_NONE = frozenset({"explain", "stale"})

    path: str  # relative to the indexed root, '/'-separated
    start_line: int  # 1-based, inclusive
    end_line: int
    kind: str
    name: str
    qualified_name: str
    language: str
    score: float
    sources: dict[str, int | None]  # the rank each retriever of the mode gave it (1-based), or null
    snippet: str
    snippet_line: int  # the line the snippet starts at
    signature: str
    id: str
    explain: tuple[str, ...] | None = None  # ranking steps, with --explain
    stale: bool | None = None  # the file changed and is waiting to be reindexed


@dataclass(frozen=True)
class SearchAnswer(Record):
    OMIT_WHEN_NONE = frozenset({"partial", "embedded_share", "notes", "note", "truncated"})

    query: str
    mode: str
    results: tuple[SearchResult, ...]
    timing_ms: dict[str, float]
    partial: bool | None = None  # some retriever could not see the whole index (vectors still coming)
    embedded_share: float | None = None  # the share of chunks with vectors, when partial
    notes: dict[str, str] | None = None  # what each retriever had to say, with --explain
    note: str | None = None  # one line for the user about this answer
    truncated: bool | None = None  # the query was longer than MAX_QUERY_CHARS and was cut


@dataclass(frozen=True)
class RelationsRequest(Record):
    """Callers or callees of the definitions named `name` (bare or qualified), `depth` hops out."""

    name: str
    depth: int = 1
    direction: Direction = field(default="callers", metadata={"wire": False})  # set by the method called

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise RequestError("the name is empty")
        if not 1 <= self.depth <= MAX_RELATION_DEPTH:
            raise RequestError(f"depth must be between 1 and {MAX_RELATION_DEPTH}, not {self.depth}")


@dataclass(frozen=True)
class RelationTarget(Record):
    path: str
    start_line: int
    qualified_name: str


@dataclass(frozen=True)
class RelatedResult(Record):
    path: str
    start_line: int
    end_line: int
    kind: str
    name: str
    qualified_name: str
    language: str
    score: float
    depth: int  # hops from the target
    snippet: str
    snippet_line: int
    id: str


@dataclass(frozen=True)
class RelationsAnswer(Record):
    name: str
    direction: Direction
    targets: tuple[RelationTarget, ...]
    results: tuple[RelatedResult, ...]
    timing_ms: dict[str, float]
