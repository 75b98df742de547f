"""Which definitions a call can reach where its name and its caller's chunk do not tell alone:
a receiver whose type one file cannot tell (TypeScript's `schema.parse()` on an untyped
parameter), answered by the methods of the called name near the caller, where a value's type
comes from (LanguageSpec.unknown_receivers_call_methods); a module's name, one of its top-level
definitions; a class's construction (`new Foo()`), which calls the constructor the class declares
(LanguageSpec.constructor_name); declarations that are types alone, never called
(LanguageSpec.uncallable_kinds); and a name that several anonymous functions of the caller's file
each define (`const f` in each test's callback); a bare name of a language whose names come from
imports (LanguageSpec.names_from_imports), never one of another file that the file does not import."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol, TypeVar

from ..ingest.languages import spec_for_path
from ..vocabulary import TYPE_KINDS
from .graph_reads import DefinitionRow, definitions_in_files
from .sql import select_in
from .sqlite import sqlite3

# a guess among at most this many methods of the name near the caller; among more (each
# subclass's override in one file), a guess is mostly wrong: no link
METHOD_GUESSES = 3
NEAR_DEPTH = 6  # how many imports deep the methods are looked for


class Definition(Protocol):
    """A definition as call resolution holds it (edges.Symbol)."""

    @property
    def rid(self) -> int: ...

    @property
    def path(self) -> str: ...

    @property
    def qualified_name(self) -> str: ...

    @property
    def name_line(self) -> int: ...


S = TypeVar("S", bound=Definition)


class Candidates(Protocol[S]):
    """A called name's definitions (edges._Definitions)."""

    name: str

    def anywhere_in(self, paths: set[str]) -> list[S]: ...


def names_from_imports(path: str) -> bool:
    """Whether a bare name of this file's language is the file's own or an import's (ES modules):
    one that only files the file does not import define is a local value or a global, never a
    definition there."""
    spec = spec_for_path(path)
    return spec is not None and spec.names_from_imports


def import_layers(files: set[str], imported_by: Callable[[set[str]], set[str]], depth: int) -> Iterator[set[str]]:
    """`files`, then the files they import, then those these import, and so on, each file in
    the nearest layer only: `depth` layers at most."""
    layer, seen = set(files), set(files)
    for left in range(depth, 0, -1):
        yield layer
        layer = imported_by(layer) - seen if left > 1 else set()
        if not layer:
            return
        seen |= layer


def top_level(symbols: list[S]) -> list[S]:
    """The definitions a module's name can be: its top-level ones (`z.array` is no class's method)."""
    return [s for s in symbols if "." not in s.qualified_name]


