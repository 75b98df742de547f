"""Plain data records shared by parsing, chunking, the stores and search (the named sets of
kinds and modes, and the result filters, are in `vocabulary.py`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import NamedTuple


@dataclass
class ParsedDefinition:
    """A named definition found by tree-sitter (function, class, struct, ...)."""

    kind: str
    name: str
    qualified_name: str
    signature: str
    docstring: str
    start_line: int  # 1-based, inclusive; includes decorators and doc comments
    end_line: int
    start_byte: int
    end_byte: int
    body_start_byte: int  # where the definition's body begins (for signatures)
    parent: int | None = None  # index of the enclosing definition in ParsedFile.definitions
    name_line: int = 0  # where the name itself stands (1-based line and character column; 0: unknown)
    name_column: int = 0


class CallSite(NamedTuple):
    """A call of `name` at `line`, made inside definition `caller` (index) or at top level (None);
    `hint`: what the receiver is (ingest/scopes.py); `ref`: the name is used, not called (a method
    value, a function passed as an argument, a decorator).

    A tuple, not a dataclass: a file has hundreds of them and building them is on the hot path."""

    name: str
    line: int
    caller: int | None = None
    hint: str = ""
    ref: bool = False


@dataclass
class ImportRef:
    """An import statement: its text, the module it names when known, and its line."""

    text: str
    module: str
    line: int


@dataclass
class ParsedFile:
    """Everything parsing learns about one file."""

    path: str  # relative, '/'-separated
    language: str
    source: bytes
    definitions: list[ParsedDefinition] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    imports: list[ImportRef] = field(default_factory=list)
    docstring: str = ""  # module docstring or the file's opening comment
    chunk_ids: dict[int, str] = field(default_factory=dict)  # definition index -> its chunk (set by chunking)
    has_errors: bool = False
    parsed_with_grammar: bool = True
    top_level_boundaries: tuple[tuple[int, int], ...] = ()  # (line, 1) where top-level statements begin
    # seams(i) -> ((line, depth), ...): where statements of definition i's body begin, depth 1
    # directly in the body, deeper inside nested blocks. Computed only for the few definitions
    # too large for one chunk, since it walks the syntax tree from Python.
    seam_finder: Callable[[int], tuple[tuple[int, int], ...]] | None = field(default=None, repr=False)

    def seams(self, index: int) -> tuple[tuple[int, int], ...]:
        return self.seam_finder(index) if self.seam_finder else ()

    def release_tree(self) -> None:
        """Drop the syntax tree and the source (memory) once chunked; also makes the record
        picklable, and cheap to send back from a worker process."""
        self.seam_finder = None
        self.source = b""

    @property
    def lines(self) -> list[str]:
        return source_lines(self.source.decode("utf-8", errors="replace"))


@dataclass(slots=True)  # slots: a search builds hundreds of these, and a big index millions
class Chunk:
    """One retrievable unit: a file, a class, a function/method, a section or a block of lines."""

    id: str
    parent_id: str | None
    path: str
    language: str
    kind: str
    name: str
    qualified_name: str
    signature: str
    docstring: str
    start_line: int
    end_line: int
    content_hash: str
    header: str
    text: str
    part: int = 1  # 2..n for the pieces of a definition too large for one chunk
    name_line: int = 0  # a definition's name: line and column (1-based, characters); 0: unknown
    name_column: int = 0

    def to_json(self, with_text: bool = False) -> dict:
        data = asdict(self)
        if not with_text:
            data.pop("text")
        return data

    @property
    def size(self) -> int:
        """Size in the budget unit: non-whitespace characters."""
        return non_whitespace_size(self.text)


def source_lines(text: str) -> list[str]:
    """Lines as tree-sitter and editors number them: split at "\n" only (str.splitlines also
    splits at form feeds and other separators, which would shift every line number after one)."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def non_whitespace_size(text: str) -> int:
    """The chunk budget unit (as in cAST): characters that are not whitespace (`str.isspace`).
    Measured as the length of the text without its whitespace: str.split runs in C."""
    return len("".join(text.split()))
