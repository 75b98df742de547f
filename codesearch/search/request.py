"""What a search asks for: plain data, importable without the search machinery (the CLI
sends it to the daemon without loading torch, Chroma or NetworkX)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MODES = ("hybrid", "vector", "keyword", "graph")


class SearchError(ValueError):
    """A query that cannot be answered as asked (bad mode, empty query, ...)."""


@dataclass
class Filters:
    """Result filters, pushed into each retriever where it can apply them."""

    language: str | None = None
    kind: str | None = None
    path_glob: str | None = None

    def sql(self, alias: str = "c") -> tuple[str, list]:
        clauses, params = [], []
        if self.language:
            clauses.append(f"{alias}.language = ?")
            params.append(self.language)
        if self.kind:
            clauses.append(f"{alias}.kind = ?")
            params.append(self.kind)
        if self.path_glob:
            clauses.append(f"{alias}.path GLOB ?")
            params.append(self.path_glob)
        return (" AND " + " AND ".join(clauses)) if clauses else "", params

    def chroma_where(self) -> dict | None:
        parts = []
        if self.language:
            parts.append({"language": self.language})
        if self.kind:
            parts.append({"kind": self.kind})
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else {"$and": parts}

    @property
    def active(self) -> bool:
        return bool(self.language or self.kind or self.path_glob)


@dataclass
class SearchRequest:
    query: str
    mode: str = "hybrid"
    limit: int = 10
    filters: Filters = field(default_factory=Filters)
    files: bool = False
    explain: bool = False
    retrievers: tuple[str, ...] | None = None  # override the mode's set (ablations)
    ranking: Any = None  # a ranking.RankingOptions; None: the settings decide
    context: int = 0  # extra lines around the snippet


