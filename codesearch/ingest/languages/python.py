"""Python: classes, functions (methods inside classes), docstrings, imports, calls."""

from . import LanguageSpec, definitions

SPEC = LanguageSpec(
    name="python",
    extensions=(".py", ".pyi", ".pyw"),
    docstring_in_body=True,
    signature_includes_wrapper=False,  # decorators stay out of the signature
    wrapper_types=frozenset({"decorated_definition"}),
    block_types=frozenset({"block", "if_statement", "for_statement", "while_statement",
                           "try_statement", "with_statement", "match_statement"}),
    query=definitions("(identifier)", "class_definition class", "function_definition function")
          + r"""
(call function: [(identifier) @call (attribute attribute: (identifier) @call)])
(import_statement name: [(dotted_name) @import.module (aliased_import name: (dotted_name) @import.module)]) @import
(import_from_statement module_name: [(dotted_name) (relative_import)] @import.module) @import
""",
)
