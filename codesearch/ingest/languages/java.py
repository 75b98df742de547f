"""Java: classes, interfaces, enums, records, annotations, methods and constructors, imports, and
what a call's receiver is bound to (`this`, `super`, typed parameters, locals and fields, `var x =
new Foo()`, imported and same-package classes), method references and annotations."""

import re

from . import LanguageSpec, definitions

_IMPORT = re.compile(r"^import\s+(static\s+)?([\w.$]+?)(\.\*)?\s*;?$")


def import_aliases(text: str, module: str) -> list[tuple[str, str, str]]:
    """`import a.b.C;` binds C to its file's module a.b.C; `import static a.b.C.m;` binds m to
    a.b.C; a wildcard binds nothing."""
    found = _IMPORT.match(text.strip())
    if not found or found.group(3):
        return []
    dotted = found.group(2)
    qualifier, _, last = dotted.rpartition(".")
    if not qualifier:
        return []
    return [(last, qualifier, last)] if found.group(1) else [(last, dotted, last)]


# java.lang (never imported) and the collections most code names
BUILTIN_TYPES = frozenset({
    "String", "Object", "Integer", "Long", "Short", "Byte", "Double", "Float", "Character", "Boolean", "Number",
    "Math", "StrictMath", "System", "Thread", "Class", "StringBuilder", "StringBuffer", "CharSequence", "Iterable",
    "Comparable", "Runnable", "Enum", "Void", "Throwable", "Exception", "RuntimeException", "Error", "Runtime",
    "ClassLoader", "ThreadLocal", "Process", "List", "ArrayList", "LinkedList", "Map", "HashMap", "LinkedHashMap",
    "TreeMap", "Set", "HashSet", "LinkedHashSet", "TreeSet", "Collection", "Iterator", "Optional", "Arrays",
    "Collections", "Objects", "Stream", "Collectors", "var"})

SPEC = LanguageSpec(
    name="java",
    extensions=(".java",),
    comment_types=frozenset({"line_comment", "block_comment"}),
    block_types=frozenset({"block", "class_body", "interface_body", "enum_body", "if_statement",
                           "for_statement", "enhanced_for_statement", "while_statement",
                           "try_statement", "switch_expression"}),
    self_names=frozenset({"this"}),
    super_names=frozenset({"super", "extends"}),
    builtin_types=BUILTIN_TYPES,
    capitalized_types=True,
    import_aliases=import_aliases,
    query=definitions("(identifier)", "class_declaration class", "interface_declaration interface",
                      "enum_declaration enum", "record_declaration record", "annotation_type_declaration interface",
                      "method_declaration method", "constructor_declaration method")
          + r"""
(method_invocation !object name: (identifier) @call)
(method_invocation object: (_) @call.receiver name: (identifier) @call)
(object_creation_expression type: [(type_identifier) @call.receiver @call
                                   (generic_type (type_identifier) @call.receiver @call)])
(method_reference . (_) @ref.receiver . (identifier) @ref .)
(marker_annotation name: (identifier) @ref)
(annotation name: (identifier) @ref)
(formal_parameter type: [(type_identifier) (generic_type) (scoped_type_identifier)] @bind.type
  name: (identifier) @bind.name)
(catch_formal_parameter (catch_type . (_) @bind.type .) name: (identifier) @bind.name)
(enhanced_for_statement type: [(type_identifier) (generic_type) (scoped_type_identifier)] @bind.type
  name: (identifier) @bind.name (#not-eq? @bind.type "var"))
(local_variable_declaration type: [(type_identifier) (generic_type) (scoped_type_identifier)] @bind.type
  declarator: (variable_declarator name: (identifier) @bind.name) (#not-eq? @bind.type "var"))
(field_declaration type: [(type_identifier) (generic_type) (scoped_type_identifier)] @bind.type
  declarator: (variable_declarator name: (identifier) @bind.name))
(local_variable_declaration type: (type_identifier) @_var
  declarator: (variable_declarator name: (identifier) @bind.name
    value: (object_creation_expression type: [(type_identifier) (generic_type) (scoped_type_identifier)] @bind.new))
  (#eq? @_var "var"))
(superclass "extends" @bind.name [(type_identifier) (generic_type) (scoped_type_identifier)] @bind.type)
(import_declaration [(scoped_identifier) (identifier)] @import.module) @import
""",
)
