"""C#: namespaces, classes, interfaces, structs, records, enums, methods, constructors, using."""

from . import LanguageSpec

SPEC = LanguageSpec(
    name="csharp",
    grammar="csharp",
    extensions=(".cs",),
    doc_rewrites=(  # XML documentation: keep the words, drop the tags
        (r'<(?:see|seealso|paramref|typeparamref)\s+\w+="([^"]*)"\s*/>', r"\1"),
        (r'<(?:param|typeparam|exception)\s+\w+="([^"]*)"\s*>', r"\1: "),
        (r"</?(?:summary|remarks|returns|value|para|example|c|code|param|typeparam|exception|list|item"
         r"|description|term|inheritdoc)\b[^>]*>", ""),
    ),
    block_types=frozenset({"block", "declaration_list", "if_statement", "for_statement",
                           "foreach_statement", "while_statement", "try_statement", "switch_statement"}),
    query=r"""
(namespace_declaration name: [(identifier) (qualified_name)] @name) @definition.namespace
(file_scoped_namespace_declaration name: [(identifier) (qualified_name)] @name) @definition.namespace
(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(struct_declaration name: (identifier) @name) @definition.struct
(record_declaration name: (identifier) @name) @definition.record
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(local_function_statement name: (identifier) @name) @definition.function
(invocation_expression function: [(identifier) @call
                                  (member_access_expression name: (identifier) @call)
                                  (generic_name (identifier) @call)
                                  (member_access_expression name: (generic_name (identifier) @call))])
(object_creation_expression type: [(identifier) @call (generic_name (identifier) @call)])
(using_directive [(identifier) (qualified_name)] @import.module) @import
""",
)
