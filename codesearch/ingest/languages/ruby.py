"""Ruby: classes, modules, methods, singleton methods, require; and what a call's receiver is
bound to (`self`, a bare call inside a class, `@x = Foo.new`, `Foo.m`, `method(:m)`)."""

from . import LanguageSpec, definitions


def import_aliases(text: str, module: str) -> list[tuple[str, str, str]]:
    """`require` and `require_relative` load a file and bind no name (its constants are global)."""
    return []


_CONSTANT = "[(constant) (scope_resolution name: (constant))]"

SPEC = LanguageSpec(
    name="ruby",
    extensions=(".rb", ".rake", ".gemspec"),
    filenames=("Rakefile", "Gemfile"),
    block_types=frozenset({"body_statement", "if", "unless", "while", "case", "begin", "do_block", "block"}),
    body_types=frozenset({"body_statement"}),
    qualifier_separators=("::", ".", ":"),  # `:` for a symbol naming a method (`method(:m)`)
    self_names=frozenset({"self"}),
    implicit_receiver="self",
    receiver_rewrites=((r"^@(?=\w)", "self."), (r"::", ".")),  # `@x` is self's field x
    import_aliases=import_aliases,
    query=definitions("[(constant) (scope_resolution)]", "class class", "module module")
          + r"""
(singleton_class value: (_) @name) @definition.class
"""
          + definitions("(_)", "method function", "singleton_method method")
          + r"""
(call !receiver method: (identifier) @call)
(call receiver: (_) @call.receiver method: (identifier) @call (#not-eq? @call "new"))
(call receiver: """ + _CONSTANT + r""" @call method: (identifier) @_new (#eq? @_new "new"))
(call !receiver method: (identifier) @_method (#eq? @_method "method")
  arguments: (argument_list . (simple_symbol) @ref .))
(call receiver: (constant) @bind.name @bind.type)
(assignment left: [(identifier) (instance_variable)] @bind.name
  right: (call receiver: """ + _CONSTANT + r""" @bind.new method: (identifier) @_new (#eq? @_new "new")))
(call method: (identifier) @_req (#match? @_req "^(require|require_relative|load|autoload)$")
  arguments: (argument_list [(string) (simple_symbol)] @import.module)) @import
""",
    ignored_calls=frozenset({"require", "require_relative", "attr_reader", "attr_accessor",
                             "attr_writer", "include", "extend", "private", "protected", "public", "method"}),
)
