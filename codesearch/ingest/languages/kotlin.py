"""Kotlin: classes, interfaces, enum and data classes, objects, functions, type aliases, imports,
and what a call's receiver is bound to (`this`, `super` through the class's superclass, typed
parameters and properties, constructor `val` properties, `val x = Foo()`, imported and named
classes), callable references."""

import re

from . import LanguageSpec

_IMPORT = re.compile(r"^import\s+([\w.`]+?)(?:\.\*|\s+as\s+(\w+))?\s*;?$")


def import_aliases(text: str, module: str) -> list[tuple[str, str, str]]:
    """`import a.b.C` binds C (member C of package a.b), `import a.b.C as D` binds D; a
    wildcard binds nothing."""
    found = _IMPORT.match(text.strip())
    if not found or text.rstrip().endswith("*"):
        return []
    qualifier, _, last = found.group(1).replace("`", "").rpartition(".")
    return [(found.group(2) or last, qualifier, last)] if qualifier else []


# an extension function's signature: the type before its name (`fun <T> Flow<T>.collect(`)
_EXTENDS = r"\bfun\s+(?:<[^>]*>\s+)?(?:[\w.]+\.)?(\w+)(?:<[^()]*?>)?\??\.[`\w]+\s*\("

SPEC = LanguageSpec(
    name="kotlin",
    extensions=(".kt", ".kts"),
    comment_types=frozenset({"comment", "multiline_comment", "line_comment"}),
    body_fields=(),
    body_types=frozenset({"class_body", "function_body", "enum_class_body"}),
    block_types=frozenset({"class_body", "function_body", "statements", "enum_class_body",
                           "control_structure_body", "block"}),
    self_names=frozenset({"this"}),
    super_names=frozenset({"super", ":"}),
    capitalized_types=True,
    constructors_capitalized=True,
    extension_receiver=_EXTENDS,
    import_aliases=import_aliases,
    query=r"""
(class_declaration "interface" (type_identifier) @name) @definition.interface
(class_declaration "enum" (type_identifier) @name) @definition.enum
(class_declaration (type_identifier) @name) @definition.class
(object_declaration (type_identifier) @name) @definition.object
(companion_object) @definition.object @name
(function_declaration (simple_identifier) @name) @definition.function
(type_alias (type_identifier) @name) @definition.type
((call_expression (simple_identifier) @call) (#not-match? @call "^[A-Z]"))
((call_expression (simple_identifier) @call.receiver @call) (#match? @call "^[A-Z]"))
(call_expression (navigation_expression . (_) @call.receiver
                                       (navigation_suffix (simple_identifier) @call)))
(callable_reference . (simple_identifier) @ref)
(callable_reference . (_) @ref.receiver . (simple_identifier) @ref)
(class_parameter (simple_identifier) @bind.name [(user_type) @bind.type (nullable_type (user_type) @bind.type)])
(parameter (simple_identifier) @bind.name [(user_type) @bind.type (nullable_type (user_type) @bind.type)])
(variable_declaration (simple_identifier) @bind.name [(user_type) @bind.type (nullable_type (user_type) @bind.type)])
(property_declaration (variable_declaration (simple_identifier) @bind.name .)
  (call_expression . (simple_identifier) @bind.new))
(class_declaration ":" @bind.name (delegation_specifier (constructor_invocation (user_type) @bind.type)))
(import_header (identifier) @import.module) @import
""",
)
