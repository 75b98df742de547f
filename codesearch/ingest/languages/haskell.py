"""Haskell: functions, data types, newtypes, type synonyms, classes, instances, imports."""

from . import LanguageSpec

SPEC = LanguageSpec(
    name="haskell",
    grammar="haskell",
    extensions=(".hs", ".lhs"),
    comment_types=frozenset({"comment", "haddock"}),
    leading_skip_types=frozenset({"signature"}),
    body_fields=("match", "declarations", "constructors"),
    block_types=frozenset({"match", "class_declarations", "instance_declarations", "do", "let_in"}),
    method_parent_kinds=frozenset({"class", "instance"}),
    query=r"""
(function name: (variable) @name) @definition.function
(bind name: (variable) @name) @definition.function
(data_type name: (name) @name) @definition.type
(newtype name: (name) @name) @definition.type
(type_synomym name: (name) @name) @definition.type
(class name: (name) @name) @definition.class
(instance name: (name) @name) @definition.instance
(apply function: [(variable) @call (qualified id: (variable) @call)])
(import module: (module) @import.module) @import
""",
)
