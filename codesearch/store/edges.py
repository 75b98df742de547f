"""The call graph resolved into catalog rows (store/call_graph.py reads them back for search).

Call resolution, for a call of NAME from a chunk in file F: definitions named NAME in F first
(those in the caller's own class before others); else in files F imports, or whose import
statements in F mention NAME; else the unique definition of that name in the repository; else
every candidate (at most MAX_CANDIDATES) with a weight shared among them.

Nothing here holds the whole graph in memory. Resolution walks the callers in slices of rows
(on the extraction workers where there are several), and search reads the edges of the few
nodes it needs through the catalog's indexes: a 100,000-file repository costs no load time and
no memory for its graph, and a reindex is visible to the next query without reloading anything.
"""

from __future__ import annotations

import os
import posixpath
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, islice
from typing import Any

from ..ingest.languages import spec_for_path
from ..paths import sqlite_uri
from .call_names import IMPORT_WORD, mentions, scope_of, seen_from
from .call_results import CallResults
from .call_targets import CallTargets, import_layers, names_from_imports, top_level
from .extension_methods import ExtendedTypes, extension_receiver
from .graph_reads import (
    DefinitionRow,
    count_chunks_named,
    count_definitions_named,
    definitions_by_name,
    definitions_in_files,
    kinds_named,
)
from .import_edges import imported_files
from .module_files import ModuleFiles
from .schema import BY_IMPORT, BY_NAME, BY_TYPE, CALLS, DYNAMIC, EXACT
from .sql import select_in
from .sqlite import sqlite3

GUESS = -1.0  # the weight _ByName gives a call it can only guess at
RESOLVE_SLICE = 20_000  # callers whose calls are resolved together (memory is bounded by this)
FANNED_SLICE = 2_000  # the fewest callers a slice sent to another process holds
# a name that more chunks than this carry is read only in the files a slice's calls can reach (their
# own and those they import): reading all of its definitions for every slice made resolution
# quadratic in a tree of many copies of the same code
CROWDED = 32
REEXPORT_DEPTH = 4  # how many imports deep a module's re-exported names are looked for
_INTERFACE_KINDS = frozenset({"interface", "trait", "protocol"})
Edges = list[tuple[int, int, float, int]]  # (caller, definition, weight, how it was resolved)


@dataclass(frozen=True)
class Symbol:
    rid: int
    path: str
    qualified_name: str
    name_line: int

    @staticmethod
    def of(row: DefinitionRow) -> Symbol:
        return Symbol(row.rid, row.path, row.qualified_name, row.name_line)


def _symbols(db: sqlite3.Connection, names: Iterable[str]) -> dict[str, list[Symbol]]:
    """Definitions of these names, each name's in candidate order (graph.definitions_in_order)."""
    return {name: [Symbol.of(row) for row in rows] for name, rows in definitions_by_name(db, names).items()}


