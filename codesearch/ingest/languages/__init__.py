"""Per-language knowledge, kept as data: one module per language defines a LanguageSpec.

A spec names the tree-sitter grammar, the file extensions, and one tree-sitter query whose
captures the parser understands (all matching happens in C, not in Python loops):

- ``@definition.KIND`` (KIND: function, method, class, struct, interface, trait, enum, module,
  namespace, impl, type, object, ...) around a definition, with ``@name`` for its name and
  optionally ``@receiver`` (Go methods, Rust impls) for the type it belongs to (`definitions`
  writes the common form, a definition with a `name` field);
- ``@call`` on the callee's name node of a call site;
- ``@import`` on an import statement, optionally ``@import.module`` on the module it names;
- ``@call.receiver`` beside ``@call``: what the called name is looked up on (`mx.pool` in
  `mx.pool.Get()`); ``@ref`` (with ``@ref.receiver``) on a name used, not called (a method
  value, a function passed as an argument, a decorator);
- ``@bind.name`` on a name given a type in its scope, with ``@bind.type`` (an annotation, a
  declaration, a typed parameter or field), ``@bind.new`` (the type a constructor names) or
  ``@bind.literal`` (a literal of a built-in type, named by `literal_types`) or ``@bind.same``
  (another name, whose type it takes), or ``@bind.value`` (a name declared as a value, whatever
  its type: a bare name that reaches it is no definition); a type's name bound
  to a type (a generic parameter to its bound, `T: Trait`) stands for that type.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from ...vocabulary import CONTAINER_KINDS


@dataclass(frozen=True)
class LanguageSpec:
    """How to read one language with its tree-sitter grammar."""

    name: str
    extensions: tuple[str, ...]
    query: str
    grammar: str = ""  # the tree-sitter grammar's name where it is not `name`
    filenames: tuple[str, ...] = ()
    comment_types: frozenset[str] = frozenset({"comment"})
    # previous siblings of these types whose text matches doc_prefixes count as documentation
    doc_node_types: frozenset[str] = frozenset()
    doc_prefixes: tuple[str, ...] = ()
    # previous siblings passed over on the way to a definition's comments (attributes, signatures)
    leading_skip_types: frozenset[str] = frozenset()
    docstring_in_body: bool = False  # Python-style: first string statement of the body
    # (pattern, replacement) pairs applied to documentation: markup to drop (C#'s XML doc tags)
    doc_rewrites: tuple[tuple[str, str], ...] = ()
    # nodes that wrap a definition and own its decorators, export keyword or template header
    wrapper_types: frozenset[str] = frozenset()
    body_fields: tuple[str, ...] = ("body",)
    signature_includes_wrapper: bool = True  # "export function f", "template <T> class C"
    body_types: frozenset[str] = frozenset()  # body as a child of this type, where no field names it
    # node types whose children are statements worth splitting an oversized chunk at
    block_types: frozenset[str] = frozenset()
    # nodes that open a scope of their own (`{...}`): a function or class declared in one that is
    # no definition's body (a callback's) is seen only there (ingest/block_names.py)
    lexical_blocks: frozenset[str] = frozenset()
    # a function defined inside one of these container kinds is a method
    method_parent_kinds: frozenset[str] = CONTAINER_KINDS - {"module", "namespace"}
    qualifier_separators: tuple[str, ...] = ("::", ".")
    ignored_calls: frozenset[str] = frozenset()  # keywords that parse as calls (Elixir's def, ...)
    call_parent_excluded: frozenset[str] = frozenset()  # call-like syntax that is not a call
    self_names: frozenset[str] = frozenset()  # a receiver that is the caller's own object (self, this)
    # (pattern, replacement) pairs that spell a receiver, a bound name or a type the way scopes read
    # them, `.` between parts: PHP's `$this->x` as `$this.x`, Rust's `a::B` as `a.B`, Ruby's `@x` as `self.x`
    receiver_rewrites: tuple[tuple[str, str], ...] = ()
    implicit_receiver: str = ""  # what a call with no receiver is made on inside a class (Ruby: self)
    # a receiver spelled with this (Rust's `::`) is a path, its last part the name called: a
    # head no binding or import names is a module or crate (`crate::a::f()`, `syn::Ident::new()`)
    path_separator: str = ""
    builtin_types: frozenset[str] = frozenset()  # types whose methods are never the repository's
    # names a bare call reaches in the language's built-ins unless the file defines or imports them
    builtin_functions: frozenset[str] = frozenset()
    # methods of the built-in types: one called on a receiver nothing is known of is theirs
    builtin_methods: frozenset[str] = frozenset()
    # a name defined again in one scope replaces the earlier definition (Python: `@overload` stubs,
    # a function defined once per platform): a call reaches the last
    redefinition_replaces: bool = False
    # a call on a receiver nothing is known of goes to a method (a definition inside a class) that
    # the caller's file or the nearest files its imports reach define, not to a guess by name
    unknown_receivers_call_methods: bool = False
    constructor_name: str = ""  # the method a class's constructor is (`constructor`): `new Foo()` calls it
    uncallable_kinds: frozenset[str] = frozenset()  # definitions that are types alone, never called
    # a bare name is the file's own or an import's (ES modules): one that only files the file does
    # not import define is a local value or a global, never a definition there
    names_from_imports: bool = False
    literal_types: tuple[tuple[str, str], ...] = ()  # literal node type -> its built-in type
    constructors_capitalized: bool = False  # a call binds a type only when the callee is capitalized
    # a capitalized name that is no variable is a type (Java, C#, Kotlin): a receiver that is one
    # calls a static member of that type, a built-in type's never the repository's
    capitalized_types: bool = False
    # a receiver that is the caller's bases, or the keyword a class declaration names its base
    # class with, bound to that class (`extends`: `super.m()` is the base's m)
    super_names: frozenset[str] = frozenset({"super"})
    # methods may be declared outside their type (C#, Kotlin): a regular expression whose group 1
    # is the type a method's signature extends; a value of a built-in type or of a type this
    # repository does not define may still call such a method of the repository
    extension_receiver: str = ""
    # a regular expression whose group 1 is the type a function's signature says it returns (its
    # first result): a receiver that is a call, or a name bound to one, is a value of that type
    result_type: str = ""
    # the same for a language whose results are read only off the file's own signatures (Python's
    # `-> Foo`: `x = self.make()` or `x = make()` is a Foo where make is the file's own)
    returns_annotation: str = ""
    # a bare call names a function of the caller's own package (the files of its folder) or a
    # function literal the caller's own body declares, never a method or another package's (Go)
    bare_calls_in_package: bool = False
    # an import statement's text and module -> (name it binds, module, member imported or "")
    import_aliases: Callable[[str, str], list[tuple[str, str, str]]] | None = None

    def __post_init__(self) -> None:
        if not self.grammar:
            object.__setattr__(self, "grammar", self.name)


def definitions(name: str, *node_kinds: str) -> str:
    """Query patterns for definitions found by their `name` field, which holds `name` (a node
    pattern: `(identifier)`, `[(constant) (scope_resolution)]`): one per "NODE KIND", in order
    (where two patterns match one node, the first wins)."""
    return "".join(f"({node} name: {name} @name) @definition.{kind}\n"
                   for node, kind in (entry.split() for entry in node_kinds))


# module name in this package -> its spec; keep alphabetical
_MODULES = ("bash", "c", "cpp", "csharp", "elixir", "go", "haskell", "java", "javascript",
            "kotlin", "lua", "php", "python", "ruby", "rust", "scala", "swift", "tsx",
            "typescript", "zig")

# Languages without a spec here are indexed as text (line windows): extension -> language name.
TEXT_LANGUAGES: dict[str, str] = {
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown", ".rst": "rst", ".txt": "text",
    ".adoc": "asciidoc", ".org": "org",
    ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json", ".ini": "ini",
    ".cfg": "ini", ".xml": "xml", ".html": "html", ".htm": "html", ".css": "css",
    ".scss": "scss", ".sql": "sql", ".proto": "protobuf", ".graphql": "graphql",
    ".gradle": "groovy", ".groovy": "groovy", ".cmake": "cmake", ".vue": "vue", ".svelte": "svelte",
    ".dart": "dart", ".r": "r", ".jl": "julia", ".pl": "perl", ".pm": "perl", ".erl": "erlang",
    ".hrl": "erlang", ".clj": "clojure", ".ml": "ocaml", ".mli": "ocaml", ".nim": "nim",
    ".fs": "fsharp", ".vim": "vim", ".el": "elisp", ".m": "objc", ".mm": "objc",
    ".tf": "hcl", ".hcl": "hcl", ".nix": "nix", ".ps1": "powershell", ".bat": "batch",
    ".cabal": "cabal", ".mk": "make", ".zon": "zig",
}
TEXT_FILENAMES: dict[str, str] = {
    "Makefile": "make", "makefile": "make", "GNUmakefile": "make", "Dockerfile": "dockerfile",
    "CMakeLists.txt": "cmake", "Gemfile": "ruby", "Rakefile": "ruby", "README": "text",
}


@lru_cache(maxsize=1)
def all_specs() -> tuple[LanguageSpec, ...]:
    return tuple(importlib.import_module(f"{__name__}.{m}").SPEC for m in _MODULES)


@lru_cache(maxsize=1)
def _by_extension() -> dict[str, LanguageSpec]:
    table: dict[str, LanguageSpec] = {}
    for spec in all_specs():
        for ext in spec.extensions:
            table[ext] = spec
        for name in spec.filenames:
            table[name] = spec
    return table


def _suffix(name: str) -> str:
    """PurePosixPath(name).suffix, lowered, without building a path (the walker asks per file)."""
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


def _spec_for_name(name: str, suffix: str) -> LanguageSpec | None:
    """By the whole file name first (`Makefile`), then by its suffix."""
    table = _by_extension()
    return table.get(name) or table.get(suffix)


def spec_for_path(path: str) -> LanguageSpec | None:
    """The grammar-backed language of a file, or None (asked again and again by call resolution:
    cached by file name, not by path)."""
    return _spec_for_file_name(path.rpartition("/")[2])


@lru_cache(maxsize=1024)
def _spec_for_file_name(name: str) -> LanguageSpec | None:
    return _spec_for_name(name, _suffix(name))


def language_for_name(name: str) -> str | None:
    """Language name for a file name (its last path component), or None to skip it."""
    suffix = _suffix(name)
    spec = _spec_for_name(name, suffix)
    if spec is not None:
        return spec.name
    return TEXT_FILENAMES.get(name) or TEXT_LANGUAGES.get(suffix)


def language_for_path(path: str) -> str | None:
    """Language name for any indexable file (grammar-backed or text), or None to skip it."""
    return language_for_name(PurePosixPath(path).name)


def spec_by_name(name: str) -> LanguageSpec | None:
    return _by_name().get(name)


@lru_cache(maxsize=1)
def _by_name() -> dict[str, LanguageSpec]:
    """Language name -> its spec (asked per chunk by the extraction workers)."""
    return {spec.name: spec for spec in reversed(all_specs())}  # the first of a name wins, as a scan found


def known_languages() -> set[str]:
    return {s.name for s in all_specs()} | set(TEXT_LANGUAGES.values()) | set(TEXT_FILENAMES.values())
