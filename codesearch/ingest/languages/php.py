"""PHP: namespaces, classes, interfaces, traits, enums, functions, methods, use."""

from . import LanguageSpec, definitions

SPEC = LanguageSpec(
    name="php",
    extensions=(".php", ".phtml"),
    qualifier_separators=("\\", "::", "."),
    wrapper_types=frozenset({"expression_statement"}),
    block_types=frozenset({"compound_statement", "declaration_list", "if_statement", "foreach_statement",
                           "for_statement", "while_statement", "try_statement", "switch_statement"}),
    query=r"""
(namespace_definition name: (namespace_name) @name body: (compound_statement)) @definition.namespace
"""
          + definitions("(name)", "class_declaration class", "interface_declaration interface",
                        "trait_declaration trait", "enum_declaration enum", "function_definition function",
                        "method_declaration method")
          + r"""
(assignment_expression left: (variable_name (name) @name)
  right: [(anonymous_function) (arrow_function)]) @definition.function
(function_call_expression function: [(name) (qualified_name)] @call)
(member_call_expression name: (name) @call)
(nullsafe_member_call_expression name: (name) @call)
(scoped_call_expression name: (name) @call)
(object_creation_expression [(name) (qualified_name)] @call)
(namespace_use_declaration (namespace_use_clause [(qualified_name) (name)] @import.module)) @import
(include_expression (_) @import.module) @import
(require_once_expression (_) @import.module) @import
""",
)
