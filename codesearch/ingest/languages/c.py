"""C: functions, structs, unions, enums, typedefs, #include."""

from . import LanguageSpec

DECLARATOR = r"""[(identifier) @name
                  (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
                  (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))]"""

SPEC = LanguageSpec(
    name="c",
    extensions=(".c", ".h"),
    wrapper_types=frozenset({"field_declaration"}),  # a struct declared inside a struct
    block_types=frozenset({"compound_statement", "if_statement", "for_statement", "while_statement",
                           "switch_statement", "field_declaration_list"}),
    query=r"""
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @definition.function
(function_definition declarator: (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))) @definition.function
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.union
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type
(call_expression function: [(identifier) @call (field_expression field: (field_identifier) @call)])
(preproc_include path: [(string_literal) (system_lib_string)] @import.module) @import
""",
)
