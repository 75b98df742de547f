"""Receivers that are calls (`NewRouter().Path("/")`, `new(Route).Host(h)`, `r.NewRoute().Name(n)`):
the hint of such a value names where its type comes from, a type or a function's result, and the
methods called on it on the way; call resolution reads the results off the repository's
signatures (store/call_results.py), since they are often declared in another file.

A chain hint is `BASE>M1>M2...`: BASE is a type hint (`Route@`, `Pool@sync`) or a function's
result (`NewRouter()@` for the caller's own package, `NewRouter()@MODULE` through an import),
and each `>M` is the result of method M called on the value so far; `#N` at its end: the last
call's result N (from 0) where it returns several (`route, err := f()`: err is `f()@#1`).
"""

from __future__ import annotations

import re

STEP = ">"
RESULT = "()"  # after a function's name in a chain's base: the value it returns
INDEX = "#"  # before the position of the result meant, where a call returns several
RANGE = "range "  # before the value a `for k, v := range value` loop's names are bound over
ONE_OF = "|"  # between the hints of the values a name is bound to again and again: theirs where they agree
MAX_ONE_OF = 16  # the most hints ONE_OF joins: more values are not known (each call would store them all)
# the most methods a chain hint follows: a longer one is not known (each name bound to the one
# before it, `v2 := v1.Next()`, would store and resolve the whole chain again at each call)
MAX_STEPS = 16
_NAME = re.compile(r"[A-Za-z_]\w*")
_POSITION = re.compile(INDEX + r"(\d+)$")
_MADE = re.compile(r"^(?:new\((?P<new>[^()]+)\)|&?(?P<literal>[\w.]+)\{.*\})$", re.S)
_OPENS, _CLOSES = "([{", ")]}"


def is_chain(hint: str) -> bool:
    """Whether a hint names a function's result or methods called on the way (or several hints)."""
    return STEP in hint or (RESULT + "@") in hint or ONE_OF in hint


def parts(text: str) -> list[str]:
    """`a.b(x.y).c()` -> [`a`, `b(x.y)`, `c()`]: split at the dots outside brackets and strings."""
    found, depth, start, quote = [], 0, 0, ""
    i = 0
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "\"'`":
            quote = char
        elif char in _OPENS:
            depth += 1
        elif char in _CLOSES:
            depth -= 1
        elif char == "." and depth == 0:
            found.append(text[start:i].strip())
            start = i + 1
        i += 1
    found.append(text[start:].strip())
    return found


def positioned(text: str) -> tuple[str, int]:
    """A value's text without the `#N` at its end, and N (0 where it has none)."""
    found = _POSITION.search(text)
    return (text[:found.start()], int(found.group(1))) if found else (text, 0)


def assigned(name: str, text: str) -> str:
    """What `name` is bound to by a declaration of several names from one call (`a, b := f(x)`:
    b is `f(x)#1`); any other text as it is; "" where the declaration does not name it."""
    left, declares, right = text.partition(":=")
    if not declares:
        return text
    names = [n.strip() for n in left.split(",")]
    if name not in names:
        return ""
    position = names.index(name)
    return right.strip() + (f"{INDEX}{position}" if position else "")


def element_type(type_text: str, position: int) -> str:
    """The type of a `range` loop's name at `position` over a value of this type (`[]*Route`:
    int, then *Route; `map[K]V`: K, then V; `chan T`: T); "" where it is not told."""
    text = type_text.strip().lstrip("*")
    if text.startswith("["):
        close = text.find("]")
        return ("int", text[close + 1:])[position] if close > 0 and position < 2 else ""
    if text.startswith("map["):
        depth = 0
        for i, char in enumerate(text[3:], 3):
            depth += (char == "[") - (char == "]")
            if depth == 0:
                return (text[4:i], text[i + 1:])[position] if position < 2 else ""
        return ""
    if text.startswith(("chan ", "<-chan ")):
        return text.split(" ", 1)[1] if position == 0 else ""
    return ""


def made_type(part: str) -> str | None:
    """The type a value is made of (`new(T)`, `T{...}`, `&T{...}`), or None."""
    found = _MADE.match(part)
    return (found.group("new") or found.group("literal")) if found else None


def called(part: str) -> str | None:
    """The name a part calls (`Path("/x")` -> `Path`), or None where it is no call of a name."""
    name, paren, _ = part.partition("(")
    return name if paren and part.endswith(")") and _NAME.fullmatch(name) else None
