"""What a chunk's file is to the project: its code, a test, an example, documentation, generated
code, code vendored from elsewhere, or configuration; one rule, read by ranking and shown in
answers.

From structure, not from the words of the text: the file's language (a document language is
documentation; a data or build format, configuration: what the program or its build reads, not
what it does), the layout conventions of test and example code across ecosystems (a `tests/`
or `__tests__/` folder, `foo_test.go` beside `foo.go`, `FooTest.java`, `foo.spec.ts`, Maven's
`src/test/`), the names code generators give their output (`*.pb.go`, `*_pb2.py`, `*.g.dart`),
and vendored folders (`vendor/`, `third_party/`, `node_modules/` by name here; copies and nested
projects by the index's file list, indexing/vendored.py, at search time).
"""

from __future__ import annotations

import re
from functools import lru_cache

CODE, TEST, EXAMPLE, DOCUMENTATION, GENERATED, VENDORED, CONFIGURATION = CLASSES = (
    "code", "test", "example", "documentation", "generated", "vendored", "configuration")
CLASS_NUMBERS = {name: number for number, name in enumerate(CLASSES)}  # as the catalog stores them
DOCUMENT_LANGUAGES = frozenset({"markdown", "rst", "text", "asciidoc", "org"})
# data and build formats (ingest/languages TEXT_LANGUAGES); not languages that hold a program in
# some repositories (Terraform's HCL, Nix, Gradle's Groovy, protobuf schemas)
CONFIGURATION_LANGUAGES = frozenset({"yaml", "toml", "json", "ini", "xml", "make", "cmake", "dockerfile", "cabal"})

VENDORED_PATH = re.compile(r"(^|/)(vendor|third_party|node_modules)(/|$)")
TEST_PATH = re.compile(r"(^|/)(tests?|specs?|__tests__|testing|testdata|fixtures?|benchmarks?|benches)(/|$)|"
                       r"(^|/)(test_[^/]*|[^/]*_(test|spec)\.[a-z]+|[^/]*\.(test|spec)\.[a-z]+|conftest\.py)$",
                       re.IGNORECASE)
TEST_CLASS_FILE = re.compile(r"(^|/)[A-Z][A-Za-z0-9]*(Test|Tests|Spec|Specs)\.[a-z]+$")  # FooTest.java, not latest.py
# `example` alone is left out on purpose (Java's com/example/... packages are real code); code in
# a documentation folder is its examples (fastapi's docs_src/, Go's docs/ snippets)
EXAMPLE_PATH = re.compile(r"(^|/)(_?examples|samples|demos?|docs?|docs_src)(/|$)", re.IGNORECASE)
GENERATED_PATH = re.compile(r"(\.pb\.go|_pb2(_grpc)?\.pyi?|\.pb\.(cc|h)|_msgp\.go|\.g\.dart|"
                            r"\.freezed\.dart|\.generated\.[a-z]+|\.min\.(js|css)|\.designer\.cs)$", re.IGNORECASE)


@lru_cache(maxsize=65536)
def content_class(path: str, language: str) -> str:
    """The class of a file's chunks, by its path and language."""
    if VENDORED_PATH.search(path):
        return VENDORED
    if language in DOCUMENT_LANGUAGES:
        return DOCUMENTATION
    if GENERATED_PATH.search(path):
        return GENERATED
    if TEST_PATH.search(path) or TEST_CLASS_FILE.search(path):
        return TEST
    if EXAMPLE_PATH.search(path):
        return EXAMPLE
    if language in CONFIGURATION_LANGUAGES:
        return CONFIGURATION
    return CODE


def is_secondary_path(path: str) -> bool:
    """By its path alone, not the project's own code: a test, example, benchmark, fixture, a file
    in a documentation folder, generated or vendored (what grep and exact matches put after it)."""
    return content_class(path, "") != CODE


def aims_at_secondary(path_glob: str) -> bool:
    """Whether a path filter names tests, examples, documents or vendored code (`tests/**`): a
    search kept there does not push them down."""
    return bool(path_glob) and is_secondary_path(path_glob.rstrip("*/") + "/x")