class CallTargets:
    """What a run reads about the definitions calls choose among, once each: their kinds, the
    constructors classes declare, the lines of same-named definitions in one file."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db
        self.kinds: dict[int, str] = {}
        self.owners: dict[int, str] = {}  # a definition -> the kind of the definition it is in ("" at the top)
        self.declared: dict[tuple[str, str], dict[str, DefinitionRow]] = {}  # (file, method) -> class -> it
        self.twins: dict[tuple[int, ...], bool] = {}

    def methods_near(self, candidates: Candidates[S], path: str,
                     imported_by: Callable[[set[str]], set[str]]) -> tuple[list[S], int]:
        """The methods among the candidates (definitions of kind method) in file `path`, else in
        the nearest files its imports reach, and how many imports away they are; none where none
        is near or where they are many."""
        for depth, layer in enumerate(import_layers({path}, imported_by, NEAR_DEPTH)):
            found = self._declared_first(self._of_kind(candidates.anywhere_in(layer), {"method"}))
            if len(found) > METHOD_GUESSES:
                break
            if found:
                return found, depth
        return [], 0

    def _declared_first(self, methods: list[S]) -> list[S]:
        """The methods a type declares (a class's, an interface's) where there are such, before
        functions assigned to an object's property (`inst.parse = ...`): a value's type says what
        its method is, whatever object literal or constructor fills it in."""
        missing = [s.rid for s in methods if s.rid not in self.owners]
        if missing:
            self.owners.update(select_in(self.db, "SELECT c.rid, COALESCE(p.kind, '') FROM chunks c LEFT JOIN chunks p "
                                                  "ON p.rid = c.parent WHERE c.rid IN ({})", missing))
        return [s for s in methods if self.owners.get(s.rid) in TYPE_KINDS] or methods

    def members(self, found: list[S]) -> list[S]:
        """The members of a type among definitions named `Type.name`: not a function local to a
        function of the type's name (`function $constructor() { function init() }` beside
        `interface $constructor { init() }`), where a member is there too."""
        known = self._kinds(found)
        return [s for s in found if known.get(s.rid) != "function"] or found

    def settle(self, chosen: list[S], name: str, caller_path: str, exact: bool, called: bool,
               symbol: Callable[[DefinitionRow], S]) -> list[S]:
        """`chosen` (the definitions a call of `name` from `caller_path` links; `exact`: found in
        the caller's own file; `called`: a call, not a reference) without the types its language
        never calls where something callable is there too (the type may be all the repository
        holds of a value: `interface Foo` beside `const Foo = make()`), each class of that name
        called replaced by the constructor it declares, and none where they are twins."""
        spec = spec_for_path(caller_path)
        if spec is None or not chosen:
            return chosen
        if spec.uncallable_kinds:  # a type beside a function of its name (TypeScript's merged declarations)
            kinds = self._kinds(chosen)
            chosen = [s for s in chosen if kinds[s.rid] not in spec.uncallable_kinds] or chosen
        if spec.constructor_name and called:
            chosen = [self._constructor(s, name, spec.constructor_name, symbol) for s in chosen]
        return [] if exact and self._twins(chosen) else chosen

    def _kinds(self, symbols: list[S]) -> dict[int, str]:
        missing = [s.rid for s in symbols if s.rid not in self.kinds]
        if missing:
            self.kinds.update((r[0], r[1]) for r in select_in(self.db, "SELECT rid, kind FROM chunks WHERE rid IN ({})",
                                                               missing))
        return self.kinds

    def _of_kind(self, symbols: list[S], kinds: set[str]) -> list[S]:
        known = self._kinds(symbols)
        return [s for s in symbols if known.get(s.rid) in kinds]

    def _constructor(self, found: S, name: str, method: str, symbol: Callable[[DefinitionRow], S]) -> S:
        """A class's constructor where it declares one (`new Foo()` calls it), else the class."""
        if found.qualified_name.rsplit(".", 1)[-1] != name:
            return found
        key = (found.path, method)
        if key not in self.declared:
            rows = definitions_in_files(self.db, {method}, [found.path])
            self.declared[key] = {r.qualified_name.rsplit(".", 1)[0]: r for r in rows if "." in r.qualified_name}
        row = self.declared[key].get(found.qualified_name)
        return symbol(row) if row is not None else found

    def _twins(self, chosen: list[S]) -> bool:
        """Whether `chosen` are definitions of one qualified name in one file that are not one
        function's overloads: the locals of different anonymous functions (`const f` in each
        test's callback). A site sees the one in its own scope, which its caller's chunk (the
        file, around them all) does not tell: no link rather than all of them."""
        if len(chosen) < 2 or len({(s.path, s.qualified_name) for s in chosen}) > 1:
            return False
        key = tuple(sorted(s.rid for s in chosen))
        if key not in self.twins:
            spans = sorted((r[0], r[1]) for r in select_in(
                self.db, "SELECT start_line, end_line FROM chunks WHERE rid IN ({})", list(key)))
            # one after another: a function's overloads, every one of them its declaration
            self.twins[key] = not all(later[0] <= earlier[1] + 1 for earlier, later in zip(spans, spans[1:]))
        return self.twins[key]