class _NameFacts:
    """What a run's slices ask about names again and again, asked of the catalog once a name:
    whether it is crowded (carried by more than CROWDED chunks), and how many definitions it
    has, counted up to two (none, the only one, or several)."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db
        self._crowded: dict[str, bool] = {}
        self._defined: dict[str, int] = {}
        self._modules: ModuleFiles | None = None
        self._imports: dict[str, set[str]] = {}  # a file -> the files it imports
        self.extended = ExtendedTypes()

    def modules(self) -> ModuleFiles:
        """The repository's files as imports name them, read once a run (only where a call goes
        through an import)."""
        if self._modules is None:
            root = self.db.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
            self._modules = ModuleFiles.of_root((r[0] for r in self.db.execute("SELECT path FROM files")),
                                                root[0] if root else "")
        return self._modules

    def imports_of(self, paths: Iterable[str]) -> dict[str, set[str]]:
        """Each of these files -> the files it imports, asked of the catalog once a file."""
        missing = sorted({p for p in paths if p not in self._imports})
        if missing:
            found = imported_files(self.db, missing)
            self._imports.update((p, found.get(p, set())) for p in missing)
        return {p: self._imports[p] for p in paths}

    def imported_by(self, paths: set[str]) -> set[str]:
        """The files these files import."""
        return set().union(*self.imports_of(paths).values())

    def crowded(self, name: str) -> bool:
        found = self._crowded.get(name)
        if found is None:
            found = self._crowded[name] = count_chunks_named(self.db, name, CROWDED + 1) > CROWDED
        return found

    def defined(self, name: str) -> int:
        found = self._defined.get(name)
        if found is None:
            found = self._defined[name] = count_definitions_named(self.db, name, 2)
        return found


class _Definitions:
    """A name's definitions in candidate order, indexed by file: a call's choice looks up its own
    file and the files it imports rather than scanning every definition of the name. A crowded
    name's holds only those in the files its slice's calls can reach (`reached`); what needs the
    rest (is it the only one, which files do the import statements name) asks for it."""

    def __init__(self, facts: _NameFacts, name: str, symbols: list[Symbol], reached: set[str] | None = None):
        self.facts, self.name, self.complete, self.reached = facts, name, reached is None, reached or set()
        self._index(symbols)

    def _index(self, symbols: list[Symbol]) -> None:
        self._stems: dict[str, list[int]] | None = None  # file name without extension -> positions
        self.symbols = symbols = _replaced_dropped(symbols)
        self.by_path: dict[str, list[int]] = defaultdict(list)  # path -> positions in `symbols`
        for position, symbol in enumerate(symbols):
            self.by_path[symbol.path].append(position)

    def _complete(self) -> None:
        if not self.complete:
            self._index(_symbols(self.facts.db, [self.name]).get(self.name, []))
            self.complete = True

    def _at(self, positions: Iterable[int]) -> list[Symbol]:
        return [self.symbols[i] for i in sorted(positions)]

    def in_files(self, paths: set[str]) -> list[Symbol]:
        """The definitions in these files (files the slice's calls reach), in candidate order."""
        smaller, larger = (paths, self.by_path) if len(paths) < len(self.by_path) else (self.by_path, paths)
        return self._at(i for path in smaller if path in larger for i in self.by_path[path])

    def anywhere_in(self, paths: set[str]) -> list[Symbol]:
        """The definitions in these files, also where they are files the slice's calls do not reach."""
        if self.complete or paths <= self.reached:
            return self.in_files(paths)
        return _replaced_dropped([Symbol.of(r) for r in definitions_in_files(self.facts.db, {self.name}, paths)])

    def in_files_named_in(self, texts: list[str]) -> list[Symbol]:
        """The definitions in files whose name (without extension) one of these texts holds."""
        self._complete()
        if self._stems is None:
            self._stems = defaultdict(list)
            for path, positions in self.by_path.items():
                self._stems[posixpath.splitext(posixpath.basename(path))[0]].extend(positions)
        return self._at(i for stem, positions in self._stems.items() if any(stem in t for t in texts)
                        for i in positions)

    def nested_in(self, path: str, qualified_name: str) -> list[Symbol]:
        """The definitions in file `path` with this qualified name."""
        return [self.symbols[i] for i in self.by_path.get(path, ()) if self.symbols[i].qualified_name == qualified_name]

    def of_type(self, owner: str) -> list[Symbol]:
        """The definitions that belong to type `owner` (`owner.name`, at any depth)."""
        self._complete()
        suffix = f"{owner}.{self.name}"
        return [s for s in self.symbols if s.qualified_name == suffix or s.qualified_name.endswith("." + suffix)]

    def exist(self) -> bool:
        if self.symbols or self.complete:
            return bool(self.symbols)
        return self.facts.defined(self.name) > 0

    def every(self) -> list[Symbol]:
        """Every definition of the name (all read, where only the near ones were)."""
        self._complete()
        return self.symbols

    def the_only_one(self) -> list[Symbol]:
        """[the definition] where the name has exactly one, else []."""
        if not self.complete and self.facts.defined(self.name) != 1:
            return []
        self._complete()
        return self.symbols if len(self.symbols) == 1 else []


FanOut = Callable[[Callable[[Any], Any], Iterator[Any]], Iterator[Any]]  # an ordered map on other processes


def resolve_call_edges(db: sqlite3.Connection, changed_paths: set[str], dirty_names: set[str],
                       everything: bool = False, fan_out: FanOut | None = None) -> list[int] | None:
    """Re-resolve every call site of the affected callers, returned: those in changed files and
    those that call a name the changed files define or defined; or all of them (None), in slices
    of callers. With `fan_out`, the slices of a full resolution are worked out on other
    processes, each reading the catalog as last committed (so everything but the call edges
    must be), and written here."""
    if everything:
        db.execute(f"DELETE FROM edges WHERE kind = {CALLS}")
        db.execute("UPDATE calls SET guess = 0 WHERE guess = 1")  # once, not a slice at a time
        slices = _caller_slices(db, _fanned_slice(db) if fan_out else RESOLVE_SLICE)
        first = list(islice(slices, 2))
        slices = chain(first, slices)
        if fan_out is None or len(first) < 2:  # one slice is not worth another process
            facts = _NameFacts(db)
            for callers in slices:
                _write_resolution(db, *_resolution(db, callers, facts))
            return None
        run = (db.execute("PRAGMA database_list").fetchone()[2], uuid.uuid4().hex)
        try:
            for edges, guesses in fan_out(resolve_slice, ((run, c) for c in slices)):
                _write_resolution(db, edges, guesses)
        finally:
            _forget_run(run)  # slices done in this process (the workers broke) left what they learned
        return None
    facts = _NameFacts(db)
    affected = {r[0] for r in select_in(db, "SELECT k.caller FROM calls k JOIN chunks c ON c.rid = k.caller "
                                            "JOIN files f ON f.fid = c.fid WHERE f.path IN ({})",
                                        sorted(changed_paths))}
    affected |= {r[0] for r in select_in(db, "SELECT k.caller FROM calls k JOIN names n ON n.nid = k.nid "
                                             "WHERE n.name IN ({})", sorted(dirty_names))}
    ordered = sorted(affected)
    for start in range(0, len(ordered), RESOLVE_SLICE):
        callers = ordered[start:start + RESOLVE_SLICE]
        select_in(db, f"DELETE FROM edges WHERE kind = {CALLS} AND src IN ({{}})", callers)
        select_in(db, "UPDATE calls SET guess = 0 WHERE caller IN ({}) AND guess = 1", callers)
        _write_resolution(db, *_resolution(db, callers, facts))
    return ordered


# in a process that resolves slices for another: what it learned about names in one run (catalog
# path, run id). Its connection is a slice's only: one left open would keep the catalog's WAL
# file from being checkpointed and removed when the indexer closes it (a read-only connection
# cannot, and it would be the last one open).
_resolver: tuple[tuple[str, str], _NameFacts] | None = None


def resolve_slice(job: tuple[tuple[str, str], list[int]]) -> tuple[Edges, list[tuple[int, int]]]:
    """One slice of a full resolution, worked out in another process (`fan_out`): the callers'
    edges and guessed calls, as _resolution gives them."""
    global _resolver
    run, callers = job
    db = sqlite3.connect(sqlite_uri(run[0], readonly=True), uri=True, timeout=30)
    try:
        if _resolver is None or _resolver[0] != run:
            _resolver = run, _NameFacts(db)
        facts = _resolver[1]
        facts.db = db
        return _resolution(db, callers, facts)
    finally:
        db.close()


def _forget_run(run: tuple[str, str]) -> None:
    global _resolver
    if _resolver is not None and _resolver[0] == run:
        _resolver = None


def _fanned_slice(db: sqlite3.Connection) -> int:
    """Callers per slice where slices go to other processes: a slice for every core (one slice
    of 20,000 callers left a repository of 12,000 chunks on one core), none below FANNED_SLICE."""
    cores = os.cpu_count() or 1
    callers = db.execute("SELECT COUNT(*) FROM (SELECT DISTINCT caller FROM calls LIMIT ?)",
                         (RESOLVE_SLICE * cores,)).fetchone()[0]
    return min(RESOLVE_SLICE, max(FANNED_SLICE, -(-callers // cores)))


def _caller_slices(db: sqlite3.Connection, size: int) -> Iterator[list[int]]:
    """Every chunk that calls something, `size` at a time, in rid order."""
    after = 0
    while True:
        rows = db.execute("SELECT DISTINCT caller FROM calls WHERE caller > ? "
                          "ORDER BY caller LIMIT ?", (after, size)).fetchall()
        if not rows:
            return
        yield [r[0] for r in rows]
        after = rows[-1][0]


def _resolution(db: sqlite3.Connection, callers: list[int], facts: _NameFacts) -> tuple[Edges, list[tuple[int, int]]]:
    """The call edges (caller, definition, weight, how) of these callers, and their calls that
    could only be guessed at (caller, name id), in the tables' orders. `facts`: what the run's
    earlier slices learned about names. Reads only."""
    call_rows = select_in(db, "SELECT k.caller, f.path, n.name, k.nid, COALESCE(c.qualified_name, c.name), "
                              "k.hint, k.ref FROM calls k JOIN names n ON n.nid = k.nid "
                              "JOIN chunks c ON c.rid = k.caller JOIN files f ON f.fid = c.fid "
                              "WHERE k.caller IN ({})", callers)
    if not call_rows:
        return [], []
    names = {r[2] for r in call_rows}
    paths = sorted({r[1] for r in call_rows})
    import_texts: dict[str, list[str]] = defaultdict(list)
    for path, text in select_in(db, "SELECT f.path, i.text FROM imports i JOIN files f ON f.fid = i.fid "
                                    "WHERE f.path IN ({})", paths):
        import_texts[path].append(text)
    imports_of = facts.imports_of(paths)
    many = {n for n in names if facts.crowded(n)}
    definitions = {name: _Definitions(facts, name, found) for name, found in _symbols(db, names - many).items()}
    if many:
        reachable = set(paths).union(*imports_of.values())
        near: dict[str, list[Symbol]] = defaultdict(list)
        for row in definitions_in_files(db, many, reachable):
            near[row.name].append(Symbol.of(row))
        definitions.update((name, _Definitions(facts, name, near.get(name, []), reachable)) for name in many)
    types = {hint.partition("@")[0] for *_, hint, _ in call_rows if hint and "@" in hint} - {""}
    targets = CallTargets(db)
    hinted = _Hinted(facts, kinds_named(db, types) if types else {}, targets)
    choices: dict[tuple[str, str, str, str | None, int], _Choice] = {}  # by (path, scope, name, hint, ref)
    import_words: dict[str, frozenset[str]] = {}
    edges: dict[tuple[int, int], tuple[float, int]] = {}
    guesses: set[tuple[int, int]] = set()  # (caller, nid)
    for caller, path, name, nid, caller_qualified, hint, ref in call_rows:
        candidates = definitions.get(name)
        if candidates is None or hint == "ext" or not candidates.exist():
            continue
        scope = scope_of(caller_qualified)
        key = (path, scope, name, hint, ref)
        choice = choices.get(key)
        if choice is None:
            if path not in import_words:
                import_words[path] = frozenset(IMPORT_WORD.findall("\n".join(import_texts.get(path, ()))))
            by_name = _ByName(candidates, scope, path, imports_of.get(path, set()),
                              import_texts.get(path, []), import_words[path], name, bool(ref))
            choice = hinted.choose(by_name, hint) if hint else by_name.choose()
            made = targets.settle(choice[0], name, path, choice[2] == EXACT, not ref, Symbol.of)
            choices[key] = choice = (made, 1.0 / len(made) if made else 0.0, choice[2]) if choice[0] else choice
        chosen, weight, how = choice
        if not hint and caller_qualified:  # a function defined inside the caller: it shadows the others
            inner = candidates.nested_in(path, f"{caller_qualified}.{name}")
            if inner:
                chosen, weight, how = inner, 1.0 / len(inner), EXACT
        if weight == GUESS:
            guesses.add((caller, nid))
        for symbol in chosen:
            if (caller, symbol.rid) not in edges:
                edges[(caller, symbol.rid)] = (weight, how)
    # in the tables' orders (both clustered by caller): neighbouring rows share their pages
    return [(s, d, w, h) for (s, d), (w, h) in sorted(edges.items())], sorted(guesses)


def _write_resolution(db: sqlite3.Connection, edges: Edges, guesses: list[tuple[int, int]]) -> None:
    """A slice's resolution into the catalog (its callers' old call edges and guess marks are gone)."""
    db.executemany(f"INSERT OR IGNORE INTO edges(src, kind, dst, weight, how) VALUES (?, {CALLS}, ?, ?, ?)", edges)
    db.executemany("UPDATE calls SET guess = 1 WHERE caller = ? AND nid = ?", guesses)


_Choice = tuple[list[Symbol], float, int]  # definitions, each one's weight, how they were found


def _replaced_dropped(symbols: list[Symbol]) -> list[Symbol]:
    """Without the definitions a later one of the same scope replaces, in the languages where
    that is so (LanguageSpec.redefinition_replaces; rids follow the file's order)."""
    last: dict[tuple[str, str], int] = {}
    for symbol in symbols:
        spec = spec_for_path(symbol.path)
        if spec is not None and spec.redefinition_replaces:
            key = (symbol.path, symbol.qualified_name)
            last[key] = max(last.get(key, symbol.rid), symbol.rid)
    if not last:
        return symbols
    return [s for s in symbols if last.get((s.path, s.qualified_name), s.rid) == s.rid]


@dataclass
class _ByName:
    """A call resolved by its name alone: in its own file (its own class first), the files it
    imports, the one definition of the name; else a guess (a reference is never guessed at)."""

    candidates: _Definitions
    scope: str
    path: str
    imported: set[str]
    import_texts: list[str]
    import_words: frozenset[str]
    name: str
    ref: bool

    def choose(self, leave_out: str = "") -> _Choice:
        """`leave_out`: a scope whose definitions are not candidates (a `super()` call's own class).
        A name neither the file nor its imports define may be one defined elsewhere, except
        where the language's names all come from imports (ES modules)."""
        candidates = self.candidates
        same_file = [s for s in candidates.in_files({self.path})
                     if not leave_out or not s.qualified_name.startswith(leave_out + ".")]
        if same_file:
            # a function defined inside another is seen only there (`fn test` nested in one test)
            visible = [s for s in same_file if seen_from(s.qualified_name, self.scope)] or same_file
            same_scope = [s for s in visible if self.scope and s.qualified_name.startswith(self.scope + ".")]
            pick = same_scope or visible
            return pick, 1.0 / len(pick), EXACT
        from_imports = candidates.in_files(self.imported)
        if not from_imports and mentions(self.name, self.import_texts, self.import_words):
            from_imports = candidates.in_files_named_in(self.import_texts)
        if from_imports:
            return from_imports, 1.0 / len(from_imports), BY_IMPORT
        if self.ref or names_from_imports(self.path):
            return [], 0.0, BY_NAME
        only = candidates.the_only_one()
        if only:
            return only, 1.0, BY_NAME
        return [], GUESS, BY_NAME  # every definition of the name: a guess, answered by name when asked


class _Hinted:
    """A call resolved by what its receiver is (ingest/scopes.py): the caller's own class, a
    type, a module; by name where the hint leads nowhere, and never where it leads outside."""

    def __init__(self, facts: _NameFacts, kinds: dict[str, set[str]], targets: CallTargets):
        self.facts, self.kinds, self.results = facts, kinds, CallResults(facts.db, facts.modules, kinds)
        self.targets = targets

    def choose(self, by_name: _ByName, hint: str) -> _Choice:
        if hint == "self":
            own = by_name.candidates.of_type(by_name.scope.rsplit(".", 1)[-1]) if by_name.scope else []
            mine = [s for s in own if s.path == by_name.path] or own
            if mine:
                return mine, 1.0 / len(mine), EXACT
            return by_name.choose()  # a base's, through an import
        if hint == "super":
            return by_name.choose(leave_out=by_name.scope)
        hint, chosen = self.results.plain(hint, by_name.candidates, by_name.path)  # (call_results.py)
        if chosen is not None:
            return chosen
        if hint == "method":
            return self._method(by_name)
        owner, _, module = hint.partition("@")
        files = self.facts.modules().files(module, by_name.path) if module else []
        if files is None:
            return [], 0.0, BY_IMPORT  # a module from elsewhere: never a definition here
        if owner:
            return self._of_type(by_name, owner, module, set(files))
        found = top_level(by_name.candidates.in_files(set(files))) if files else []
        if not found and files:
            found = self._exported_from(by_name.candidates, set(files))
        if found:
            return found, 1.0 / len(found), BY_IMPORT
        # a module of the repository without the name (`export { mapType as map }`): nothing elsewhere
        return by_name.choose()

    def _method(self, by_name: _ByName) -> _Choice:
        """A call on a receiver nothing is known of: the methods of its name (definitions inside a
        class) in the caller's file, else in the nearest files its imports reach, where a value's
        type comes from; a guess among them where they are a few, none where none is near or
        where they are many (call_targets)."""
        found, depth = self.targets.methods_near(by_name.candidates, by_name.path, self.facts.imported_by)
        how = BY_NAME if len(found) > 1 else EXACT if depth == 0 else BY_IMPORT
        return found, (1.0 / len(found) if found else 0.0), how

    def _exported_from(self, candidates: _Definitions, files: set[str]) -> list[Symbol]:
        """A module's name that a file it imports defines (an `index.ts` or `__init__.py` that
        re-exports its package's parts), the nearest such files first; a module's name is one of
        its top-level definitions, not a method of one of its classes."""
        for layer in islice(import_layers(files, self.facts.imported_by, REEXPORT_DEPTH + 1), 1, None):
            found = top_level(candidates.anywhere_in(layer))
            if found:
                return found
        return []

    def _extensions(self, by_name: _ByName, owner: str, pattern: str) -> list[Symbol]:
        return self.facts.extended.methods(self.facts.db, by_name.name, by_name.candidates.every, owner, pattern)

    def _of_type(self, by_name: _ByName, owner: str, module: str, files: set[str]) -> _Choice:
        kinds = self.kinds.get(owner)
        extends = extension_receiver(by_name.path)
        if not kinds and not files:  # a type this repository does not define: only its extensions
            found = self._extensions(by_name, owner, extends)
            return found, (1.0 / len(found) if found else 0.0), BY_TYPE
        members = self.targets.members(by_name.candidates.of_type(owner))
        if files:
            members = [s for s in members if s.path in files] or members
        else:  # a type named without an import: this file's own, where it has one
            members = [s for s in members if s.path == by_name.path] or members
        if not members and kinds == {"impl"}:  # Rust: impls of this repository's traits for a type from elsewhere
            return [], 0.0, BY_TYPE
        dynamic = bool(kinds and kinds & _INTERFACE_KINDS) and owner != by_name.name  # not a constructor
        if members:
            how = DYNAMIC if dynamic else EXACT if owner == by_name.scope.rsplit(".", 1)[-1] else BY_TYPE
            return members, 1.0 / len(members), how
        found = self._extensions(by_name, owner, extends)
        if found:
            return found, 1.0 / len(found), BY_TYPE
        if dynamic or owner == by_name.name:
            # an interface's method that is no definition of its own, or a constructor the type
            # does not declare (`new Foo()`): the type's declaration
            declared = _symbols(self.facts.db, [owner]).get(owner, [])
            found = [s for s in declared if not files or s.path in files]
            return (found, 1.0 / len(found), DYNAMIC if dynamic else BY_TYPE) if found else by_name.choose()
        if files and not kinds:  # a module inside a module of this repository (`from pkg import sub`)
            inner = module + owner if module.endswith(".") else f"{module}.{owner}"
            found = by_name.candidates.in_files(set(self.facts.modules().files(inner, by_name.path) or ()))
            if found:
                return found, 1.0 / len(found), BY_IMPORT
        chosen = by_name.choose()  # inherited, or from a base this file cannot see
        if kinds and any("." not in s.qualified_name for s in chosen[0]):
            # a member of a type of the repository is a method, of it or a base, never a free
            # function of the name (`match.Vars` reads a field of a RouteMatch)
            members = [s for s in chosen[0] if "." in s.qualified_name]
            chosen = members, (1.0 / len(members) if members else 0.0), chosen[2]
        if not chosen[0] and files and not kinds:
            # a value the module exports, no type (`import { z }` of `export * as z`): the name
            # is what the module or the files it re-exports define, not a guess
            found = by_name.candidates.in_files(files) or self._exported_from(by_name.candidates, files)
            if found:
                return found, 1.0 / len(found), BY_IMPORT
        return chosen
