"""Scala: classes, case classes, traits, objects, enums, defs, imports."""

from . import LanguageSpec

SPEC = LanguageSpec(
    name="scala",
    grammar="scala",
    extensions=(".scala", ".sc"),
    comment_types=frozenset({"comment", "block_comment"}),
    leading_skip_types=frozenset({"annotation"}),
    block_types=frozenset({"template_body", "block", "if_expression", "match_expression", "case_block"}),
    query=r"""
(class_definition name: (identifier) @name) @definition.class
(trait_definition name: (identifier) @name) @definition.trait
(object_definition name: (identifier) @name) @definition.object
(enum_definition name: (identifier) @name) @definition.enum
(function_definition name: (identifier) @name) @definition.function
(function_declaration name: (identifier) @name) @definition.function
(type_definition name: (type_identifier) @name) @definition.type
(call_expression function: [(identifier) @call (field_expression field: (identifier) @call)])
(import_declaration) @import
""",
)
