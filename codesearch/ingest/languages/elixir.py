"""Elixir: modules, protocols and impls, def/defp/defmacro (with guards), @doc, alias/import/require/use."""

from . import LanguageSpec

SPEC = LanguageSpec(
    name="elixir",
    extensions=(".ex", ".exs"),
    doc_node_types=frozenset({"unary_operator"}),
    doc_prefixes=("@doc", "@moduledoc", "@typedoc"),
    docstring_in_body=True,  # @moduledoc opens a module's body
    call_parent_excluded=frozenset({"unary_operator"}),  # `@attr value` sets an attribute
    leading_skip_types=frozenset({"unary_operator"}),
    body_fields=(),
    body_types=frozenset({"do_block"}),
    block_types=frozenset({"do_block"}),
    query=r"""
(call target: (identifier) @_kw (#match? @_kw "^(defmodule|defprotocol)$")
  (arguments (alias) @name)) @definition.module
(call target: (identifier) @_kw (#eq? @_kw "defimpl")
  (arguments (alias) @name)) @definition.impl
(call target: (identifier) @_kw (#match? @_kw "^(def|defp|defmacro|defmacrop|defguard|defguardp|defdelegate)$")
  (arguments [(call target: (identifier) @name)
              (identifier) @name
              (binary_operator left: (call target: (identifier) @name))])) @definition.function
(call target: [(identifier) @call (dot right: (identifier) @call)])
(call target: (identifier) @_imp (#match? @_imp "^(alias|import|require|use)$")
  (arguments (alias) @import.module)) @import
""",
    ignored_calls=frozenset({"def", "defp", "defmodule", "defmacro", "defmacrop", "defguard",
                             "defguardp", "defdelegate", "defprotocol", "defimpl", "defstruct",
                             "defexception", "alias", "import", "require", "use", "doc", "moduledoc",
                             "spec", "type", "typedoc", "callback", "impl", "if", "unless", "case",
                             "cond", "with", "for", "raise", "quote", "unquote"}),
)
