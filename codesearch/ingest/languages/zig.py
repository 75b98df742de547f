"""Zig: functions, struct/enum/union containers bound to names, @import."""

from . import LanguageSpec

CONTAINER = r"""(VarDecl variable_type_function: (IDENTIFIER) @name
  (ErrorUnionExpr (SuffixExpr (ContainerDecl (ContainerDeclType "{kw}")))))"""

SPEC = LanguageSpec(
    name="zig",
    extensions=(".zig",),
    comment_types=frozenset({"doc_comment", "line_comment", "container_doc_comment"}),
    body_fields=(),
    body_types=frozenset({"Block", "ErrorUnionExpr"}),
    block_types=frozenset({"Block", "ContainerDecl"}),
    query="\n".join([
        "(Decl (FnProto function: (IDENTIFIER) @name)) @definition.function",
        f"(Decl {CONTAINER.format(kw='struct')}) @definition.struct",
        f"(Decl {CONTAINER.format(kw='enum')}) @definition.enum",
        f"(Decl {CONTAINER.format(kw='union')}) @definition.union",
        "(TestDecl (STRINGLITERALSINGLE) @name) @definition.test",
        "(SuffixExpr variable_type_function: (IDENTIFIER) @call . (FnCallArguments))",
        "(FieldOrFnCall function_call: (IDENTIFIER) @call)",
        r"""(VarDecl (ErrorUnionExpr (SuffixExpr (BUILTINIDENTIFIER) @_b (#eq? @_b "@import")
  (FnCallArguments (ErrorUnionExpr (SuffixExpr (STRINGLITERALSINGLE) @import.module)))))) @import""",
    ]),
)
