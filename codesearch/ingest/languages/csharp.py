"""C#: namespaces, classes, interfaces, structs, records, enums, methods, constructors, using."""

from . import LanguageSpec, definitions

SPEC = LanguageSpec(
    name="csharp",
    extensions=(".cs",),
    doc_rewrites=(  # XML documentation: keep the words, drop the tags
        (r'<(?:see|seealso|paramref|typeparamref)\s+\w+="([^"]*)"\s*/>', r"\1"),
        (r'<(?:param|typeparam|exception)\s+\w+="([^"]*)"\s*>', r"\1: "),
        (r"</?(?:summary|remarks|returns|value|para|example|c|code|param|typeparam|exception|list|item"
         r"|description|term|inheritdoc)\b[^>]*>", ""),
    ),
    block_types=frozenset({"block", "declaration_list", "if_statement", "for_statement",
                           "foreach_statement", "while_statement", "try_statement", "switch_statement"}),
    query=definitions("[(identifier) (qualified_name)]", "namespace_declaration namespace",
                      "file_scoped_namespace_declaration namespace")
          + definitions("(identifier)", "class_declaration class", "interface_declaration interface",
                        "struct_declaration struct", "record_declaration record", "enum_declaration enum",
                        "method_declaration method", "constructor_declaration method",
                        "local_function_statement function")
          + r"""
(invocation_expression function: [(identifier) @call
                                  (member_access_expression name: (identifier) @call)
                                  (generic_name (identifier) @call)
                                  (member_access_expression name: (generic_name (identifier) @call))])
(object_creation_expression type: [(identifier) @call (generic_name (identifier) @call)])
(using_directive [(identifier) (qualified_name)] @import.module) @import
""",
)
