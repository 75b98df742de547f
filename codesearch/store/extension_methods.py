"""Extension methods: methods declared outside the type they are called on (C#'s `this T x`
parameter, Kotlin's `fun T.name()`), told apart by what their signatures say they extend (the
language spec's `extension_receiver` reads it)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from ..ingest.languages import spec_for_path
from .call_targets import Definition
from .sql import select_in
from .sqlite import sqlite3

D = TypeVar("D", bound=Definition)


def extension_receiver(path: str) -> str:
    """How this file's language says what type a method declared outside it extends ("": the
    language has no extension methods)."""
    spec = spec_for_path(path)
    return spec.extension_receiver if spec is not None else ""


class ExtendedTypes:
    """The type each definition's signature extends, its signature read once a run, and the
    extension methods found for a name and a type, found once a run."""

    def __init__(self) -> None:
        self._signatures: dict[int, str] = {}
        self._found: dict[tuple[str, str, str], list[Any]] = {}  # (name, owner, pattern) -> definitions

    def of(self, db: sqlite3.Connection, rids: list[int], pattern: str) -> dict[int, str]:
        """rid -> the type it extends (group 1 of `pattern` on its signature), for those that do."""
        missing = [r for r in rids if r not in self._signatures]
        if missing:
            self._signatures.update((r, s or "") for r, s in
                                    select_in(db, "SELECT rid, signature FROM chunks WHERE rid IN ({})", missing))
            self._signatures.update((r, "") for r in missing if r not in self._signatures)
        reader = re.compile(pattern)
        return {rid: found.group(1) for rid in rids if (found := reader.search(self._signatures[rid]))}

    def methods(self, db: sqlite3.Connection, name: str, definitions: Callable[[], list[D]], owner: str,
                pattern: str) -> list[D]:
        """The extension methods among the definitions of `name`: those of `owner`, else all of
        them (the value may be of a type that derives from the one an extension names); none
        where the language has no extension methods (`pattern` empty)."""
        if not pattern:
            return []
        key = (name, owner, pattern)
        if key not in self._found:
            every = definitions()
            extended = self.of(db, [d.rid for d in every], pattern)
            found = [d for d in every if d.rid in extended]
            self._found[key] = [d for d in found if extended[d.rid] == owner] or found
        return self._found[key]
