"""Java: classes, interfaces, enums, records, annotations, methods and constructors, imports."""

from . import LanguageSpec

SPEC = LanguageSpec(
    name="java",
    grammar="java",
    extensions=(".java",),
    comment_types=frozenset({"line_comment", "block_comment"}),
    block_types=frozenset({"block", "class_body", "interface_body", "enum_body", "if_statement",
                           "for_statement", "enhanced_for_statement", "while_statement",
                           "try_statement", "switch_expression"}),
    query=r"""
(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.record
(annotation_type_declaration name: (identifier) @name) @definition.interface
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(method_invocation name: (identifier) @call)
(object_creation_expression type: [(type_identifier) @call (generic_type (type_identifier) @call)])
(import_declaration [(scoped_identifier) (identifier)] @import.module) @import
""",
)
