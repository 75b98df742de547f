"""Lua: functions (global, local, `M.f`, `M:f`), functions assigned to fields, require."""

from . import LanguageSpec

SPEC = LanguageSpec(
    name="lua",
    extensions=(".lua",),
    block_types=frozenset({"block", "if_statement", "for_statement", "while_statement", "do_statement"}),
    query=r"""
(function_declaration name: (identifier) @name) @definition.function
(function_declaration name: (dot_index_expression table: (_) @receiver field: (identifier) @name)) @definition.function
(function_declaration name: (method_index_expression table: (_) @receiver method: (identifier) @name)) @definition.method
(assignment_statement
  (variable_list name: (dot_index_expression table: (_) @receiver field: (identifier) @name))
  (expression_list value: (function_definition))) @definition.function
(variable_declaration (assignment_statement
  (variable_list name: (identifier) @name)
  (expression_list value: (function_definition)))) @definition.function
(function_call name: [(identifier) @call
                      (dot_index_expression field: (identifier) @call)
                      (method_index_expression method: (identifier) @call)])
(function_call name: (identifier) @_req (#eq? @_req "require")
  arguments: (arguments (string) @import.module)) @import
""",
    ignored_calls=frozenset({"require"}),
)
