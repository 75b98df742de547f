"""Python calls resolved as a type-aware tool (jedi) would: `super()` through the class's bases,
built-in functions and the built-in types' methods on unknown receivers linking nothing here, a
call on an unknown receiver going to methods only, a stub redefined later (`@overload`) giving way
to the definition that replaces it, a module's own functions before its classes' methods."""

from __future__ import annotations

import pytest
from conftest import direct_relations, keyword_indexed_files

from codesearch.indexing.index import Index

FILES = {
    "pkg/__init__.py": "",
    "pkg/base.py": (
        "class Base:\n"
        "    def setup(self):\n        return 1\n\n"
        "    def get(self, key):\n        return key\n\n\n"
        "def isatty(stream):\n    return False\n\n\n"
        "class Wrapper:\n"
        "    def isatty(self):\n        return True\n"
    ),
    "pkg/globals.py": ("import contextvars\n\ncurrent = contextvars.ContextVar('current')\n"
                       "_private = contextvars.ContextVar('private')\n"),
    "pkg/app.py": (
        "import typing as t\n"
        "from click import Group\n"
        "from .base import Base, isatty\n"
        "from .globals import _private, current\n\n\n"
        "def open(path):\n    return path\n\n\n"
        "class Middle(Base):\n"
        "    pass\n\n\n"
        "class App(Middle):\n"
        "    def setup(self):\n"
        "        super().setup()\n"
        "        self.get('x')\n"
        "        return isatty(None)\n\n"
        "    def run(self, options):\n"
        "        options.get('x')\n"
        "        current.get()\n"
        "        _private.get()\n"
        "        dict.get(options, 'y')\n"
        "        with_builtin()\n"
        "        return options.run()\n\n\n"
        "class Plain:\n"
        "    def __init__(self):\n"
        "        super().__init__()\n\n\n"
        "class Cli(Group):\n"
        "    def group(self):\n"
        "        return super().group()  # type: ignore[no-any-return]\n\n\n"
        "class Other:\n"
        "    def group(self):\n        return 1\n\n"
        "    def __init__(self):\n        return None\n\n\n"
        "def with_builtin():\n"
        "    return len(sorted([]))\n\n\n"
        "@t.overload\n"
        "def locate(name: str) -> str: ...\n\n\n"
        "@t.overload\n"
        "def locate(name: int) -> int: ...\n\n\n"
        "def locate(name):\n    return name\n\n\n"
        "def main():\n"
        "    return locate('x')\n"
    ),
    "pkg/tags.py": (
        "class Serializer:\n"
        "    def tag(self, value):\n        return value\n\n\n"
        "class Tag:\n"
        "    def __init__(self, serializer: Serializer):\n"
        "        self.serializer = serializer\n\n"
        "    def tag(self, value):\n        return value\n\n\n"
        "class TagList(Tag):\n"
        "    def to_json(self, value):\n"
        "        found = self.serializer\n"
        "        return found.tag(self.serializer.tag(value))\n\n"
        "    def serializer_of(self) -> 'Serializer':\n        return self.serializer\n\n"
        "    def tag_twice(self, value):\n"
        "        made = self.serializer_of()\n"
        "        other = make_serializer()\n"
        "        return made.tag(other.tag(value))\n\n\n"
        "def make_serializer() -> Serializer | None:\n    return Serializer()\n"
    ),
    "pkg/tools.py": (
        "from .app import App\n\n\n"
        "def run():\n    return run\n\n\n"
        "def start(thing):\n"
        "    with open('f') as f:\n        f.read()\n"
        "    return thing.run()\n"
    ),
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    built = keyword_indexed_files(tmp_path_factory.mktemp("python_calls") / "repo", FILES)
    yield built
    built.close()


def _callees(index: Index, name: str) -> dict[tuple[str, str], str]:
    """(path, qualified name) -> resolution of the direct callees of `name`."""
    return {(chunk.path, chunk.qualified_name): how for chunk, how in direct_relations(index, name, "callees")}


def test_super_goes_through_the_bases_of_this_file_to_the_one_that_defines_the_method(index):
    callees = _callees(index, "App.setup")
    assert ("pkg/base.py", "Base.setup") in callees
    assert ("pkg/app.py", "App.setup") not in callees


def test_super_of_a_class_without_bases_or_with_a_base_from_elsewhere_links_nothing_here(index):
    assert _callees(index, "Plain.__init__") == {}
    assert _callees(index, "Cli.group") == {}


def test_a_method_whose_last_line_ends_in_a_comment_is_still_its_class(index):
    rows = index.catalog.db.execute("SELECT qualified_name, kind FROM chunks WHERE name = 'group'").fetchall()
    assert sorted(tuple(r) for r in rows) == [("Cli.group", "method"), ("Other.group", "method")]


def test_a_method_the_class_inherits_is_its_bases(index):
    assert ("pkg/base.py", "Base.get") in _callees(index, "App.setup")


def test_built_in_functions_and_methods_of_built_in_types_link_nothing_here(index):
    callees = _callees(index, "App.run")
    assert ("pkg/base.py", "Base.get") not in callees  # a dict's get on an unknown receiver
    assert _callees(index, "with_builtin") == {}  # len and sorted: no definition of this repository
    assert ("pkg/app.py", "open") not in _callees(index, "start")  # the built-in open: tools.py defines none


def test_an_unknown_receiver_calls_a_method_never_a_function(index):
    callees = _callees(index, "start")
    assert ("pkg/tools.py", "run") not in callees
    assert ("pkg/app.py", "App.run") in callees


def test_a_function_imported_from_a_module_is_its_own_not_a_method_of_the_same_name(index):
    callees = _callees(index, "App.setup")
    assert ("pkg/base.py", "isatty") in callees
    assert ("pkg/base.py", "Wrapper.isatty") not in callees


def test_overload_stubs_give_way_to_the_definition_that_replaces_them(index):
    callees = _callees(index, "main")
    assert list(callees) == [("pkg/app.py", "locate")]
    line = index.catalog.db.execute(
        "SELECT c.start_line FROM chunks c JOIN edges e ON e.dst = c.rid JOIN chunks s ON s.rid = e.src "
        "WHERE s.name = 'main' AND c.name = 'locate'").fetchall()
    assert [row[0] for row in line] == [FILES["pkg/app.py"].splitlines().index("def locate(name):") + 1]


def test_the_package_the_indexed_folder_is_names_its_own_init(tmp_path):
    """`from pkg import Model` where the indexed folder is `pkg` itself: `__init__.py` at the top,
    which re-exports the class; its method is the one called. `from . import model` beside it is
    the module model.py."""
    index = keyword_indexed_files(tmp_path / "pkg", {
        "__init__.py": "from pkg.model import Model\n",
        "model.py": "class Model:\n    def load(self):\n        return 1\n",
        "train.py": "from pkg import Model\n\n\ndef fit():\n    return Model.load()\n",
        "check.py": "from . import model\n\n\ndef check(x):\n    return isinstance(x, model.Model)\n"})
    try:
        assert _callees(index, "fit") == {("model.py", "Model.load"): "type"}
        assert _callees(index, "check") == {("model.py", "Model"): "import"}
    finally:
        index.close()


def test_a_field_assigned_a_typed_parameter_has_its_type_in_subclasses_too(index):
    assert _callees(index, "TagList.to_json") == {("pkg/tags.py", "Serializer.tag"): "type"}


def test_a_value_returned_by_the_files_own_annotated_function_has_that_type(index):
    assert _callees(index, "TagList.tag_twice") == {("pkg/tags.py", "Serializer.tag"): "type",
                                                    ("pkg/tags.py", "TagList.serializer_of"): "exact",
                                                    ("pkg/tags.py", "make_serializer"): "exact"}
