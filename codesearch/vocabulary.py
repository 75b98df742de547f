"""The words every layer shares, defined once: kinds of chunks, search modes, the retrievers each
runs and the names of languages. Light: the CLI imports it to parse its arguments."""

from __future__ import annotations

# --- chunk kinds ----------------------------------------------------------------------------
# chunks that are not named definitions: a whole file, a window of lines, a Markdown section
NON_DEFINITION_KINDS = frozenset({"file", "block", "section"})
# definitions that hold others (a function inside one of these is a method, for most languages)
CONTAINER_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "module", "namespace",
                             "impl", "object", "protocol", "extension", "record", "union", "instance"})
# definitions that name a type: a bare-name query prefers them over functions of the same name
TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "type", "record", "protocol",
                        "object", "union"})
DEFINITION_KINDS = CONTAINER_KINDS | TYPE_KINDS | {"function", "method", "macro", "test"}
ALL_KINDS = DEFINITION_KINDS | NON_DEFINITION_KINDS

# --- search modes and the retrievers each one runs ------------------------------------------
RETRIEVERS_OF_MODE: dict[str, tuple[str, ...]] = {
    "hybrid": ("vector", "keyword", "graph"), "vector": ("vector",), "keyword": ("keyword",),
    "graph": ("graph",)}
MODES = tuple(RETRIEVERS_OF_MODE)
RETRIEVER_NAMES = RETRIEVERS_OF_MODE["hybrid"]
FILE_RANKINGS = ("fuse_first", "per_retriever")  # how `--files` ranks files: search/file_ranking.py

# --- language names ---------------------------------------------------------------------------
# what people call a language (its usual names and file extensions) -> the name the index gives it;
# a name the index gives already is its own, in any case
LANGUAGE_ALIASES = {
    "golang": "go", "py": "python", "python3": "python", "ts": "typescript", "js": "javascript",
    "jsx": "javascript", "mjs": "javascript", "cjs": "javascript", "node": "javascript", "rs": "rust",
    "rb": "ruby", "kt": "kotlin", "kts": "kotlin", "cs": "csharp", "c#": "csharp", "c++": "cpp",
    "cxx": "cpp", "cc": "cpp", "hpp": "cpp", "h": "c", "objective-c": "objc", "objectivec": "objc",
    "sh": "bash", "shell": "bash", "yml": "yaml", "md": "markdown", "ex": "elixir", "exs": "elixir",
    "erl": "erlang", "hs": "haskell", "ml": "ocaml", "fs": "fsharp", "f#": "fsharp", "pl": "perl",
    "ps1": "powershell", "proto": "protobuf", "tf": "hcl", "terraform": "hcl", "el": "elisp",
    "emacs-lisp": "elisp", "clj": "clojure", "jl": "julia", "htm": "html", "adoc": "asciidoc",
    "vimscript": "vim", "docker": "dockerfile", "makefile": "make", "txt": "text", "kotlinscript": "kotlin",
}


def language_name(text: str) -> str:
    """The index's name for a language as a person writes it (`Go`, `golang`, `py`, `c++`)."""
    lowered = text.strip().lower()
    return LANGUAGE_ALIASES.get(lowered, lowered)
