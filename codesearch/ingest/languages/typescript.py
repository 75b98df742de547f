"""TypeScript: JavaScript's definitions plus interfaces, type aliases, enums and namespaces."""

from . import LanguageSpec
from .javascript import BLOCKS, CALLS, FUNCTIONS, WRAPPERS

TYPES = r"""
(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(internal_module name: [(identifier) (nested_identifier)] @name) @definition.namespace
(function_signature name: (identifier) @name) @definition.function
(abstract_method_signature name: (property_identifier) @name) @definition.method
(method_signature name: (property_identifier) @name) @definition.method
(variable_declarator name: (identifier) @name value: (class)) @definition.class
"""

SPEC = LanguageSpec(
    name="typescript",
    grammar="typescript",
    extensions=(".ts", ".mts", ".cts"),
    wrapper_types=WRAPPERS | {"ambient_declaration"},
    block_types=BLOCKS,
    query=FUNCTIONS + CALLS + TYPES,
)
