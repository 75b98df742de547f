"""The words every layer shares, defined once: kinds of chunks, search modes and the retrievers
each runs, and the filters a search takes. Light: the CLI imports it to parse its arguments."""

from __future__ import annotations

from dataclasses import dataclass

from .wire import Record

# --- chunk kinds ----------------------------------------------------------------------------
# chunks that are not named definitions: a whole file, a window of lines, a Markdown section
NON_DEFINITION_KINDS = frozenset({"file", "block", "section"})
# definitions that hold others (a function inside one of these is a method, for most languages)
CONTAINER_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "module", "namespace",
                             "impl", "object", "protocol", "extension", "record", "union", "instance"})
# definitions that name a type: a bare-name query prefers them over functions of the same name
TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "type", "record", "protocol",
                        "object", "union"})
DEFINITION_KINDS = CONTAINER_KINDS | TYPE_KINDS | {"function", "method", "macro", "test"}
ALL_KINDS = DEFINITION_KINDS | NON_DEFINITION_KINDS

# --- search modes and the retrievers each one runs ------------------------------------------
RETRIEVERS_OF_MODE: dict[str, tuple[str, ...]] = {
    "hybrid": ("vector", "keyword", "graph"), "vector": ("vector",), "keyword": ("keyword",),
    "graph": ("graph",)}
MODES = tuple(RETRIEVERS_OF_MODE)
RETRIEVER_NAMES = RETRIEVERS_OF_MODE["hybrid"]


@dataclass(frozen=True)
class Filters(Record):
    """Which chunks a search may return; the store turns them into SQL and Chroma filters."""

    DOCS = {"language": "A language name as the index spells it: python, go, typescript, rust, ...",
            "kind": "A chunk kind: function, method, class, file, ... (definitions and files).",
            "path_glob": "A glob over the path relative to the root, e.g. src/*.py or */tests/*."}

    language: str | None = None
    kind: str | None = None
    path_glob: str | None = None

    @property
    def active(self) -> bool:
        return bool(self.language or self.kind or self.path_glob)
