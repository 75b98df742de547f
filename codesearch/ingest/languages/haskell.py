"""Haskell: functions, data types, newtypes, type synonyms, classes, instances, imports."""

from . import LanguageSpec, definitions

SPEC = LanguageSpec(
    name="haskell",
    extensions=(".hs", ".lhs"),
    comment_types=frozenset({"comment", "haddock"}),
    leading_skip_types=frozenset({"signature"}),
    body_fields=("match", "declarations", "constructors"),
    block_types=frozenset({"match", "class_declarations", "instance_declarations", "do", "let_in"}),
    method_parent_kinds=frozenset({"class", "instance"}),
    query=definitions("(variable)", "function function", "bind function")
          + definitions("(name)", "data_type type", "newtype type", "type_synomym type", "class class",
                        "instance instance")
          + r"""
(apply function: [(variable) @call (qualified id: (variable) @call)])
(import module: (module) @import.module) @import
""",
)
