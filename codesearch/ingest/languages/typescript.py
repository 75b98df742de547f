"""TypeScript: JavaScript's definitions plus interfaces, type aliases, enums and namespaces."""

from . import LanguageSpec, definitions
from .javascript import (
    BLOCKS,
    BUILTIN_METHODS,
    BUILTIN_TYPES,
    CALLS,
    FUNCTIONS,
    LITERAL_TYPES,
    SELF_NAMES,
    VALUES,
    WRAPPERS,
    import_aliases,
)

TYPES = (definitions("(type_identifier)", "class_declaration class", "abstract_class_declaration class",
                     "interface_declaration interface", "type_alias_declaration type")
         + r"""
(enum_declaration name: (identifier) @name) @definition.enum
(internal_module name: [(identifier) (nested_identifier)] @name) @definition.namespace
(function_signature name: (identifier) @name) @definition.function
"""
         + definitions("(property_identifier)", "abstract_method_signature method", "method_signature method")
         + r"""
(variable_declarator name: (identifier) @name value: (class)) @definition.class
(required_parameter pattern: (identifier) @bind.name type: (type_annotation (_) @bind.type))
(optional_parameter pattern: (identifier) @bind.name type: (type_annotation (_) @bind.type))
(variable_declarator name: (identifier) @bind.name type: (type_annotation (_) @bind.type))
(public_field_definition name: (property_identifier) @bind.name type: (type_annotation (_) @bind.type))
([(required_parameter pattern: (identifier) @bind.name) (optional_parameter pattern: (identifier) @bind.name)]
  @bind.value)
""")

SPEC = LanguageSpec(
    name="typescript",
    extensions=(".ts", ".mts", ".cts"),
    wrapper_types=WRAPPERS | {"ambient_declaration"},
    block_types=BLOCKS,
    query=FUNCTIONS + CALLS + VALUES + TYPES,
    self_names=SELF_NAMES,
    builtin_types=BUILTIN_TYPES,
    unknown_receivers_call_methods=True,
    builtin_methods=BUILTIN_METHODS,
    constructor_name="constructor",
    names_from_imports=True,
    lexical_blocks=frozenset({"statement_block"}),
    uncallable_kinds=frozenset({"interface", "type"}),
    literal_types=LITERAL_TYPES,
    import_aliases=import_aliases,
)
