"""Kotlin: classes, interfaces, enum and data classes, objects, functions, type aliases, imports."""

from . import LanguageSpec

SPEC = LanguageSpec(
    name="kotlin",
    extensions=(".kt", ".kts"),
    comment_types=frozenset({"comment", "multiline_comment", "line_comment"}),
    body_fields=(),
    body_types=frozenset({"class_body", "function_body", "enum_class_body"}),
    block_types=frozenset({"class_body", "function_body", "statements", "enum_class_body",
                           "control_structure_body", "block"}),
    query=r"""
(class_declaration "interface" (type_identifier) @name) @definition.interface
(class_declaration "enum" (type_identifier) @name) @definition.enum
(class_declaration (type_identifier) @name) @definition.class
(object_declaration (type_identifier) @name) @definition.object
(companion_object) @definition.object @name
(function_declaration (simple_identifier) @name) @definition.function
(type_alias (type_identifier) @name) @definition.type
(call_expression [(simple_identifier) @call
                  (navigation_expression (navigation_suffix (simple_identifier) @call))])
(import_header (identifier) @import.module) @import
""",
)
