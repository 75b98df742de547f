"""Functions and classes a block declares (`{ const createStore = () => ... }` in a test's
callback, `function helper() {...}` in a function's body), seen only inside that block, where
they hide an import or another block's definition of the same name. A callback is no
definition, so the scopes of ingest/scopes.py, which are definitions, cannot tell two such
blocks apart; their byte ranges can.

A bare call that reaches such a definition gets the hint AT and the definition's name line
(store/call_results.py finds the definitions of the caller's file on those lines), unless a value
of the name is declared nearer (a callback's parameter, a `const` of its own), and where the
caller's other bare uses of the name do not reach other blocks' definitions of it.

The node types are the ECMAScript grammars' (JavaScript, TypeScript, TSX): the languages that
set LanguageSpec.lexical_blocks.
"""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

import tree_sitter as ts

from ..model import CallSite

AT = "at:"  # before the name lines (comma-separated) of the definitions a bare call reaches in its own file
KINDS = frozenset({"function", "class"})  # what a bare name calls (methods are reached through a receiver)
# definitions whose name their enclosing block sees (not `this.f = ...`, nor an object's member)
DECLARATIONS = frozenset({"function_declaration", "generator_function_declaration", "function_signature",
                          "class_declaration", "abstract_class_declaration", "variable_declarator"})
FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration", "function_expression",
                       "arrow_function", "method_definition", "generator_function"})  # a parameter's scope
NAMED_EXPRESSION = "function_expression"  # `map(function f() {...})`: f is seen inside itself alone


def at_lines(hint: str) -> frozenset[int] | None:
    """The name lines an AT hint names (None: another hint): how the hint is written is said
    here only."""
    return frozenset(int(line) for line in hint[len(AT):].split(",")) if hint.startswith(AT) else None


class _Declared(NamedTuple):
    start: int  # the byte range its name is seen in
    end: int
    name_line: int
    in_block: bool  # a block's, not the file's
    value: bool = False  # a parameter or a variable, no definition


class BlockNames:
    """Where each function, class and value of one file is seen (LanguageSpec.lexical_blocks)."""

    def __init__(self, block_types: frozenset[str], containers: frozenset[str], file_end: int):
        """`block_types`: the nodes that open a scope; `containers`: those that hold definitions
        (LanguageSpec.block_types: objects and class bodies too)."""
        self.block_types, self.stops, self.file_end = block_types, block_types | containers, file_end
        self.value_scopes = block_types | FUNCTIONS  # what a parameter or variable is seen in
        self.declared: dict[str, list[_Declared]] = defaultdict(list)
        self.in_blocks: set[str] = set()  # names some block declares
        self.definition_names: set[int] = set()  # where the definitions' names start
        # (caller, name) -> its bare calls of a name some block declares: (index, hint without blocks)
        self.sites: dict[tuple[int | None, str], list[tuple[int, str | None]]] = defaultdict(list)

    def add(self, node: ts.Node, name_node: ts.Node, name: str, name_line: int) -> None:
        """A definition (`node`) whose name is `name_node`: seen in the block that declares it
        (a function's body, a callback's), or in the whole file."""
        self.definition_names.add(name_node.start_byte)
        if node.type == NAMED_EXPRESSION:
            self._declare(name, _Declared(*node.byte_range, name_line, True))
        elif node.type in DECLARATIONS:
            block = _up_to(node.parent, self.stops)
            if block is None:
                self.declared[name].append(_Declared(0, self.file_end, name_line, False))
            elif block.type in self.block_types:  # not a member of an object or a class
                self._declare(name, _Declared(*block.byte_range, name_line, True))

    def add_value(self, name_node: ts.Node, name: str) -> None:
        """A parameter or variable named `name` (`name_node`), of a name some block declares a
        function of: seen in its function (a parameter) or its block."""
        if name not in self.in_blocks or name_node.start_byte in self.definition_names:
            return
        scope = _up_to(name_node.parent, self.value_scopes)
        start, end = scope.byte_range if scope is not None else (0, self.file_end)
        self.declared[name].append(_Declared(start, end, 0, True, value=True))

    def _declare(self, name: str, declared: _Declared) -> None:
        self.declared[name].append(declared)
        if declared.in_block:
            self.in_blocks.add(name)

    def site(self, index: int, caller: int | None, name: str, offset: int, hint: str | None) -> str | None:
        """The hint of the bare call of `name` at byte `offset` in definition `caller` that will
        be the file's call `index` (where not None): AT and the name line of the definition a
        block declares that it reaches (the innermost declaration seen there, where that is no
        value; all of them where the block declares the name more than once), else `hint` (None:
        no call is recorded)."""
        if name not in self.in_blocks:
            return hint
        seen = [d for d in self.declared[name] if d.start <= offset < d.end]
        inner = max((d.start for d in seen), default=-1)
        chosen = [d for d in seen if d.start == inner]  # several: overloads, or a function declared again
        reached = hint
        if chosen and chosen[0].in_block and not any(d.value for d in chosen):
            reached = AT + ",".join(str(d.name_line) for d in chosen)
        if reached is not None:
            self.sites[(caller, name)].append((index, hint))
        return reached

    def settled(self, calls: list[CallSite]) -> list[CallSite]:
        """`calls` where a caller's bare uses of a name reach one block's definition of it at
        most; where they reach several (a test file's callbacks, each with its own `createStore`),
        the hints they had before: an edge is the caller's, not a line's, and one to each would
        stand for every line."""
        dropped: set[int] = set()
        for sites in self.sites.values():
            if len({calls[i].hint for i, _ in sites if calls[i].hint.startswith(AT)}) < 2:
                continue
            for i, before in sites:
                if calls[i].hint.startswith(AT):
                    if before is None:
                        dropped.add(i)
                    else:
                        calls[i] = calls[i]._replace(hint=before)
        return [c for i, c in enumerate(calls) if i not in dropped] if dropped else calls


def _up_to(node: ts.Node | None, types: frozenset[str]) -> ts.Node | None:
    """`node` or the nearest of its ancestors of one of these types; None where none is."""
    while node is not None and node.type not in types:
        node = node.parent
    return node
