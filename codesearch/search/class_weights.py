"""The ranking step that weighs each candidate's content class (analysis/content_class.py) against
the question: the project's code as it came; tests, examples, documentation, generated and
vendored code and configuration down by one factor (a behaviour question is answered by code, and
a page translated into a dozen languages would otherwise fill the top). A class the question names
("how are the tests of X set up", "an example of Y", "the docs of Z", "the CI workflow") is not
weighed down. A report (a bug report, a pasted trace) names no class: it says "test" to tell how a
bug was found, and its documentation retells it in words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from ..analysis.content_class import (
    CODE,
    CONFIGURATION,
    DOCUMENTATION,
    EXAMPLE,
    GENERATED,
    TEST,
    VENDORED,
    content_class,
)
from ..indexing.vendored import in_folders
from ..model import Chunk
from .query import Query


class Candidate(Protocol):
    """What the step reads and changes of a ranked candidate (ranking.Ranked)."""

    chunk: Chunk
    score: float
    notes: list[str]

# the words by which a question asks for a class
ASKING_WORDS = {
    TEST: frozenset({"test", "tests", "testing", "spec", "specs", "fixture", "fixtures", "mock", "mocks",
                     "benchmark", "benchmarks"}),
    EXAMPLE: frozenset({"example", "examples", "demo", "demos", "sample", "samples", "tutorial"}),
    DOCUMENTATION: frozenset({"doc", "docs", "documentation", "documented", "readme", "guide"}),
    VENDORED: frozenset({"vendor", "vendored", "bundled"}),
    GENERATED: frozenset({"generated", "codegen"}),
    CONFIGURATION: frozenset({"config", "configs", "configuration", "yaml", "yml", "toml", "ini", "makefile",
                              "cmake", "dockerfile", "workflow", "workflows", "manifest", "ci"}),
}


def asked_classes(query: Query) -> frozenset[str]:
    """The classes a question names (none for a report)."""
    return frozenset() if query.long else classes_named(query.text)


def classes_named(text: str) -> frozenset[str]:
    """The classes a question's words name ("the cart tests", "an example of checkout")."""
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", text)}
    return frozenset(name for name, asking in ASKING_WORDS.items() if words & asking)


def class_of(path: str, language: str, vendored: frozenset[str]) -> str:
    """A chunk's content class, vendored also where the index's structure says so."""
    return VENDORED if in_folders(path, vendored) else content_class(path, language)


def weigh_classes(query: Query, items: Sequence[Candidate], factor: float, vendored: frozenset[str]) -> None:
    """Each candidate not of the project's code, nor of a class the question names, times `factor`."""
    asked = asked_classes(query)
    for r in items:
        name = class_of(r.chunk.path, r.chunk.language, vendored)
        if name != CODE and name not in asked:
            r.score *= factor
            r.notes.append(f"content class {name} x{factor}")

