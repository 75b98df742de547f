"""What a search or a relation query asks and answers: the one definition of that part of the
JSON contract. Light on purpose: the CLI sends these to the daemon without loading the search
machinery, torch, Chroma or NetworkX."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..filters import Filters
from ..vocabulary import FILE_RANKINGS, MODES, RETRIEVER_NAMES
from ..wire import BLANKS, NOT_BLANK_PATTERN, Record, RequestError, is_blank

MAX_LIMIT = 1000
MAX_QUERY_CHARS = 65_536  # a longer query is cut here, and the answer says so
MAX_CONTEXT_LINES = 100
MAX_RELATION_DEPTH = 10
MAX_TOKENS = 1_000_000
Direction = Literal["callers", "callees"]


@dataclass(frozen=True)
class SearchRequest(Record):
    """A search: the query and its options (the `query` command's flags)."""

    DOCS = {
        "query": "Words (\"where is the retry backoff computed\"), a name (HTTPException) or a relation "
                 "(\"who calls parse_config\").",
        "mode": "hybrid (default: vectors, keywords and the call graph fused), vector, keyword or graph.",
        "limit": "How many results at most.",
        "filters": "Only chunks of this language, of this kind, or whose path matches this glob.",
        "files": "One result per file, ranked by its best chunks, instead of one per chunk.",
        "file_ranking": "How files are ranked with files: fuse_first (the retrievers' chunk lists fused, then "
                        "each file scored from its ranked chunks) or per_retriever (each retriever's chunks "
                        "made a file list first, then the file lists fused); default: the setting file_ranking.",
        "explain": "Add each result's ranking steps.",
        "context": "Extra lines around each snippet.",
        "max_tokens": "A budget for the whole answer, in tokens (about 4 characters each): snippets are "
                      "shortened, then the lowest results dropped, until the answer fits.",
        "truncated": "Set by the server when the query was cut at 65,536 characters.",
    }
    RANGES = {"limit": (1, MAX_LIMIT), "context": (0, MAX_CONTEXT_LINES), "max_tokens": (1, MAX_TOKENS)}
    OMIT_WHEN_NONE = frozenset({"max_tokens", "file_ranking"})
    SCHEMA = {"mode": {"enum": list(MODES)}, "file_ranking": {"enum": list(FILE_RANKINGS)}}
    NOT_BLANK = frozenset({"query"})

    query: str
    mode: str = "hybrid"
    limit: int = 10
    filters: Filters = field(default_factory=Filters)
    files: bool = False
    file_ranking: str | None = None  # with files: one of FILE_RANKINGS; None: the setting's
    explain: bool = False
    context: int = 0  # extra lines around the snippet
    max_tokens: int | None = None  # fit the answer to this budget (search/budget.py)
    truncated: bool = False  # the query was cut at MAX_QUERY_CHARS (set when it is)
    # in process only: ablations choose retrievers and ranking steps
    retrievers: tuple[str, ...] | None = field(default=None, metadata={"wire": False})
    ranking: Any = field(default=None, metadata={"wire": False})  # a ranking.RankingOptions; None: settings

    def __post_init__(self) -> None:
        self.check()
        if len(self.query) > MAX_QUERY_CHARS:  # frozen: set once, here, as the record is made
            object.__setattr__(self, "query", self.query[:MAX_QUERY_CHARS])
            object.__setattr__(self, "truncated", True)
        if self.mode not in MODES:
            raise RequestError(f"unknown mode {self.mode!r}; choose from {', '.join(MODES)}")
        if self.file_ranking is not None and self.file_ranking not in FILE_RANKINGS:
            raise RequestError(f"unknown file_ranking {self.file_ranking!r}; choose from {', '.join(FILE_RANKINGS)}")
        unknown = set(self.retrievers or ()) - set(RETRIEVER_NAMES)
        if unknown:
            raise RequestError(f"unknown retriever {sorted(unknown)[0]!r}")


@dataclass(frozen=True)
class ChunkPlace(Record):
    """Where a chunk is and what it is: the first fields of a search result, of a related
    definition and of a definition."""

    path: str  # relative to the indexed root (to its repository's, in a workspace), '/'-separated
    start_line: int  # 1-based, inclusive
    end_line: int
    kind: str
    name: str
    qualified_name: str
    language: str


@dataclass(frozen=True)
class SimilarChunk(Record):
    """A near-duplicate of a result (a translation, a copy), listed with it instead of shown as a
    result of its own (search/collapse.py)."""

    id: str
    path: str
    start_line: int
    end_line: int
    language: str


@dataclass(frozen=True)
class SearchResult(ChunkPlace):
    """One chunk found: where it is, what it is, how it ranked, and a snippet."""

    OMIT_WHEN_NONE = frozenset({"explain", "stale", "name_line", "name_column", "repo", "repo_rank", "fused_score",
                                "branch", "content_class", "similar"})

    score: float
    sources: dict[str, int | None]  # the rank each retriever of the mode gave it (1-based), or null
    snippet: str
    snippet_line: int  # the line the snippet starts at
    signature: str
    id: str
    explain: tuple[str, ...] | None = None  # ranking steps, with --explain
    stale: bool | None = None  # the file changed and is waiting to be reindexed
    name_line: int | None = None  # where a definition's name stands (1-based line and column)
    name_column: int | None = None
    # in a workspace: the repository, the result's 0-based rank in that repository's list, and
    # 1 / (k + rank) before the repository's boost (`score` is after it), as `merge` defines them
    repo: str | None = None
    repo_rank: int | None = None
    fused_score: float | None = None
    branch: str | None = None  # in a team store (--store): the branch of `repo` it was indexed from
    # code, test, example, documentation, generated, vendored or configuration (analysis/content_class.py)
    content_class: str | None = None
    similar: tuple[SimilarChunk, ...] | None = None  # its near-duplicates, best first (none: left out)


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

    DOCS = {"name": "A definition's name, bare (parse_config) or qualified (config.Loader.parse_config).",
            "depth": "Hops along the call graph: 1 for direct callers or callees, more for theirs too.",
            "id": "Instead of a name: one definition's chunk id (from a search result).",
            "across": "The name may be defined in another repository (a workspace): callers are also found "
                      "by the called name, and the answer lists the names its targets call that nothing "
                      "here defines.",
            "limit": "At most this many results, nearest first.",
            "filters": "Only results of this language, of this kind, or whose path matches this glob."}
    RANGES = {"depth": (1, MAX_RELATION_DEPTH), "limit": (1, MAX_LIMIT)}
    OMIT_WHEN_NONE = frozenset({"id", "across", "limit"})
    OBJECT_SCHEMA = {"anyOf": [{"required": ["name"], "properties": {"name": {"pattern": NOT_BLANK_PATTERN}}},
                               {"required": ["id"], "properties": {"id": {"type": "string", "minLength": 1}}}]}

    name: str = ""
    depth: int = 1
    id: str | None = None
    across: bool | None = None
    limit: int | None = None
    filters: Filters = field(default_factory=Filters)
    direction: Direction = field(default="callers", metadata={"wire": False})  # set by the method called

    def __post_init__(self) -> None:
        if is_blank(self.name) and not self.id:
            raise RequestError("give a name or a chunk id: the name is empty")
        self.check()


@dataclass(frozen=True)
class RelationTarget(Record):
    OMIT_WHEN_NONE = frozenset({"repo"})

    path: str
    start_line: int
    qualified_name: str
    repo: str | None = None  # in a workspace


@dataclass(frozen=True)
class RelatedResult(ChunkPlace):
    OMIT_WHEN_NONE = frozenset({"name_line", "name_column", "sites", "repo", "resolution", "branch"})

    score: float
    depth: int  # hops from the target
    snippet: str
    snippet_line: int
    id: str
    name_line: int | None = None
    name_column: int | None = None
    # direct relations: the lines of the calls (in the caller for callers, in the target for callees)
    sites: tuple[int, ...] | None = None
    repo: str | None = None  # in a workspace
    # how the edge that reached it was resolved: exact (own file or class), import, type (the
    # receiver's), name-only (a name defined once, or guessed at), dynamic (an interface's method),
    # scip (a SCIP index's: indexing/scip_source.py)
    resolution: str | None = None
    branch: str | None = None  # in a team store (--store)


@dataclass(frozen=True)
class RelationsAnswer(Record):
    """`targets`: every definition the name means (more than one when it is ambiguous: ask again
    with a qualified name to narrow); `note` says so, or that nothing has that name."""

    OMIT_WHEN_NONE = frozenset({"note", "unresolved"})

    name: str
    direction: Direction
    targets: tuple[RelationTarget, ...]
    results: tuple[RelatedResult, ...]
    timing_ms: dict[str, float]
    note: str | None = None
    # asked `across`, callees: names the targets call that nothing in this index defines
    unresolved: tuple[str, ...] | None = None


@dataclass(frozen=True)
class DefinitionRequest(Record):
    """Where a name is defined: its definitions with signature and docstring."""

    DOCS = {"name": "A definition's name, bare (Loader) or qualified (config.Loader).",
            "limit": "How many definitions at most.",
            "near": "A path (relative to the root): definitions in it, then in its folder, come first."}
    RANGES = {"limit": (1, MAX_LIMIT)}
    NOT_BLANK = frozenset({"name"})
    OMIT_WHEN_NONE = frozenset({"near"})

    name: str
    limit: int = 20
    near: str | None = None


@dataclass(frozen=True)
class Definition(ChunkPlace):
    OMIT_WHEN_NONE = frozenset({"name_line", "name_column", "repo"})

    signature: str
    docstring: str
    id: str
    name_line: int | None = None
    name_column: int | None = None
    repo: str | None = None  # in a workspace


@dataclass(frozen=True)
class DefinitionAnswer(Record):
    """Exact qualified matches first; `note` suggests near names when nothing matched."""

    OMIT_WHEN_NONE = frozenset({"note"})

    name: str
    definitions: tuple[Definition, ...]
    timing_ms: dict[str, float]
    note: str | None = None


@dataclass(frozen=True)
class ImpactRequest(RelationsRequest):
    """What may break if `name` changes: its callers, their callers, ... `depth` hops out."""

    depth: int = 3


@dataclass(frozen=True)
class ImpactFile(Record):
    OMIT_WHEN_NONE = frozenset({"repo"})

    path: str
    callers: tuple[RelatedResult, ...]  # nearest first
    repo: str | None = None  # in a workspace


@dataclass(frozen=True)
class ImpactAnswer(Record):
    """What may break if `name` changes: its transitive callers, grouped by file (files with the
    nearest callers first)."""

    OMIT_WHEN_NONE = frozenset({"note"})

    name: str
    depth: int
    targets: tuple[RelationTarget, ...]
    files: tuple[ImpactFile, ...]
    callers: int  # how many callers in all
    timing_ms: dict[str, float]
    note: str | None = None


@dataclass(frozen=True)
class SymbolsRequest(Record):
    """Definitions by name, as an editor's symbol search asks while one types."""

    DOCS = {"query": "Part of a name, any case.", "limit": "How many symbols at most."}
    RANGES = {"limit": (1, MAX_LIMIT)}
    NOT_BLANK = frozenset({"query"})

    query: str
    limit: int = 50


@dataclass(frozen=True)
class SymbolsAnswer(Record):
    """Names that contain the query first (exact, then prefix, then the rest), then the
    definitions a hybrid search of the query ranks, among those its words match."""

    query: str
    symbols: tuple[Definition, ...]
    timing_ms: dict[str, float]


@dataclass(frozen=True)
class ReferencesRequest(Record):
    """The recorded call sites of a name."""

    DOCS = {"name": "A function or method name, bare or qualified (the last part is looked up).",
            "limit": "How many call sites at most."}
    RANGES = {"limit": (1, 10_000)}
    NOT_BLANK = frozenset({"name"})

    name: str
    limit: int = 1000


@dataclass(frozen=True)
class Reference(Record):
    OMIT_WHEN_NONE = frozenset({"repo", "use", "resolution"})

    path: str
    line: int  # 1-based
    column: int  # 1-based, in characters: where the name stands on that line (1 when unknown)
    caller: str  # the qualified name of the definition (or the file) that makes the call
    caller_id: str
    repo: str | None = None  # in a workspace
    # "call", or "reference" where the name is used without a call (a method value, a function
    # passed as an argument, a decorator)
    use: str | None = None
    # how the caller's link to a definition of the name was resolved (as RelatedResult's); none
    # where it links to nothing here (a name from outside the repository)
    resolution: str | None = None


@dataclass(frozen=True)
class ReferencesAnswer(Record):
    name: str
    references: tuple[Reference, ...]
    timing_ms: dict[str, float]


GrepSort = Literal["rank", "path"]
MAX_GREP_MATCHES = 100_000  # lines read from the engine at most; past this the answer says `truncated`
MAX_GREP_CONTEXT = 50


@dataclass(frozen=True)
class GrepRequest(Record):
    """Exact text or a regular expression over the repository's files (its ignore rules apply),
    each match placed in the chunk that holds it and ranked by structure."""

    DOCS = {
        "pattern": "A regular expression (Rust syntax, as ripgrep's), or exact text with fixed.",
        "fixed": "Take the pattern as exact text, not a regular expression (grep -F).",
        "word": "Match whole words only (grep -w).",
        "ignore_case": "Ignore case (grep -i); false or absent: case matters.",
        "before": "Lines of context before each match (grep -B).",
        "after": "Lines of context after each match (grep -A).",
        "paths": "Search only these files or folders (relative to the root, inside it).",
        "filters": "Only files of this language, or whose path matches this glob.",
        "sort": "rank (default): the matched name's definition first, then central code, tests and "
                "vendored code last; path: file and line order.",
        "limit": "How many matching lines at most in the answer (files and counts cover all of them).",
        "explain": "Say why each match ranks where it does.",
    }
    RANGES = {"before": (0, MAX_GREP_CONTEXT), "after": (0, MAX_GREP_CONTEXT), "limit": (1, MAX_GREP_MATCHES)}
    NOT_BLANK = frozenset({"pattern"})
    # a match lies within one line: a pattern that holds a line break is refused
    SCHEMA = {"pattern": {"pattern": rf"^[^\u0000\n]*[^\u0000{BLANKS}][^\u0000\n]*$"}}
    OMIT_WHEN_NONE = frozenset({"paths"})

    pattern: str
    fixed: bool = False
    word: bool = False
    ignore_case: bool = False
    before: int = 0
    after: int = 0
    paths: tuple[str, ...] | None = None
    filters: Filters = field(default_factory=Filters)
    sort: GrepSort = "rank"
    limit: int = 1000
    explain: bool = False

    def __post_init__(self) -> None:
        self.check()
        if "\n" in self.pattern:
            raise RequestError("the pattern holds a line break: grep matches within one line")


@dataclass(frozen=True)
class ChunkRef(Record):
    """The chunk a match sits in: a definition, or the file itself for top-level lines."""

    kind: str
    name: str
    qualified_name: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class GrepMatch(Record):
    OMIT_WHEN_NONE = frozenset({"explain", "repo"})

    path: str
    line: int  # 1-based
    column: int  # 1-based, in characters: where the first match on the line begins
    text: str  # the whole line, without its line break
    chunk: ChunkRef | None
    before: tuple[str, ...]
    after: tuple[str, ...]
    explain: tuple[str, ...] | None = None
    repo: str | None = None  # in a workspace


@dataclass(frozen=True)
class GrepFile(Record):
    OMIT_WHEN_NONE = frozenset({"repo"})

    path: str
    count: int  # matching lines in it
    repo: str | None = None  # in a workspace


@dataclass(frozen=True)
class GrepAnswer(Record):
    """`matches` in rank (or path) order, at most `limit`; `files` holds every matching file, in
    the same order, with its count of matching lines."""

    OMIT_WHEN_NONE = frozenset({"note"})

    pattern: str
    matches: tuple[GrepMatch, ...]
    files: tuple[GrepFile, ...]
    total: int  # matching lines in all
    truncated: bool  # more matches than the answer (or the engine's read) holds
    timing_ms: dict[str, float]
    note: str | None = None
