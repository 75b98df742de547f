"""Calls whose target the caller's chunk alone does not tell: a receiver whose type one file
cannot tell (TypeScript's `schema.parse()` on an untyped parameter), answered by the methods of
the called name near the caller, where a value's type comes from
(LanguageSpec.unknown_receivers_call_methods); a class's construction (`new Foo()`), which calls
the constructor the class declares (LanguageSpec.constructor_name); and a name that several
anonymous functions of the caller's file each define (`const f` in each test's callback)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from ..ingest.languages import spec_for_path
from .graph_reads import DefinitionRow, definitions_in_files
from .sql import select_in
from .sqlite import sqlite3

# a guess among at most this many methods of the name near the caller; among more (each
# subclass's override in one file), a guess is mostly wrong: no link
METHOD_GUESSES = 3
NEAR_DEPTH = 6  # how many imports deep the methods are looked for


class _Symbol(Protocol):
    @property
    def rid(self) -> int: ...

    @property
    def path(self) -> str: ...

    @property
    def qualified_name(self) -> str: ...


S = TypeVar("S", bound=_Symbol)


class _Candidates(Protocol[S]):
    def anywhere_in(self, paths: set[str]) -> list[S]: ...


def methods_near(candidates: _Candidates[S], path: str,
                 imported_by: Callable[[set[str]], set[str]]) -> tuple[list[S], int]:
    """The methods among the candidates (definitions inside a class) in file `path`, else in the
    nearest files its imports reach, and how many imports away they are; none where none is near
    or where they are many."""
    layer, seen = {path}, {path}
    for depth in range(NEAR_DEPTH):
        found = [s for s in candidates.anywhere_in(layer) if "." in s.qualified_name]
        if len(found) > METHOD_GUESSES:
            break
        if found:
            return found, depth
        layer = imported_by(layer) - seen
        if not layer:
            break
        seen |= layer
    return [], 0


class Constructors:
    """The constructors that classes declare, read once a file: `new Foo()` calls Foo's, where the
    caller's language names its constructors (`constructor` in TypeScript) and Foo declares one."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db
        self.declared: dict[tuple[str, str], dict[str, DefinitionRow]] = {}  # (file, method) -> class -> it

    def called(self, chosen: list[S], name: str, caller_path: str, symbol: Callable[[DefinitionRow], S]) -> list[S]:
        """`chosen` (the definitions a call of `name` links) with each class of that name replaced
        by the constructor it declares."""
        spec = spec_for_path(caller_path)
        method = spec.constructor_name if spec is not None else ""
        if not method or not chosen:
            return chosen
        out = []
        for found in chosen:
            declared = (self._in(found.path, method)
                        if found.qualified_name.rsplit(".", 1)[-1] == name else {})
            row = declared.get(found.qualified_name)
            out.append(symbol(row) if row is not None else found)
        return out

    def _in(self, path: str, method: str) -> dict[str, DefinitionRow]:
        key = (path, method)
        if key not in self.declared:
            rows = definitions_in_files(self.db, {method}, [path])
            self.declared[key] = {r.qualified_name.rsplit(".", 1)[0]: r for r in rows if "." in r.qualified_name}
        return self.declared[key]


class Twins:
    """Definitions of one qualified name in one file that are not one function's overloads: the
    locals of different anonymous functions (`const f` in each test's callback). A site sees the
    one in its own scope, which its caller's chunk (the file, around them all) does not tell: no
    link rather than all of them. Their lines are read once a set."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db
        self.known: dict[tuple[int, ...], bool] = {}

    def among(self, chosen: list[S]) -> bool:
        """Whether `chosen` are such twins."""
        if len(chosen) < 2 or len({(s.path, s.qualified_name) for s in chosen}) > 1:
            return False
        key = tuple(sorted(s.rid for s in chosen))
        if key not in self.known:
            spans = sorted((r[0], r[1]) for r in select_in(
                self.db, "SELECT start_line, end_line FROM chunks WHERE rid IN ({})", list(key)))
            # one after another: a function's overloads, every one of them its declaration
            self.known[key] = not all(later[0] <= earlier[1] + 1 for earlier, later in zip(spans, spans[1:]))
        return self.known[key]
