"""Calls resolved by scope, type and import, as a type-aware tool would, on small repositories of
Python, Go and TypeScript: each edge says how it was resolved, and a call through a module or a
type from outside the repository never links to a definition of the same name here."""

from __future__ import annotations

import pytest
from conftest import keyword_indexed_files, related_by_name

from codesearch.indexing.index import Index
from codesearch.search.relations import definitions_named, neighbours
from codesearch.store.call_graph import CallGraph

PYTHON = {
    "pkg/__init__.py": "",
    "pkg/multi.py": "class MultiDict(dict):\n    def update(self, other):\n        return other\n",
    "pkg/base.py": "class Base:\n    def close(self):\n        return 1\n",
    "pkg/app.py": (
        "import json\n"
        "from werkzeug.datastructures import Headers\n"
        "from .multi import MultiDict\n"
        "from .base import Base\n"
        "\n\n"
        "def loads(text):\n    return text\n\n\n"
        "def add(name):\n    return name\n\n\n"
        "class App(Base):\n"
        "    def __init__(self):\n"
        "        self.values = MultiDict()\n"
        "        self.headers = Headers()\n"
        "\n"
        "    def run(self, scope: dict, extra: MultiDict):\n"
        "        scope.update(extra)\n"
        "        plain = {}\n"
        "        plain.update(extra)\n"
        "        self.values.update(extra)\n"
        "        self.headers.add('x')\n"
        "        json.loads('1')\n"
        "        self.helper()\n"
        "        register(self.helper)\n"
        "        return extra.update(scope)\n"
        "\n"
        "    def helper(self):\n"
        "        return super().close()\n"
        "\n\n"
        "def register(callback):\n    return callback\n\n\n"
        "def fact(n):\n    return 1 if n < 2 else n * fact(n - 1)\n"
    ),
}

GO = {
    "go.mod": "module example.com/chi\n",
    "mux.go": (
        "package chi\n\nimport (\n\t\"context\"\n\t\"net/http\"\n\t\"sync\"\n)\n\n"
        "type Context struct{}\n\n"
        "type Runner interface {\n\tRun() error\n}\n\n"
        "type Mux struct {\n\tpool *sync.Pool\n\trunner Runner\n}\n\n"
        "func (mx *Mux) Get(pattern string) {}\n\n"
        "func (mx *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {\n"
        "\trctx, _ := mx.pool.Get().(*Context)\n"
        "\tctx := context.WithValue(r.Context(), \"k\", rctx)\n"
        "\t_ = ctx\n"
        "\tmx.Get(\"/\")\n"
        "\tmx.runner.Run()\n"
        "\thttp.HandlerFunc(mx.routeHTTP)\n"
        "}\n\n"
        "func (mx *Mux) routeHTTP(w http.ResponseWriter, r *http.Request) {}\n"
    ),
    "middleware/with_value.go": "package middleware\n\nfunc WithValue(key, val string) {}\n",
    "job.go": "package chi\n\ntype Job struct{}\n\nfunc (j *Job) Run() error { return nil }\n",
}

TYPESCRIPT = {
    "src/store.ts": "export class Store {\n  get(key: string) { return key; }\n}\n",
    "src/other.ts": "export class Other {\n  get(key: string) { return key; }\n}\n",
    "src/debounce.ts": "export function debounce(f: any) { return f; }\n",
    "src/cache.ts": (
        "import { Store } from './store';\n"
        "import debounce from 'lodash';\n\n"
        "export class Cache {\n"
        "  private store: Store;\n"
        "  constructor() { this.store = new Store(); }\n"
        "  read(key: string) {\n"
        "    this.store.get(key);\n"
        "    const m = new Map();\n"
        "    m.get(key);\n"
        "    this.refresh();\n"
        "    debounce(this.refresh);\n"
        "  }\n"
        "  refresh() {}\n"
        "}\n"
    ),
}


def _index(tmp_path, files: dict[str, str], folder: str = "repo") -> Index:
    return keyword_indexed_files(tmp_path / folder, files)


_related = related_by_name


@pytest.fixture
def python(tmp_path):
    index = _index(tmp_path, PYTHON)
    yield index
    index.close()


def test_python_receivers_types_imports_and_references(python):
    callees = _related(python, "App.run", "callees")
    assert callees == {"MultiDict.update": "type", "App.helper": "exact", "register": "exact"}
    # a dict's update (a parameter annotated dict, a literal) and json.loads are not the repository's
    assert set(_related(python, "MultiDict.update", "callers")) == {"App.run"}
    assert _related(python, "loads", "callers") == {}
    assert _related(python, "App.helper", "callers") == {"App.run": "exact"}  # a call and a method value


def test_python_super_and_recursion(python):
    assert _related(python, "App.helper", "callees") == {"Base.close": "type"}
    assert _related(python, "fact", "callers") == {"fact": "exact"}


