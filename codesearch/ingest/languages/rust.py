"""Rust: functions, structs, enums, unions, traits, impl blocks, modules, macros, use declarations,
and what a call's receiver is bound to (`self` in an impl, `Self::f`, `Type::f`, typed parameters,
`let` declarations, struct fields, constructors, generic parameters by their trait bound, names
a `use` binds)."""

from . import LanguageSpec, definitions


def _split_top(text: str) -> list[str]:
    """`a, b::{c, d}` -> [`a`, `b::{c, d}`]: the commas outside braces."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char == "{") - (char == "}")
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _use_tree(tree: str, prefix: list[str]) -> list[tuple[str, str, str]]:
    """The names one use tree binds, each (name, module with `.` between parts, member)."""
    if tree.endswith("}") and "{" in tree:
        head, _, inner = tree[:-1].partition("{")
        path = prefix + [p for p in head.split("::") if p.strip()]
        return [found for part in _split_top(inner) for found in _use_tree(part, [p.strip() for p in path])]
    used, _, alias = tree.partition(" as ")
    parts = prefix + [p.strip() for p in used.split("::") if p.strip()]
    if parts and parts[-1] == "self":
        parts.pop()
    if not parts or parts[-1] in ("*", "_") or alias.strip() == "_":
        return []
    member = parts[-1]
    name = alias.strip() or member
    if len(parts) == 1:
        return [(name, member, "")]  # a crate, or a module of the crate root
    return [(name, ".".join(parts[:-1]), member)]


def import_aliases(text: str, module: str) -> list[tuple[str, str, str]]:
    """`use a::b::C;` binds C (member C of module a.b); `use a::{b::C as D, e}` binds D and e;
    `use a::b::{self}` binds b; `extern crate x as y` binds y (the crate x)."""
    if text.startswith("extern"):
        words = text.rstrip(";").split()
        return [(words[-1], module, "")] if module else []
    return _use_tree(" ".join(module.split()).removeprefix("::"), [])


# a type a name is given: these shapes, a reference to one, a trait object or `impl Trait`, and
# the type a smart pointer holds (`Box<dyn Trait>`: its methods are called through the pointer)
_PLAIN = "[(type_identifier) (scoped_type_identifier) (primitive_type) (array_type)]"
_POINTERS = '"^(Box|Rc|Arc)$"'
_TYPES = (f"{_PLAIN} @bind.type",
          f"(generic_type type: (_) @_outer (#not-match? @_outer {_POINTERS})) @bind.type",
          f"(reference_type type: [{_PLAIN[1:-1]} (generic_type)] @bind.type)",
          "(reference_type type: (dynamic_type trait: (_) @bind.type))",
          "[(dynamic_type trait: (_) @bind.type) (abstract_type trait: (_) @bind.type)]",
          f"(generic_type type: (type_identifier) @_pointer (#match? @_pointer {_POINTERS})"
          f" type_arguments: (type_arguments . [[{_PLAIN[1:-1]} (generic_type)] @bind.type"
          " (dynamic_type trait: (_) @bind.type)]))")
_TYPED = ("(parameter pattern: (identifier) @bind.name type: {})",
          "(let_declaration pattern: (identifier) @bind.name type: {})",
          "(field_declaration name: (field_identifier) @bind.name type: {})")
_BOUND = "(trait_bounds . [(type_identifier) (scoped_type_identifier) (generic_type)] @bind.type)"
_PATH = "[(identifier) (scoped_identifier)]"  # the path a call is made through: a type or a module

SPEC = LanguageSpec(
    name="rust",
    extensions=(".rs",),
    comment_types=frozenset({"line_comment", "block_comment"}),
    leading_skip_types=frozenset({"attribute_item"}),
    block_types=frozenset({"block", "declaration_list", "if_expression", "match_expression",
                           "for_expression", "while_expression", "loop_expression", "match_block"}),
    self_names=frozenset({"self", "Self"}),
    builtin_types=frozenset({"bool", "char", "str", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16",
                             "i32", "i64", "i128", "isize", "f32", "f64", "String", "Vec", "Option", "Result",
                             "Box", "Rc", "Arc", "Fn", "FnMut", "FnOnce", "fn", "[]"}),
    # a closure or a function bound to a name: calling the name calls no definition of its own
    literal_types=(("closure_expression", "fn"), ("generic_function", "fn"), ("scoped_identifier", "fn")),
    # the prelude's variants and `drop` are never the repository's definitions
    ignored_calls=frozenset({"Ok", "Err", "Some", "drop"}),
    # a path's receiver is the path without the name called; `self::a` is the module a beside the caller
    path_separator="::",
    receiver_rewrites=((r"^self::", ""), (r"::", ".")),
    unknown_receivers_call_methods=True,  # `x.m()` calls a method, never a free function
    uncallable_kinds=frozenset({"impl"}),  # `Foo(x)` makes the tuple struct Foo, never calls an impl block
    import_aliases=import_aliases,
    query=definitions("(identifier)", "function_item function", "function_signature_item function")
          + definitions("(type_identifier)", "struct_item struct", "enum_item enum", "union_item union",
                        "trait_item trait", "type_item type")
          + r"""
