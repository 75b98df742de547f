"""Python: classes, functions (methods inside classes), docstrings, imports, calls, and what a
call's receiver is bound to (constructors, literals, annotations, typed parameters, imports)."""

import builtins
import re

from . import LanguageSpec, definitions

_FROM = re.compile(r"^from\s+(\S+)\s+import\s+(.*)$", re.DOTALL)
_NAME_AS = re.compile(r"^([\w.]+)(?:\s+as\s+(\w+))?$")


def import_aliases(text: str, module: str) -> list[tuple[str, str, str]]:
    """`import a.b` binds a (module a); `import a.b as c` binds c (module a.b); `from m import
    x as y` binds y (member x of module m)."""
    found = _FROM.match(text)
    if found:
        source = found.group(1)
        names = found.group(2).strip().strip("()").replace("\\", " ")
        out = []
        for part in names.split(","):
            m = _NAME_AS.match(part.strip())
            if m and m.group(1) != "*":
                out.append((m.group(2) or m.group(1), source, m.group(1)))
        return out
    out = []
    for part in text.removeprefix("import").split(","):
        m = _NAME_AS.match(part.strip())
        if m:
            dotted, alias = m.group(1), m.group(2)
            out.append((alias, dotted, "") if alias else (dotted.split(".")[0], dotted.split(".")[0], ""))
    return out


SPEC = LanguageSpec(
    name="python",
    extensions=(".py", ".pyi", ".pyw"),
    docstring_in_body=True,
    signature_includes_wrapper=False,  # decorators stay out of the signature
    wrapper_types=frozenset({"decorated_definition"}),
    block_types=frozenset({"block", "if_statement", "for_statement", "while_statement",
                           "try_statement", "with_statement", "match_statement"}),
    self_names=frozenset({"self", "cls"}),
    # `super()` is the class's first base, bound to the `class` keyword of its declaration
    super_names=frozenset({"super", "class"}),
    unknown_receivers_call_methods=True,  # `x.m()` calls a method, never a module's function
    returns_annotation=r"->\s*(.+?)\s*:?\s*$",
    redefinition_replaces=True,  # `@overload` stubs, then the definition a call reaches
    builtin_types=frozenset({"dict", "list", "set", "frozenset", "tuple", "str", "bytes", "bytearray", "int",
                             "float", "complex", "bool", "object", "type", "Dict", "List", "Set", "FrozenSet",
                             "Tuple", "Mapping", "MutableMapping", "Sequence", "Iterable", "Iterator", "[]"}),
    builtin_functions=frozenset(name for name in dir(builtins) if not name.startswith("_")),
    builtin_methods=frozenset(name for kind in (dict, list, str, set, bytes, tuple) for name in dir(kind)
                              if not name.startswith("_")),
    literal_types=(("dictionary", "dict"), ("dictionary_comprehension", "dict"), ("list", "list"),
                   ("list_comprehension", "list"), ("set", "set"), ("set_comprehension", "set"),
                   ("tuple", "tuple"), ("string", "str"), ("concatenated_string", "str"),
                   ("identifier", "object")),  # a class declared without bases derives from object
    constructors_capitalized=True,
    import_aliases=import_aliases,
    query=definitions("(identifier)", "class_definition class", "function_definition function")
          + r"""
(call function: (identifier) @call)
(call function: (attribute object: (_) @call.receiver attribute: (identifier) @call))
(argument_list (identifier) @ref)
(argument_list (attribute object: (_) @ref.receiver attribute: (identifier) @ref))
(keyword_argument value: (identifier) @ref)
(keyword_argument value: (attribute object: (_) @ref.receiver attribute: (identifier) @ref))
(decorator (identifier) @ref)
(decorator (attribute object: (_) @ref.receiver attribute: (identifier) @ref))
(assignment left: [(identifier) (attribute)] @bind.name type: (type) @bind.type)
(assignment left: [(identifier) (attribute)] @bind.name right: (call function: [(identifier) (attribute)] @bind.new))
(assignment left: [(identifier) (attribute)] @bind.name right: [(dictionary) (dictionary_comprehension) (list)
  (list_comprehension) (set) (set_comprehension) (tuple) (string) (concatenated_string)] @bind.literal)
(class_definition "class" @bind.name superclasses: (argument_list . [(identifier) (attribute)] @bind.type))
(class_definition "class" @bind.name name: (identifier) @bind.literal !superclasses)
(assignment left: [(identifier) (attribute)] @bind.name right: [(identifier) (attribute)] @bind.same)
(typed_parameter (identifier) @bind.name type: (type) @bind.type)
(typed_default_parameter name: (identifier) @bind.name type: (type) @bind.type)
(import_statement name: [(dotted_name) @import.module (aliased_import name: (dotted_name) @import.module)]) @import
(import_from_statement module_name: [(dotted_name) (relative_import)] @import.module) @import
""",
)
