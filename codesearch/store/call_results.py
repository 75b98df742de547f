"""What calls made on the way to a receiver return (`NewRouter().Path("/")`: a Router's Path, since
NewRouter returns a *Router), read off the signatures of the repository's definitions, which are
often in another file than the call; and bare calls that reach only the caller's own package
(Go): the chain and package hints of ingest/scopes.py made plain for call resolution."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import NamedTuple, TypeVar

from ..ingest.block_names import at_lines
from ..ingest.call_chains import ONE_OF, RESULT, STEP, is_chain, positioned
from ..ingest.languages import spec_for_path
from ..ingest.scopes import EXTERNAL, LOCAL, METHOD, PACKAGE, type_name
from .call_targets import Candidates, Definition
from .graph_reads import kinds_named
from .module_files import ModuleFiles
from .schema import BY_NAME, EXACT, NOT_DEFINITIONS
from .sql import select_in
from .sqlite import sqlite3

S = TypeVar("S", bound=Definition)

_RESULTS = re.compile(r"\)\s*\(([^()]*)\)\s*$")  # a signature's results where it returns several
_TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "type", "enum"})


class _Declared(NamedTuple):
    qualified_name: str
    kind: str
    signature: str
    path: str


class CallResults:
    """Chain hints (`NewRouter()@>Path`) made plain (`Route@`, "ext", or "" where the signatures
    do not say), read once a run for each name and file asked about; `kinds` (a type's name ->
    the kinds of its definitions) gains the types they name."""

    def __init__(self, db: sqlite3.Connection, modules: Callable[[], ModuleFiles], kinds: dict[str, set[str]]):
        self.db, self.modules, self.kinds = db, modules, kinds
        self._declared: dict[str, list[_Declared]] = {}
        self._aliases: dict[str, dict[str, str]] = {}  # a file -> the packages its imports name
        self._plain: dict[tuple[str, str], str] = {}

    def plain(self, hint: str, candidates: Candidates[S], path: str) -> tuple[str, tuple[list[S], float, int] | None]:
        """A call's hint made plain, and where the language's packages decide it (`in_package`),
        the definitions it reaches, each one's weight and how (None for any other call)."""
        plain = self.type_of(hint, path)
        if (plain == METHOD or not plain) and _in_packages(path):  # a chain that the signatures leave open too
            found = self._near_methods(candidates, path)
            return plain, (found, 1.0 if found else 0.0, BY_NAME)
        reached = self.in_package(candidates, plain, path)
        return plain, None if reached is None else (reached, 1.0 / len(reached) if reached else 0.0, EXACT)

    def _near_methods(self, candidates: Candidates[S], path: str) -> list[S]:
        """The method of a name in the caller's package and the repository's packages it imports,
        where it is the only one: a guess among several is mostly wrong."""
        files = self.modules().package_files(path).union(
            *(self._package_of(module, path) or () for module in set(self._imports_of(path).values())))
        found = [s for s in candidates.anywhere_in(files) if "." in s.qualified_name]
        return found if len(found) == 1 else []

    def type_of(self, hint: str, path: str) -> str:
        """The type hint of a chain hint's value, for a call in file `path` (any other hint as it is)."""
        if not is_chain(hint):
            return hint
        key = (hint, posixpath.dirname(path))
        found = self._plain.get(key)
        if found is None and ONE_OF in hint:  # a name bound again and again: where its values agree
            agreed = {self.type_of(one, path) for one in hint.split(ONE_OF)}
            found = self._plain[key] = agreed.pop() if len(agreed) == 1 else ""
        if found is None:
            body, last = positioned(hint)  # the result meant of the chain's last call
            base, *steps = body.split(STEP)
            owner, _, module = base.partition("@")
            found = (self._function_result(owner[:-len(RESULT)], module, path, 0 if steps else last)
                     if owner.endswith(RESULT) else base)
            for i, step in enumerate(steps, 1):
                if not found or found == EXTERNAL:
                    break
                found = self._method_result(found, step, path, last if i == len(steps) else 0)
            self._plain[key] = found
            owner = found.partition("@")[0]
            if owner and owner not in self.kinds:
                self.kinds.update(kinds_named(self.db, [owner]))
        return found

    def in_package(self, candidates: Candidates[S], hint: str, path: str) -> list[S] | None:
        """The definitions a bare call with an AT, LOCAL or PACKAGE hint reaches: the function a
        block around it declares, the function literal its caller's body declares, or a
        top-level definition of its package (never a method); none for EXTERNAL; None for any
        other hint."""
        lines = at_lines(hint)
        if lines is not None:  # the function a block around the call declares, by its name lines
            return [s for s in candidates.anywhere_in({path}) if s.name_line in lines]
        if hint.startswith(LOCAL):
            own = f"{hint[len(LOCAL):]}.{candidates.name}"
            return [s for s in candidates.anywhere_in({path}) if s.qualified_name == own]
        if hint == PACKAGE:
            files = self.modules().package_files(path)
            return [s for s in candidates.anywhere_in(files) if "." not in s.qualified_name]
        if hint.startswith("@") and _in_packages(path):  # `pkg.F()`: a function of that package
            module = self._package_of(hint[1:], path)
            if module is None or module:
                return [s for s in candidates.anywhere_in(module or set()) if "." not in s.qualified_name]
        return [] if hint == EXTERNAL else None

    def _package_of(self, module: str, path: str) -> set[str] | None:
        """The files of an imported package (None: not the repository's; empty: not known), the
        indexed folder's own where the module's path ends with its name."""
        files = self.modules().files(module, path)
        if files is None or files:
            return None if files is None else set(files)
        parts = module.split("/")
        last = parts[-2] if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]) else parts[-1]
        top = posixpath.basename(path)  # a file of the caller's name in the top folder: its package
        return self.modules().package_files(top) if last == self.modules().root_name else set()

    def _named(self, name: str) -> list[_Declared]:
        found = self._declared.get(name)
        if found is None:
            # the name index is NOCASE: an exact name is looked up through it, not by reading every chunk
            rows = self.db.execute("SELECT COALESCE(c.qualified_name, c.name), c.kind, COALESCE(c.signature, ''), "
                                   "f.path FROM chunks c JOIN files f ON f.fid = c.fid WHERE c.part = 1 AND "
                                   f"c.kind NOT IN ({NOT_DEFINITIONS}) AND c.name COLLATE NOCASE = ?1 "
                                   "AND c.name = ?1", (name,)).fetchall()
            found = self._declared[name] = sorted(_Declared(*row) for row in rows)
        return found

    def _files(self, module: str, path: str) -> set[str] | None:
        """The files of an import's module (None: not the repository's), or of the caller's package."""
        if module:
            files = self.modules().files(module, path)
            return None if files is None else set(files)
        return self.modules().package_files(path)

    def _function_result(self, name: str, module: str, path: str, position: int) -> str:
        files = self._files(module, path)
        if files is None:
            return EXTERNAL
        found = [d for d in self._named(name.rsplit(".", 1)[-1])  # `F.literal`: a function literal of F
                 if d.qualified_name == name and (not files or d.path in files)]
        return self._result(found[0], module, position) if found else ""

    def _method_result(self, value: str, method: str, path: str, position: int) -> str:
        owner, _, module = value.partition("@")
        files = self._files(module, path) if module else set()
        if files is None or not self._named(owner):
            return EXTERNAL  # a type from elsewhere: its methods and fields hold nothing of the repository's
        if method.startswith("."):
            return ""  # a field of a type of the repository's: its type is not known here
        suffix = f"{owner}.{method}"
        found = [d for d in self._named(method) if d.qualified_name == suffix
                 or d.qualified_name.endswith("." + suffix)]
        found = [d for d in found if d.path in files] or found if files else found
        return self._result(found[0], module, position) if found else ""

    def _result(self, declared: _Declared, module: str, position: int) -> str:
        """The type hint of what a definition returns, its result `position` where it returns
        several (a type made by a conversion: itself)."""
        if declared.kind in _TYPE_KINDS:
            return f"{declared.qualified_name}@{module}" if not position else ""
        spec = spec_for_path(declared.path)
        said = re.search(spec.result_type, declared.signature) if spec is not None and spec.result_type else None
        if spec is None or said is None:
            return ""
        type_text = said.group(1)
        if position:  # `(a T, b U)` or `(T, U)`: the type of the one meant
            several = _RESULTS.search(declared.signature)
            results = several.group(1).split(",") if several else []
            if position >= len(results) or not results[position].split():
                return ""
            type_text = results[position].split()[-1]
        name = type_name(type_text)
        if not name or name in spec.builtin_types:
            return EXTERNAL
        qualifier, _, last = name.rpartition(".")
        if not qualifier:
            return f"{name}@{module}"
        imported = self._imports_of(declared.path).get(qualifier)
        return f"{last}@{imported}" if imported else ""

    def _imports_of(self, path: str) -> dict[str, str]:
        found = self._aliases.get(path)
        if found is None:
            spec = spec_for_path(path)
            found = self._aliases[path] = {}
            if spec is not None and spec.import_aliases is not None:
                for module, text in select_in(self.db, "SELECT i.module, i.text FROM imports i JOIN files f "
                                                       "ON f.fid = i.fid WHERE f.path IN ({})", [path]):
                    found.update((alias, imported) for alias, imported, _ in spec.import_aliases(text, module or ""))
        return found


def may_reach(hint: str, caller_path: str, target_path: str, target_name_line: int) -> bool:
    """Whether a call site with this hint (ingest/scopes.py) in file `caller_path` may call the
    definition at `target_path` (its name on `target_name_line`): not one that reaches outside
    the repository, nor one that a block's own function of the name takes (ingest/block_names.py)
    where the target is not that function, nor one through an import where the target is in the
    caller's own file. An edge is a caller's, so a call site's line is shown under a target only
    where it may be one of its calls."""
    if hint == EXTERNAL:
        return False
    lines = at_lines(hint)
    if lines is not None:
        return target_path == caller_path and target_name_line in lines
    through_import = not is_chain(hint) and bool(hint.partition("@")[2])
    return not (through_import and target_path == caller_path)


def _in_packages(path: str) -> bool:
    spec = spec_for_path(path)
    return spec is not None and spec.bare_calls_in_package