def test_python_absolute_imports_of_the_package_the_indexed_folder_is(tmp_path):
    """A package indexed from inside (its own folder as the root): `from pkg.util import helper`
    names `util.py` at the top, while a module from elsewhere still links nothing."""
    index = _index(tmp_path, {
        "__init__.py": "",
        "util.py": "def helper():\n    return 1\n\ndef dumps(x):\n    return x\n",
        "core.py": ("from pkg.util import helper\nfrom otherlib.util import dumps\n\n"
                    "def run():\n    helper()\n    return dumps(2)\n"),
    }, folder="pkg")
    try:
        assert _related(index, "run", "callees") == {"helper": "import"}
    finally:
        index.close()


def test_python_references_that_are_not_calls_are_recorded(python):
    sites = python.catalog.db.execute(
        "SELECT n.name, k.ref FROM calls k JOIN names n ON n.nid = k.nid WHERE k.ref = 1").fetchall()
    assert ("helper", 1) in [tuple(s) for s in sites]


def test_go_fields_parameters_packages_and_interfaces(tmp_path):
    index = _index(tmp_path, GO)
    try:
        callees = _related(index, "Mux.ServeHTTP", "callees")
        # sync.Pool's Get, *http.Request's Context and context.WithValue are not the repository's
        assert callees == {"Mux.Get": "exact", "Mux.routeHTTP": "exact", "Runner": "dynamic"}
        assert _related(index, "WithValue", "callers") == {}
        assert _related(index, "Context", "callers") == {}
        assert _related(index, "Job.Run", "callers") == {}  # through the interface: its declaration only
        assert _related(index, "Mux.routeHTTP", "callers") == {"Mux.ServeHTTP": "exact"}  # a method value
    finally:
        index.close()


def test_typescript_fields_constructors_this_and_modules(tmp_path):
    index = _index(tmp_path, TYPESCRIPT)
    try:
        callees = _related(index, "Cache.read", "callees")
        assert callees == {"Store.get": "type", "Cache.refresh": "exact"}
        assert _related(index, "Other.get", "callers") == {}  # a Map's get, a Store's get: not Other's
        assert _related(index, "debounce", "callers") == {}  # lodash's, not the local one
    finally:
        index.close()


def test_typescript_imports_of_the_package_by_its_own_name(tmp_path):
    """A package's source folder indexed alone: its tests import it by name (`pkg/v4`), which is
    `v4/index.ts` from the top; a subpath of another package the tree does not hold links nothing."""
    index = _index(tmp_path, {
        "v4/index.ts": "export function string() { return 1; }\nexport function merge() { return 2; }\n",
        "v4/tests/string.test.ts": ('import * as z from "pkg/v4";\nimport merge from "lodash/merge";\n\n'
                                    'export function check() {\n  z.string();\n  return merge();\n}\n'),
    }, folder="src")
    try:
        assert _related(index, "check", "callees") == {"string": "import"}
    finally:
        index.close()


def test_typescript_names_a_package_re_exports_and_relative_paths(tmp_path):
    """`z.string()` through `pkg/v4`, whose index re-exports (`export * from`) the file that defines
    it two imports down: that definition, not a same-named one elsewhere; a `./x.js` or `../x.js`
    import is that file next to the importer, never a file of the same name in another folder."""
    index = _index(tmp_path, {
        "v4/index.ts": 'export * from "./classic/index.js";\n',
        "v4/classic/index.ts": 'export * from "./schemas.js";\nexport * from "../locales/en.js";\n',
        "v4/classic/schemas.ts": "export function string() { return 1; }\n",
        "v4/mini/schemas.ts": "export function string() { return 2; }\n",
        "v4/locales/en.ts": "export const en = 1;\n",
        "v3/locales/en.ts": "export const en = 3;\n",
        "v4/tests/string.test.ts": ('import * as z from "pkg/v4";\n\n'
                                    "export function check() {\n  return z.string();\n}\n"),
    }, folder="src")
    try:
        graph = CallGraph(index.catalog)
        found = [r for r in neighbours(graph, definitions_named(index.catalog, "check"), "callees") if r.depth == 1]
        chunks = index.catalog.files.chunks_by_ids([r.id for r in found])
        assert [(chunks[r.id].path, r.resolution) for r in found] == [("v4/classic/schemas.ts", "import")]
        imported = index.catalog.db.execute(
            "SELECT fb.path FROM files fa JOIN chunks a ON a.fid = fa.fid AND a.kind = 'file' "
            "JOIN edges e ON e.src = a.rid AND e.kind = 1 JOIN chunks b ON b.rid = e.dst "
            "JOIN files fb ON fb.fid = b.fid WHERE fa.path = 'v4/classic/index.ts'").fetchall()
        assert sorted(r[0] for r in imported) == ["v4/classic/schemas.ts", "v4/locales/en.ts"]
    finally:
        index.close()


def test_call_sites_say_how_they_resolved_and_whether_they_call(python):
    sites = {(s.path, s.line): (s.reference, s.resolution) for s in python.catalog.graph.call_sites("helper", 100)}
    assert sites == {("pkg/app.py", 27): (False, "exact"), ("pkg/app.py", 28): (True, "exact")}
    # json.loads links to nothing here: the site is known, its resolution is not
    assert [(s.reference, s.resolution) for s in python.catalog.graph.call_sites("loads", 100)] == [(False, None)]
