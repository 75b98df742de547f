"""PHP: namespaces, classes, interfaces, traits, enums, functions, methods, use; and what a call's
receiver is bound to (`$this`, `self::`, `static::`, `parent::`, typed parameters and properties,
`new`, classes a `use` names)."""

import re

from . import LanguageSpec, definitions

_USE = re.compile(r"^use\s+(?:function\s+|const\s+)?(.*?);?$", re.DOTALL)


def _clause(path: str, prefix: list[str]) -> list[tuple[str, str, str]]:
    """`A\\B\\C as D` -> (D, A.B, C): the name one clause binds, its namespace, the member it names."""
    name, _, alias = path.partition(" as ")
    parts = prefix + [p for p in name.strip().split("\\") if p]
    if not parts:
        return []
    return [(alias.strip() or parts[-1], ".".join(parts[:-1]), parts[-1])]


def import_aliases(text: str, module: str) -> list[tuple[str, str, str]]:
    """`use A\\B\\C;` binds C, `use A\\B\\C as D` binds D, `use A\\{B, C as D}` binds B and D
    (classes, functions or constants of a namespace)."""
    found = _USE.match(" ".join(text.split()))
    if not found:
        return []
    body = found.group(1)
    head, brace, group = body.partition("{")
    if brace:
        prefix = [p for p in head.strip().split("\\") if p]
        return [b for part in group.rstrip("} ").split(",") if part.strip() for b in _clause(part, prefix)]
    return [b for part in body.split(",") for b in _clause(part, [])]


_TYPE = "[(named_type) @bind.type (optional_type (named_type) @bind.type)]"

SPEC = LanguageSpec(
    name="php",
    extensions=(".php", ".phtml"),
    qualifier_separators=("\\", "::", "."),
    wrapper_types=frozenset({"expression_statement"}),
    block_types=frozenset({"compound_statement", "declaration_list", "if_statement", "foreach_statement",
                           "for_statement", "while_statement", "try_statement", "switch_statement"}),
    self_names=frozenset({"$this", "self", "static"}),
    super_names=frozenset({"super", "extends"}),  # `parent::m()`: the class `extends` names
    builtin_types=frozenset({"int", "float", "string", "bool", "array", "mixed", "void", "null", "callable",
                             "iterable", "object", "false", "true", "never"}),
    # `$a->b`, `$a?->b` and `A::b` as `$a.b`; a namespace `\A\B` as `A.B`; `parent` as `super`
    receiver_rewrites=((r"\??->|::", "."), (r"^\\", ""), (r"\\", "."), (r"^parent$", "super")),
    import_aliases=import_aliases,
    query=r"""
(namespace_definition name: (namespace_name) @name body: (compound_statement)) @definition.namespace
"""
          + definitions("(name)", "class_declaration class", "interface_declaration interface",
                        "trait_declaration trait", "enum_declaration enum", "function_definition function",
                        "method_declaration method")
          + r"""
(assignment_expression left: (variable_name (name) @name)
  right: [(anonymous_function) (arrow_function)]) @definition.function
(function_call_expression function: [(name) (qualified_name)] @call)
(member_call_expression object: (_) @call.receiver name: (name) @call)
(nullsafe_member_call_expression object: (_) @call.receiver name: (name) @call)
(scoped_call_expression scope: (_) @call.receiver name: (name) @call)
(object_creation_expression [(name) (qualified_name)] @call)
(array_creation_expression . (array_element_initializer (variable_name) @ref.receiver)
  . (array_element_initializer (string (string_content) @ref)) .)
(scoped_call_expression scope: (name) @bind.name @bind.type)
(base_clause "extends" @bind.name . [(name) (qualified_name)] @bind.type)
(simple_parameter type: """ + _TYPE + r""" name: (variable_name) @bind.name)
(property_promotion_parameter type: """ + _TYPE + r""" name: (variable_name) @bind.name)
(property_declaration type: """ + _TYPE + r""" (property_element name: (variable_name (name) @bind.name)))
(assignment_expression left: [(variable_name) (member_access_expression)] @bind.name
  right: (object_creation_expression [(name) (qualified_name)] @bind.new))
(namespace_use_declaration [(namespace_use_clause [(qualified_name) (name)] @import.module)
                            (namespace_use_group (namespace_use_clause [(qualified_name) (name)] @import.module))])
  @import
(include_expression (_) @import.module) @import
(require_once_expression (_) @import.module) @import
""",
)
