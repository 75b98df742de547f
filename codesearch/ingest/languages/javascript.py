"""JavaScript (and JSX): functions, classes, methods, arrow functions bound to names, ES and CommonJS imports."""

from . import LanguageSpec, definitions

# shared with TypeScript and TSX, whose grammars extend this one
CALLS = r"""
(call_expression function: [(identifier) @call (member_expression property: (property_identifier) @call)])
(new_expression constructor: [(identifier) @call (member_expression property: (property_identifier) @call)])
(import_statement source: (string) @import.module) @import
(call_expression function: (identifier) @_req (#eq? @_req "require")
  arguments: (arguments . (string) @import.module)) @import
"""
FUNCTIONS = (definitions("(identifier)", "function_declaration function", "generator_function_declaration function",
                         "function_expression function")
             + r"""
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @definition.method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @definition.function
(assignment_expression left: (member_expression property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @definition.function
(pair key: (property_identifier) @name value: [(arrow_function) (function_expression)]) @definition.function
""")
WRAPPERS = frozenset({"export_statement", "lexical_declaration", "variable_declaration", "expression_statement"})
BLOCKS = frozenset({"statement_block", "class_body", "if_statement", "for_statement", "while_statement",
                    "try_statement", "switch_statement", "object"})

SPEC = LanguageSpec(
    name="javascript",
    extensions=(".js", ".jsx", ".mjs", ".cjs"),
    wrapper_types=WRAPPERS,
    block_types=BLOCKS,
    query=FUNCTIONS + CALLS + r"""
(class_declaration name: (identifier) @name) @definition.class
(variable_declarator name: (identifier) @name value: (class)) @definition.class
""",
)
