"""Swift: classes, structs, enums, extensions, actors, protocols, functions, initializers, imports."""

from . import LanguageSpec

SPEC = LanguageSpec(
    name="swift",
    grammar="swift",
    extensions=(".swift",),
    comment_types=frozenset({"comment", "multiline_comment"}),
    block_types=frozenset({"class_body", "protocol_body", "enum_class_body", "function_body",
                           "statements", "if_statement", "for_statement", "while_statement",
                           "switch_statement", "guard_statement"}),
    query=r"""
(class_declaration "struct" name: (type_identifier) @name) @definition.struct
(class_declaration "enum" name: (type_identifier) @name) @definition.enum
(class_declaration "extension" name: (user_type (type_identifier) @name)) @definition.extension
(class_declaration "actor" name: (type_identifier) @name) @definition.class
(class_declaration name: (type_identifier) @name) @definition.class
(protocol_declaration name: (type_identifier) @name) @definition.protocol
(function_declaration name: (simple_identifier) @name) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.method
(init_declaration "init" @name) @definition.method
(typealias_declaration name: (type_identifier) @name) @definition.type
(call_expression [(simple_identifier) @call
                  (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @call))])
(import_declaration (identifier) @import.module) @import
""",
)
