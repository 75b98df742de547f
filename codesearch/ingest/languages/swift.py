"""Swift: classes, structs, enums, extensions, actors, protocols, functions, initializers, imports."""

from . import LanguageSpec, definitions

SPEC = LanguageSpec(
    name="swift",
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
"""
          + definitions("(type_identifier)", "class_declaration class", "protocol_declaration protocol")
          + definitions("(simple_identifier)", "function_declaration function",
                        "protocol_function_declaration method")
          + r"""
(init_declaration "init" @name) @definition.method
(typealias_declaration name: (type_identifier) @name) @definition.type
(call_expression [(simple_identifier) @call
                  (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @call))])
(import_declaration (identifier) @import.module) @import
""",
)
