"""Java: classes, interfaces, enums, records, annotations, methods and constructors, imports."""

from . import LanguageSpec, definitions

SPEC = LanguageSpec(
    name="java",
    extensions=(".java",),
    comment_types=frozenset({"line_comment", "block_comment"}),
    block_types=frozenset({"block", "class_body", "interface_body", "enum_body", "if_statement",
                           "for_statement", "enhanced_for_statement", "while_statement",
                           "try_statement", "switch_expression"}),
    query=definitions("(identifier)", "class_declaration class", "interface_declaration interface",
                      "enum_declaration enum", "record_declaration record", "annotation_type_declaration interface",
                      "method_declaration method", "constructor_declaration method")
          + r"""
(method_invocation name: (identifier) @call)
(object_creation_expression type: [(type_identifier) @call (generic_type (type_identifier) @call)])
(import_declaration [(scoped_identifier) (identifier)] @import.module) @import
""",
)
