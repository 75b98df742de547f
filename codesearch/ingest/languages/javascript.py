"""JavaScript (and JSX): functions, classes, methods, arrow functions bound to names, ES and CommonJS imports."""

import re

from . import LanguageSpec, definitions

_CLAUSE = re.compile(r"^import\s+(?:type\s+)?(.*?)\s+from\s", re.DOTALL)
_REQUIRED = re.compile(r"^(.*?)\s*=\s*require\s*\(", re.DOTALL)  # CommonJS: `x = require("m")`


def import_aliases(text: str, module: str) -> list[tuple[str, str, str]]:
    """`import * as m`, `import m` and `m = require("...")` bind m (the module); `import { a, b as c }`
    and `{ a, b: c } = require("...")` bind a and c (members of the module)."""
    clause = _CLAUSE.match(text) or _REQUIRED.match(text)
    if not clause:
        return []
    out = []
    named = re.search(r"\{(.*)\}", clause.group(1), re.DOTALL)
    for part in (named.group(1).split(",") if named else ()):
        words = part.replace("type ", " ").replace(":", " as ").split()
        if len(words) == 3 and words[1] == "as":
            out.append((words[2], module, words[0]))
        elif len(words) == 1:
            out.append((words[0], module, words[0]))
    head = re.sub(r"\{.*\}", "", clause.group(1), flags=re.DOTALL)
    for part in head.split(","):
        words = part.split()
        if words[:2] == ["*", "as"] and len(words) == 3:
            out.append((words[2], module, ""))
        elif len(words) == 1:
            out.append((words[0], module, ""))
    return out


# shared with TypeScript and TSX, whose grammars extend this one
CALLS = r"""
(call_expression function: (identifier) @call)
(call_expression function: (member_expression object: (_) @call.receiver property: (property_identifier) @call))
(new_expression constructor: [(identifier) @call (member_expression property: (property_identifier) @call)])
(arguments (identifier) @ref)
(arguments (member_expression object: (_) @ref.receiver property: (property_identifier) @ref))
(variable_declarator name: (identifier) @bind.name value: (new_expression constructor: (_) @bind.new))
(assignment_expression left: (member_expression) @bind.name right: (new_expression constructor: (_) @bind.new))
(variable_declarator name: (identifier) @bind.name value: [(array) (string) (template_string)] @bind.literal)
(import_statement source: (string) @import.module) @import
((export_statement source: (string) @import.module) @import (#not-match? @import "^export\\s+(\\*\\s+as|type)\\s"))
(variable_declarator name: [(identifier) (object_pattern)] value: (call_expression function: (identifier) @_req
  (#eq? @_req "require") arguments: (arguments . (string) @import.module))) @import
(call_expression function: (identifier) @_req (#eq? @_req "require")
  arguments: (arguments . (string) @import.module)) @import
"""
# names declared as values (variables, parameters, destructured names): a bare name that reaches
# one is that value, never a definition of the name elsewhere
VALUES = r"""
(arrow_function parameter: (identifier) @bind.name @bind.value)
(variable_declarator name: (identifier) @bind.name @bind.value)
(catch_clause parameter: (identifier) @bind.name @bind.value)
(for_in_statement left: (identifier) @bind.name @bind.value)
(object_pattern [(shorthand_property_identifier_pattern) @bind.name
                 (pair_pattern value: (identifier) @bind.name)
                 (object_assignment_pattern left: (shorthand_property_identifier_pattern) @bind.name)] @bind.value)
(array_pattern (identifier) @bind.name @bind.value)
(rest_pattern (identifier) @bind.name @bind.value)
"""
FUNCTIONS = (definitions("(identifier)", "function_declaration function", "generator_function_declaration function",
                         "function_expression function")
             + r"""
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @definition.method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @definition.function
(assignment_expression left: (member_expression object: (member_expression object: (identifier) @receiver
  property: (property_identifier) @_prototype (#eq? @_prototype "prototype")) property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @definition.function
(assignment_expression left: (member_expression object: [(identifier) (member_expression)] @receiver
  property: (property_identifier) @name) right: [(arrow_function) (function_expression)]) @definition.function
(assignment_expression left: (member_expression property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @definition.function
(pair key: (property_identifier) @name value: [(arrow_function) (function_expression)]) @definition.function
""")
WRAPPERS = frozenset({"export_statement", "lexical_declaration", "variable_declaration", "expression_statement"})
SELF_NAMES = frozenset({"this"})
# the types of the language and its runtimes, whose methods are never the repository's
BUILTIN_TYPES = frozenset({"string", "number", "boolean", "bigint", "symbol", "object", "Object", "Map", "Set",
                           "WeakMap", "WeakSet", "Array", "ReadonlyArray", "Promise", "Date", "RegExp", "Error",
                           "Record", "URL", "URLSearchParams", "Headers", "Request", "Response", "[]",
                           "String", "Number", "Boolean", "BigInt", "Symbol", "JSON", "Math", "Reflect", "Intl",
                           "Proxy", "Atomics", "ArrayBuffer", "DataView", "Uint8Array", "TextEncoder", "TextDecoder",
                           "AbortController", "AbortSignal", "FormData", "Blob", "ReadableStream", "WritableStream",
                           "TypeError", "RangeError", "SyntaxError", "Buffer", "any", "unknown", "never"})
# methods of the built-in types (Map, Set, Array, String, Promise, iterators, functions): called on a
# value whose type is not known, they are the built-in's, not a same-named method of the repository
BUILTIN_METHODS = frozenset({
    "get", "set", "has", "delete", "clear", "add", "forEach", "keys", "values", "entries",
    "push", "pop", "shift", "unshift", "slice", "splice", "concat", "join", "indexOf", "lastIndexOf",
    "includes", "find", "findIndex", "findLast", "findLastIndex", "filter", "map", "reduce", "reduceRight",
    "some", "every", "flat", "flatMap", "fill", "sort", "reverse", "at", "charAt", "charCodeAt",
    "codePointAt", "startsWith", "endsWith", "padStart", "padEnd", "repeat", "replace", "replaceAll",
    "split", "substring", "substr", "toLowerCase", "toUpperCase", "trim", "trimStart", "trimEnd", "match",
    "matchAll", "normalize", "localeCompare", "then", "finally", "next", "hasOwnProperty", "toString",
    "valueOf", "toLocaleString", "call", "apply", "bind", "test", "exec", "getTime", "toISOString",
    "toFixed"})
LITERAL_TYPES = (("array", "Array"), ("string", "string"), ("template_string", "string"))
BLOCKS = frozenset({"statement_block", "class_body", "if_statement", "for_statement", "while_statement",
                    "try_statement", "switch_statement", "object"})

SPEC = LanguageSpec(
    name="javascript",
    extensions=(".js", ".jsx", ".mjs", ".cjs"),
    wrapper_types=WRAPPERS,
    block_types=BLOCKS,
    self_names=SELF_NAMES,
    builtin_types=BUILTIN_TYPES,
    unknown_receivers_call_methods=True,
    builtin_methods=BUILTIN_METHODS,
    constructor_name="constructor",
    names_from_imports=True,
    lexical_blocks=frozenset({"statement_block"}),
    literal_types=LITERAL_TYPES,
    import_aliases=import_aliases,
    query=FUNCTIONS + CALLS + VALUES + r"""
(formal_parameters [(identifier) @bind.name (assignment_pattern left: (identifier) @bind.name)] @bind.value)
(class_declaration name: (identifier) @name) @definition.class
(variable_declarator name: (identifier) @name value: (class)) @definition.class
""",
)
