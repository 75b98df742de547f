"""Ruby: classes, modules, methods, singleton methods, require."""

from . import LanguageSpec, definitions

SPEC = LanguageSpec(
    name="ruby",
    extensions=(".rb", ".rake", ".gemspec"),
    filenames=("Rakefile", "Gemfile"),
    block_types=frozenset({"body_statement", "if", "unless", "while", "case", "begin", "do_block", "block"}),
    body_types=frozenset({"body_statement"}),
    query=definitions("[(constant) (scope_resolution)]", "class class", "module module")
          + r"""
(singleton_class value: (_) @name) @definition.class
"""
          + definitions("(_)", "method function", "singleton_method method")
          + r"""
(call method: (identifier) @call)
(call method: (identifier) @_req (#match? @_req "^(require|require_relative|load|autoload)$")
  arguments: (argument_list [(string) (simple_symbol)] @import.module)) @import
""",
    ignored_calls=frozenset({"require", "require_relative", "attr_reader", "attr_accessor",
                             "attr_writer", "include", "extend", "private", "protected", "public"}),
)
