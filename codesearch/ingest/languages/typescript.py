"""TypeScript: JavaScript's definitions plus interfaces, type aliases, enums and namespaces."""

from . import LanguageSpec, definitions
from .javascript import BLOCKS, CALLS, FUNCTIONS, WRAPPERS

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
""")

SPEC = LanguageSpec(
    name="typescript",
    extensions=(".ts", ".mts", ".cts"),
    wrapper_types=WRAPPERS | {"ambient_declaration"},
    block_types=BLOCKS,
    query=FUNCTIONS + CALLS + TYPES,
)
