"""Go: functions, methods with receivers, struct/interface/other type declarations, imports, and
what a call's receiver is bound to (typed parameters and receivers, declarations, composite
literals, `new(T)`, type assertions, the results of calls as their signatures declare them,
struct fields, imported packages). A bare call is a function of the caller's own package."""

from . import LanguageSpec


def import_aliases(text: str, module: str) -> list[tuple[str, str, str]]:
    """`ctx "context"` binds ctx; `"net/http"` binds http (a `/vN` major version is skipped)."""
    words = text.split()
    if len(words) > 1 and words[0] not in ("_", "."):
        return [(words[0], module, "")]
    parts = module.split("/")
    last = parts[-1] if not (len(parts) > 1 and parts[-1][:1] == "v" and parts[-1][1:].isdigit()) else parts[-2]
    return [(last.removeprefix("go-").split(".")[0], module, "")] if last else []


_BUILTIN_TYPES = frozenset({"string", "bool", "byte", "rune", "int", "int8", "int16", "int32", "int64", "uint",
                            "uint8", "uint16", "uint32", "uint64", "uintptr", "float32", "float64", "complex64",
                            "complex128", "error", "any", "[]"})
_BUILTIN_FUNCTIONS = frozenset({"append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len",
                                "make", "max", "min", "new", "panic", "print", "println", "real", "recover"})
# the first result of `func (r *T) Name(params) RESULT` or `... (RESULT, error)` / `(name RESULT, ...)`
_RESULT_TYPE = r"\)\s+(?:\(\s*(?:[A-Za-z_]\w*\s+)?)?(\*?[A-Za-z_][\w.]*|\[\][\w.*]+|map\[)[^()]*\)?\s*$"

SPEC = LanguageSpec(
    name="go",
    extensions=(".go",),
    wrapper_types=frozenset({"type_declaration"}),
    builtin_types=_BUILTIN_TYPES,
    builtin_functions=_BUILTIN_FUNCTIONS,
    result_type=_RESULT_TYPE,
    bare_calls_in_package=True,
    unknown_receivers_call_methods=True,
    import_aliases=import_aliases,
    body_types=frozenset({"func_literal"}),
    block_types=frozenset({"block", "if_statement", "for_statement", "expression_switch_statement",
                           "type_switch_statement", "select_statement"}),
    query=r"""
(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: [
    (type_identifier) @receiver
    (pointer_type (type_identifier) @receiver)
    (generic_type type: (type_identifier) @receiver)
    (pointer_type (generic_type type: (type_identifier) @receiver))]))
  name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name type: [(type_identifier) (qualified_type) (function_type)
  (map_type) (slice_type) (array_type) (pointer_type) (channel_type) (generic_type)]) @definition.type
(type_alias name: (type_identifier) @name) @definition.type
(short_var_declaration left: (expression_list . (identifier) @name)
  right: (expression_list . (func_literal))) @definition.function
(call_expression function: (identifier) @call)
(call_expression function: (selector_expression operand: (_) @call.receiver field: (field_identifier) @call))
(argument_list (selector_expression operand: (_) @ref.receiver field: (field_identifier) @ref))
(argument_list (identifier) @ref)
(parameter_declaration name: (identifier) @bind.name type: (_) @bind.type)
(var_spec name: (identifier) @bind.name type: (_) @bind.type)
(field_declaration name: (field_identifier) @bind.name type: (_) @bind.type)
(short_var_declaration left: (expression_list . (identifier) @bind.name)
  right: (expression_list . [(composite_literal type: (_) @bind.new)
                             (unary_expression operand: (composite_literal type: (_) @bind.new))]))
(short_var_declaration left: (expression_list . (identifier) @bind.name)
  right: (expression_list . [(call_expression) @bind.type (type_assertion_expression type: (_) @bind.type)]))
(short_var_declaration left: (expression_list (identifier) @bind.name)
  right: (expression_list . (call_expression) .)) @bind.type
(range_clause left: (expression_list (identifier) @bind.name) ":=" right: (_)) @bind.type
(var_spec name: (identifier) @bind.name !type value: (expression_list . (call_expression) @bind.type))
(import_spec path: (interpreted_string_literal) @import.module) @import
""",
)
