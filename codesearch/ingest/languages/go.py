"""Go: functions, methods with receivers, struct/interface/other type declarations, imports."""

from . import LanguageSpec

SPEC = LanguageSpec(
    name="go",
    extensions=(".go",),
    wrapper_types=frozenset({"type_declaration"}),
    body_types=frozenset({"func_literal"}),
    block_types=frozenset({"block", "if_statement", "for_statement", "expression_switch_statement",
                           "type_switch_statement", "select_statement"}),
    query=r"""
(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: [
    (type_identifier) @receiver
    (pointer_type (type_identifier) @receiver)
    (generic_type type: (type_identifier) @receiver)
    (pointer_type (generic_type type: (type_identifier) @receiver))]))
  name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name type: [(type_identifier) (qualified_type) (function_type)
  (map_type) (slice_type) (array_type) (pointer_type) (channel_type) (generic_type)]) @definition.type
(type_alias name: (type_identifier) @name) @definition.type
(short_var_declaration left: (expression_list . (identifier) @name)
  right: (expression_list . (func_literal))) @definition.function
(call_expression function: [(identifier) @call (selector_expression field: (field_identifier) @call)])
(import_spec path: (interpreted_string_literal) @import.module) @import
""",
)
