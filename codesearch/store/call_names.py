"""What names alone say in call resolution, before any type is known: the scope a caller is in,
whether a definition is in sight of it, and whether an import statement mentions a name."""

from __future__ import annotations

import re

IMPORT_WORD = re.compile(r"\w+")


def scope_of(caller_qualified: str) -> str:
    """The enclosing scope of a caller (`Outer.method` -> `Outer`): calls prefer definitions there."""
    return caller_qualified.rsplit(".", 1)[0] if "." in caller_qualified else ""


def seen_from(qualified_name: str, scope: str) -> bool:
    """Whether a definition is in sight of calls made in `scope`: at the top of its file, or
    inside a definition that encloses them."""
    parent = qualified_name.rpartition(".")[0]
    return not parent or scope == parent or scope.startswith(parent + ".")


def mentions(name: str, import_texts: list[str], import_words: frozenset[str]) -> bool:
    """Whether an import statement names `name` as a whole word."""
    if IMPORT_WORD.fullmatch(name):
        return name in import_words
    return any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", t) for t in import_texts)