(mod_item name: (identifier) @name body: (declaration_list)) @definition.module
(macro_definition name: (identifier) @name) @definition.macro
(impl_item type: [(type_identifier) @name
                  (generic_type type: (type_identifier) @name)
                  (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
                  (scoped_type_identifier name: (type_identifier) @name)]) @definition.impl
(call_expression function: [(identifier) @call
                            (generic_function function: (identifier) @call)
                            (scoped_identifier path: [(self) (crate) (super)] name: (identifier) @call)])
(call_expression function: [(field_expression value: (_) @call.receiver field: (field_identifier) @call)
                            (generic_function function: (field_expression value: (_) @call.receiver
                                                                          field: (field_identifier) @call))])
(call_expression function: [(scoped_identifier path: """ + _PATH + r""" name: (identifier) @call) @call.receiver
                            (generic_function function: (scoped_identifier path: """ + _PATH + r"""
                                                                           name: (identifier) @call) @call.receiver)]
  (#match? @call "^[a-z_]"))
(call_expression function: (scoped_identifier path: """ + _PATH + r""" name: (identifier) @call) @call.receiver
  (#match? @call.receiver "^[a-z_][a-z_0-9:]*::[A-Z][A-Za-z0-9_]*$"))
(call_expression function: (scoped_identifier path: [(generic_type type: (_) @call.receiver)
                                                     (bracketed_type (qualified_type alias: (_) @call.receiver))]
                                              name: (identifier) @call))
(macro_invocation macro: (identifier) @call)
(arguments (identifier) @ref)
(arguments (scoped_identifier path: """ + _PATH + r""" name: (identifier) @ref) @ref.receiver (#match? @ref "^[a-z_]"))
(scoped_identifier path: (identifier) @bind.name @bind.type (#match? @bind.name "^[A-Z]"))
(scoped_identifier path: (generic_type type: (type_identifier) @bind.name @bind.type))
(qualified_type alias: (type_identifier) @bind.name @bind.type)
(let_declaration pattern: (identifier) @bind.name
  value: (call_expression function: (scoped_identifier path: [(identifier) (scoped_identifier)] @bind.new
                                                       name: (identifier) @_made)
  (#match? @_made "^(new|default|with_[a-z0-9_]+)$")))
(let_declaration pattern: (identifier) @bind.name
  value: (struct_expression name: [(type_identifier) (scoped_type_identifier)] @bind.new))
(let_declaration pattern: (identifier) @bind.name value: (closure_expression) @bind.literal)
(let_declaration pattern: (identifier) @bind.name
  value: [(generic_function function: (_) @_value) (scoped_identifier name: (identifier) @_value)] @bind.literal
  (#not-eq? @bind.name @_value) (#match? @_value "^[a-z_]"))
(type_parameter name: (type_identifier) @bind.name bounds: """ + _BOUND + r""")
(where_predicate left: (type_identifier) @bind.name bounds: """ + _BOUND + r""")
(use_declaration argument: (_) @import.module) @import
(extern_crate_declaration name: (identifier) @import.module) @import
""" + "".join(site.format(shape) + "\n" for site in _TYPED for shape in _TYPES),
)
