"""Rust: functions, structs, enums, unions, traits, impl blocks, modules, macros, use declarations."""

from . import LanguageSpec, definitions

SPEC = LanguageSpec(
    name="rust",
    extensions=(".rs",),
    comment_types=frozenset({"line_comment", "block_comment"}),
    leading_skip_types=frozenset({"attribute_item"}),
    block_types=frozenset({"block", "declaration_list", "if_expression", "match_expression",
                           "for_expression", "while_expression", "loop_expression", "match_block"}),
    query=definitions("(identifier)", "function_item function", "function_signature_item function")
          + definitions("(type_identifier)", "struct_item struct", "enum_item enum", "union_item union",
                        "trait_item trait", "type_item type")
          + r"""
(mod_item name: (identifier) @name body: (declaration_list)) @definition.module
(macro_definition name: (identifier) @name) @definition.macro
(impl_item type: [(type_identifier) @name
                  (generic_type type: (type_identifier) @name)
                  (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
                  (scoped_type_identifier name: (type_identifier) @name)]) @definition.impl
(call_expression function: [(identifier) @call
                            (field_expression field: (field_identifier) @call)
                            (scoped_identifier name: (identifier) @call)
                            (generic_function function: [(identifier) @call
                                                         (scoped_identifier name: (identifier) @call)
                                                         (field_expression field: (field_identifier) @call)])])
(macro_invocation macro: (identifier) @call)
(use_declaration argument: (_) @import.module) @import
(extern_crate_declaration name: (identifier) @import.module) @import
""",
)
