"""C++: functions (also out-of-line `Class::method`), classes, structs, enums, namespaces, #include."""

from . import LanguageSpec

NAME = "[(identifier) (field_identifier) (qualified_identifier) (destructor_name) (operator_name)] @name"

SPEC = LanguageSpec(
    name="cpp",
    extensions=(".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp", ".inl"),
    wrapper_types=frozenset({"template_declaration", "field_declaration"}),
    block_types=frozenset({"compound_statement", "if_statement", "for_statement", "while_statement",
                           "switch_statement", "field_declaration_list", "declaration_list",
                           "for_range_loop"}),
    query=rf"""
(function_definition declarator: (function_declarator declarator: {NAME})) @definition.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: {NAME}))) @definition.function
(function_definition declarator: (reference_declarator (function_declarator declarator: {NAME}))) @definition.function
(class_specifier name: [(type_identifier) (qualified_identifier) (template_type)] @name body: (field_declaration_list)) @definition.class
(struct_specifier name: [(type_identifier) (qualified_identifier) (template_type)] @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.union
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(namespace_definition name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.namespace
(type_definition declarator: (type_identifier) @name) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type
(call_expression function: [(identifier) @call
                            (field_expression field: (field_identifier) @call)
                            (qualified_identifier name: (identifier) @call)
                            (template_function name: (identifier) @call)])
(preproc_include path: [(string_literal) (system_lib_string)] @import.module) @import
""",
)
