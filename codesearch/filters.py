"""The filters a search takes: a record of the JSON contract, which the store turns into SQL and
Chroma filters. Imported as `vocabulary.Filters` (see there)."""

from __future__ import annotations

from dataclasses import dataclass

from .wire import Record


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
