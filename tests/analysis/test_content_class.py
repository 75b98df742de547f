"""Content classes (analysis/content_class.py): what a file is to the project, by its language and
the layout conventions of its ecosystem."""

from __future__ import annotations

import pytest

from codesearch.analysis.content_class import CLASS_NUMBERS, CLASSES, content_class


@pytest.mark.parametrize("path, language, expected", [
    ("src/shop/cart.py", "python", "code"),
    ("com/example/shop/Cart.java", "java", "code"),  # Java's example packages are real code
    ("tests/test_cart.py", "python", "test"),
    ("shop/cart_test.go", "go", "test"),
    ("src/test/java/shop/CartTest.java", "java", "test"),
    ("web/__tests__/cart.tsx", "tsx", "test"),
    ("web/cart.spec.ts", "typescript", "test"),
    ("conftest.py", "python", "test"),
    ("src/latest.py", "python", "code"),  # a word that ends in "test" is no test
    ("app/Contest.java", "java", "code"),
    ("benches/throughput.rs", "rust", "test"),
    ("examples/checkout.py", "python", "example"),
    ("docs_src/dependencies/tutorial008.py", "python", "example"),
    ("docs/snippets/routing.go", "go", "example"),
    ("README.md", "markdown", "documentation"),
    ("docs/de/docs/tutorial/dependencies.md", "markdown", "documentation"),
    ("docs/source/console.rst", "rst", "documentation"),
    ("tests/README.md", "markdown", "documentation"),
    ("api/v1/cart.pb.go", "go", "generated"),
    ("proto/cart_pb2.py", "python", "generated"),
    ("middleware/cache/manager_msgp.go", "go", "generated"),
    ("static/app.min.js", "javascript", "generated"),
    ("vendor/github.com/pkg/errors/errors.go", "go", "vendored"),
    ("web/node_modules/left-pad/index.js", "javascript", "vendored"),
    ("third_party/zlib/inflate.c", "c", "vendored"),
    # data and build formats: what the program or its build reads
    (".github/workflows/tests.yml", "yaml", "configuration"),
    ("pyproject.toml", "toml", "configuration"),
    ("CMakeLists.txt", "cmake", "configuration"),
    ("Makefile", "make", "configuration"),
    ("tests/fixtures/cart.json", "json", "test"),  # a test's data is the test's
    ("infra/main.tf", "hcl", "code"),  # a language that is a repository's program elsewhere
])
def test_the_class_of_a_file(path, language, expected):
    assert content_class(path, language) == expected


def test_class_numbers_are_the_positions_the_catalog_stores():
    assert [CLASS_NUMBERS[name] for name in CLASSES] == list(range(len(CLASSES)))
