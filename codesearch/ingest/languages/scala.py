"""Scala: classes, case classes, traits, objects, enums, defs, imports."""

from . import LanguageSpec, definitions

SPEC = LanguageSpec(
    name="scala",
    extensions=(".scala", ".sc"),
    comment_types=frozenset({"comment", "block_comment"}),
    leading_skip_types=frozenset({"annotation"}),
    block_types=frozenset({"template_body", "block", "if_expression", "match_expression", "case_block"}),
    query=definitions("(identifier)", "class_definition class", "trait_definition trait", "object_definition object",
                      "enum_definition enum", "function_definition function", "function_declaration function")
          + r"""
(type_definition name: (type_identifier) @name) @definition.type
(call_expression function: [(identifier) @call (field_expression field: (identifier) @call)])
(import_declaration) @import
""",
)
