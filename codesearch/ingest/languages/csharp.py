"""C#: namespaces, classes, interfaces, structs, records, enums, methods, constructors, using,
and what a call's receiver is bound to (`this`, `base` through the class's first base, typed
parameters, locals, fields and properties, `var x = new Foo()`, classes named by a static call),
method groups passed as arguments."""

import re

from . import LanguageSpec, definitions

_USING_ALIAS = re.compile(r"^(?:global\s+)?using\s+(\w+)\s*=\s*([\w.]+?)\.(\w+)\s*;?$")


def import_aliases(text: str, module: str) -> list[tuple[str, str, str]]:
    """`using Json = Newtonsoft.Json.JsonConvert;` binds Json to the type JsonConvert; a using of
    a namespace binds no name (its types are named bare)."""
    found = _USING_ALIAS.match(text.strip())
    return [(found.group(1), found.group(2), found.group(3))] if found else []


# the predefined types and the base library's types most code names: their static members are
# never the repository's (a value of one may call the repository's extension methods)
BUILTIN_TYPES = frozenset({
    "string", "int", "long", "short", "byte", "sbyte", "uint", "ulong", "ushort", "char", "bool", "float",
    "double", "decimal", "object", "dynamic", "nint", "nuint", "String", "Int32", "Int64", "Boolean", "Object",
    "Math", "Console", "Convert", "Array", "Enum", "Guid", "DateTime", "TimeSpan", "Task", "ValueTask", "Type",
    "Exception", "ArgumentException", "ArgumentNullException", "InvalidOperationException", "StringBuilder",
    "List", "Dictionary", "HashSet", "Queue", "Stack", "IList", "IDictionary", "ICollection", "IEnumerable",
    "IEnumerator", "IReadOnlyList", "IReadOnlyDictionary", "IReadOnlyCollection", "Enumerable", "Interlocked",
    "Monitor", "Activator", "Environment", "GC", "Nullable", "Span", "ReadOnlySpan", "Memory", "Tuple",
    "ValueTuple", "var"})
_TYPES = "[(identifier) (generic_name) (qualified_name) (predefined_type)]"

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
(invocation_expression function: [(identifier) @call (generic_name (identifier) @call)])
(invocation_expression function: (member_access_expression expression: _ @call.receiver
                                  name: [(identifier) @call (generic_name (identifier) @call)]))
(invocation_expression function: (conditional_access_expression condition: (_) @call.receiver
  (member_binding_expression name: [(identifier) @call (generic_name (identifier) @call)])))
(object_creation_expression type: [(identifier) @call.receiver @call
                                   (generic_name (identifier) @call.receiver @call)])
(argument (identifier) @ref)
(argument (member_access_expression expression: _ @ref.receiver name: (identifier) @ref))
(parameter type: """ + _TYPES + r""" @bind.type name: (identifier) @bind.name)
(parameter type: (nullable_type """ + _TYPES + r""" @bind.type) name: (identifier) @bind.name)
(variable_declaration type: """ + _TYPES + r""" @bind.type (variable_declarator name: (identifier) @bind.name))
(variable_declaration type: (nullable_type """ + _TYPES + r""" @bind.type)
  (variable_declarator name: (identifier) @bind.name))
(variable_declaration type: (implicit_type)
  (variable_declarator name: (identifier) @bind.name (object_creation_expression type: (_) @bind.new)))
(property_declaration type: """ + _TYPES + r""" @bind.type name: (identifier) @bind.name)
(property_declaration type: (nullable_type """ + _TYPES + r""" @bind.type) name: (identifier) @bind.name)
(foreach_statement type: """ + _TYPES + r""" @bind.type left: (identifier) @bind.name)
(base_list ":" @bind.name . [(identifier) (generic_name) (qualified_name)] @bind.type)
(using_directive [(identifier) (qualified_name)] @import.module) @import
""",
    self_names=frozenset({"this"}),
    super_names=frozenset({"base", ":"}),
    builtin_types=BUILTIN_TYPES,
    capitalized_types=True,
    extension_receiver=r"\(\s*this\s+(?:[\w.]+\.)?(\w+)",  # `Query(this IDbConnection cnn, ...)`
    import_aliases=import_aliases,
)
