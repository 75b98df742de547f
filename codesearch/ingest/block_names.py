"""Functions and classes a block declares (`{ const createStore = () => ... }` in a test's
callback), seen only inside that block, where they hide an import or another block's definition
of the same name. A callback is no definition, so the scopes of ingest/scopes.py, which are
definitions, cannot tell two such blocks apart; their byte ranges can.

A bare call that reaches such a definition gets the hint AT and the definition's name line
(store/call_results.py finds the one definition of the caller's file on that line), where the
caller's other bare calls of that name reach it too.
"""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

import tree_sitter as ts

from ..model import CallSite
from .scopes import Scopes

AT = "at:"  # before the name line of the definition a bare call reaches in its own file
KINDS = frozenset({"function", "class"})  # what a bare name calls (methods are reached through a receiver)


class _Declared(NamedTuple):
    start: int  # the byte range its name is seen in
    end: int
    name_line: int
    in_block: bool  # a block of its own, not its parent definition's body or the file


class BlockNames:
    """Where each function and class of one file is seen (LanguageSpec.lexical_blocks)."""

    def __init__(self, block_types: frozenset[str], containers: frozenset[str], file_end: int):
        """`block_types`: the nodes that open a scope; `containers`: those that hold definitions
        (LanguageSpec.block_types: objects and class bodies too)."""
        self.block_types, self.stops, self.file_end = block_types, block_types | containers, file_end
        self.declared: dict[str, list[_Declared]] = defaultdict(list)
        self.in_blocks: set[str] = set()  # names some block declares
        # (caller, name) -> its bare calls of a name some block declares: (index, hint without blocks)
        self.sites: dict[tuple[int | None, str], list[tuple[int, str | None]]] = defaultdict(list)

    def add(self, node: ts.Node, parent_body: ts.Node | None, name: str, name_line: int) -> None:
        """A definition (`node`), whose parent definition's body is `parent_body` (None: a top-level one)."""
        block = node.parent
        while block is not None and block.type not in self.stops:
            block = block.parent
        if block is not None and block.type not in self.block_types:
            return  # a member of an object or a class, never a bare name
        in_block = block is not None and (parent_body is None or block.byte_range != parent_body.byte_range)
        seen_in = block if in_block else parent_body
        start, end = seen_in.byte_range if seen_in is not None else (0, self.file_end)
        self.declared[name].append(_Declared(start, end, name_line, in_block))
        if in_block:
            self.in_blocks.add(name)

    def site(self, index: int, caller: int | None, name: str, offset: int, hint: str | None,
             scopes: Scopes | None) -> str | None:
        """The hint of the bare call of `name` at byte `offset` in definition `caller` that will
        be the file's call `index` (where not None): AT and the name line of the definition a
        block declares that it reaches (the innermost seen there, unless a value of the name that
        a definition inside that block declares is nearer: a parameter), else `hint` (None: no
        call is recorded)."""
        if name not in self.in_blocks:
            return hint
        seen = [d for d in self.declared[name] if d.start <= offset < d.end]
        inner = max((d.start for d in seen), default=-1)
        chosen = [d for d in seen if d.start == inner][-1:]  # of two in one block, the later replaces
        reached = f"{AT}{chosen[0].name_line}" if chosen and chosen[0].in_block else hint
        if reached != hint and scopes is not None:
            is_value, where = scopes.local_value(caller, name)
            if is_value and where is not None and scopes.definitions[where].start_byte >= inner:
                reached = hint
        if reached is not None:
            self.sites[(caller, name)].append((index, hint))
        return reached

    def settled(self, calls: list[CallSite]) -> list[CallSite]:
        """`calls` where a caller's bare calls of one name reach one definition; where they reach
        several (a test file's callbacks, each with its own `createStore`), the hints they had
        before (an edge is the caller's, not a line's: one would stand for every line)."""
        dropped: set[int] = set()
        for sites in self.sites.values():
            hints = {calls[i].hint for i, _ in sites}
            if len(hints) > 1 and any(h.startswith(AT) for h in hints):
                for i, before in sites:
                    if calls[i].hint.startswith(AT):
                        if before is None:
                            dropped.add(i)
                        else:
                            calls[i] = calls[i]._replace(hint=before)
        return [c for i, c in enumerate(calls) if i not in dropped] if dropped else calls
