"""Bash: functions, commands called, sourced files."""

from . import LanguageSpec

SPEC = LanguageSpec(
    name="bash",
    extensions=(".sh", ".bash", ".bats", ".zsh"),
    block_types=frozenset({"compound_statement", "if_statement", "for_statement", "while_statement",
                           "case_statement"}),
    query=r"""
(function_definition name: (word) @name) @definition.function
(command name: (command_name (word) @call))
(command name: (command_name (word) @_src (#match? @_src "^(source|\\.)$")) argument: (_) @import.module) @import
""",
    ignored_calls=frozenset({"source", ".", "echo", "printf", "local", "export", "return", "exit",
                             "shift", "set", "continue", "break", "cd", "unset", "read", "test", "[", "true", "false"}),
)
