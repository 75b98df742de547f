"""TypeScript and JavaScript calls resolved as a type-aware tool would: a call on a receiver whose
type is not known goes to the methods of its name that the caller's file or the nearest files its
imports reach define, never to a function of that name or a method no import leads to."""

from __future__ import annotations

from conftest import direct_relations, keyword_indexed_files

from codesearch.indexing.index import Index
from codesearch.search.relations import definitions_named, neighbours
from codesearch.store.call_graph import CallGraph


def _index(tmp_path, files: dict[str, str]) -> Index:
    return keyword_indexed_files(tmp_path / "repo", files)


def _callees(index: Index, name: str) -> dict[tuple[str, str], str]:
    """(path, qualified name) -> resolution of the direct callees of `name`."""
    return {(chunk.path, chunk.qualified_name): how for chunk, how in direct_relations(index, name, "callees")}


UNKNOWN_RECEIVERS = {
    "v3/types.ts": "export class ZodType {\n  parse(data: unknown) { return data; }\n}\n",
    "v3/index.ts": 'export * from "./types";\n',
    "v4/schemas.ts": ("export interface ZodType {\n  parse(data: unknown): unknown;\n}\n"
                      "export function parse(schema: unknown, data: unknown) { return data; }\n"),
    "v4/index.ts": 'export * from "./schemas";\n',
    "v3/tests/parse.test.ts": ('import * as z from "../index";\n\n'
                               "export function check(schema) {\n  return schema.parse(1);\n}\n"),
    "v4/tests/parse.test.ts": ('import * as z from "../index";\n\n'
                               "export function check4(schema) {\n  return schema.parse(1);\n}\n"),
    "lib/app.js": ("function parse(text) { return text; }\n"
                   "export function load(req) {\n  return req.parse();\n}\n"),
}


def test_a_call_on_an_unknown_receiver_goes_to_the_methods_its_imports_reach(tmp_path):
    index = _index(tmp_path, UNKNOWN_RECEIVERS)
    try:
        assert _callees(index, "check") == {("v3/types.ts", "ZodType.parse"): "import"}
        assert _callees(index, "check4") == {("v4/schemas.ts", "ZodType.parse"): "import"}
        assert _callees(index, "load") == {}  # a function, not a method: `req` holds none of them
    finally:
        index.close()


def test_a_namespace_re_export_does_not_export_its_names(tmp_path):
    """`export * as coerce from "./coerce"` makes `coerce.string`, not `string`, and `export type`
    brings types alone: `z.string()` through the re-exporting module is the one `export * from
    "./schemas"` brings."""
    index = _index(tmp_path, {
        "external.ts": ('export * as coerce from "./coerce";\nexport type { Coerced } from "./coerce";\n'
                        'export * from "./schemas";\n'),
        "coerce.ts": "export type Coerced = string;\nexport function string() { return 1; }\n",
        "schemas.ts": "export function string() { return 2; }\n",
        "tests/string.test.ts": ('import * as z from "../external";\n\n'
                                 "export function check() {\n  return z.string();\n}\n"),
    })
    try:
        assert _callees(index, "check") == {("schemas.ts", "string"): "import"}
    finally:
        index.close()


def test_a_namespace_imported_by_name_is_the_module_it_re_exports(tmp_path):
    """`import { z } from "../index"`, where index.ts exports `import * as z from "./external"`:
    `z.string()` is the string external.ts re-exports, not a guess among every `string`."""
    index = _index(tmp_path, {
        "index.ts": 'import * as z from "./external";\nexport { z };\n',
        "external.ts": 'export * from "./schemas";\n',
        "schemas.ts": "export function string() { return 2; }\n",
        "mini/schemas.ts": "export function string() { return 3; }\n",
        "tests/string.test.ts": ('import { z } from "../index";\n\n'
                                 "export function check() {\n  return z.string();\n}\n"),
    })
    try:
        assert _callees(index, "check") == {("schemas.ts", "string"): "import"}
    finally:
        index.close()


def test_a_guess_among_many_methods_of_an_unknown_receiver_is_no_link(tmp_path):
    """Two classes' `run` beside a call on a receiver of unknown type: both, a guess; four (each
    subclass's override): none."""
    classes = "".join(f"export class Job{i} {{\n  run() {{ return {i}; }}\n}}\n" for i in range(4))
    index = _index(tmp_path, {
        "few.ts": (classes.split("export class Job2")[0]
                   + "export function few(job) {\n  return job.run();\n}\n"),
        "many.ts": classes + "export function many(job) {\n  return job.run();\n}\n",
    })
    try:
        assert _callees(index, "few") == {("few.ts", "Job0.run"): "name-only", ("few.ts", "Job1.run"): "name-only"}
        assert _callees(index, "many") == {}
    finally:
        index.close()


def test_new_calls_the_constructor_a_class_declares(tmp_path):
    index = _index(tmp_path, {
        "errors.ts": ("export class TimeoutError extends Error {\n  constructor(request: unknown) {\n"
                      "    super('timeout');\n  }\n}\nexport class NonError extends Error {}\n"),
        "ky.ts": ('import { TimeoutError, NonError } from "./errors";\n\n'
                  "export function fail(request: unknown) {\n  if (request) throw new NonError();\n"
                  "  throw new TimeoutError(request);\n}\n"),
    })
    try:
        assert _callees(index, "fail") == {("errors.ts", "TimeoutError.constructor"): "import",
                                           ("errors.ts", "NonError"): "import"}
    finally:
        index.close()


def test_a_built_in_method_on_an_unknown_receiver_links_nothing_here(tmp_path):
    """`state.copy_!.delete(key)`: a Map's delete (its type is declared in another file), not the
    delete of the repository's own map class beside the call."""
    index = _index(tmp_path, {
        "mapset.ts": ("export class DraftMap {\n  delete(key: string) { return key; }\n}\n"
                      "export function remove(state, key: string) {\n  return state.copy_!.delete(key);\n}\n"),
    })
    try:
        assert _callees(index, "remove") == {}
    finally:
        index.close()


def test_a_name_each_anonymous_function_defines_links_none_of_them(tmp_path):
    """`const f` in each test's callback: which one a site sees, the file's chunk around them all
    does not tell; a function's overloads, one after another, are all its declarations."""
    index = _index(tmp_path, {
        "twins.test.ts": ('test("a", () => {\n  const f = () => 1;\n  expect(f());\n});\n\n'
                          'test("b", () => {\n  const f = () => 2;\n  expect(f());\n});\n'),
        "overloads.ts": ("export function string(): string;\nexport function string(p: number): string;\n"
                         "export function string(p?: number) { return String(p); }\n\n"
                         "export function check() {\n  return string(1);\n}\n"),
    })
    try:
        graph = CallGraph(index.catalog)
        twins = neighbours(graph, definitions_named(index.catalog, "f"), "callers")
        assert [r for r in twins if r.depth == 1] == []
        assert len(_callees(index, "check")) == 1  # one qualified name: the three declarations are one chunk name
        assert len(neighbours(graph, definitions_named(index.catalog, "check"), "callees")) == 3
    finally:
        index.close()


def test_a_module_name_is_a_top_level_definition_and_a_call_no_type(tmp_path):
    """`z.array()` through `import * as z` is the module's function, not a class's method named
    array; `core.make()` is the function, not the interface of its name beside it (a type is
    never called), unless the interface is all there is of the name (`const Made = make()`)."""
    index = _index(tmp_path, {
        "schemas.ts": ("export interface ZodType {\n  array(): unknown;\n}\n"
                       "export function array() { return 1; }\n"),
        "core.ts": ("export interface make {\n  init(): void;\n}\nexport function make() { return 1; }\n"
                    "export interface Made {\n  init(): void;\n}\nexport const Made = make();\n"),
        "use.ts": ('import * as z from "./schemas";\nimport * as core from "./core";\n\n'
                   "export function check() {\n  core.make();\n  new core.Made();\n  return z.array();\n}\n"),
    })
    try:
        assert _callees(index, "check") == {("schemas.ts", "array"): "import", ("core.ts", "make"): "import",
                                            ("core.ts", "Made"): "import"}
    finally:
        index.close()


def test_a_function_in_an_object_literal_is_no_method_of_an_unknown_receiver(tmp_path):
    index = _index(tmp_path, {
        "schemas.ts": ("export interface ZodType {\n  check(): unknown;\n}\n"
                       "export function instance() {\n  return { check: (data: unknown) => data };\n}\n"
                       "export function setup(inst) {\n  return inst.check();\n}\n"),
    })
    try:
        assert _callees(index, "setup") == {("schemas.ts", "ZodType.check"): "exact"}
    finally:
        index.close()


def test_a_type_member_is_no_function_local_to_a_function_of_its_name(tmp_path):
    index = _index(tmp_path, {
        "core.ts": ("export interface $constructor {\n  init(inst: unknown): void;\n}\n"
                    "export function $constructor() {\n  function init(inst: unknown) { return inst; }\n"
                    "  return init;\n}\n"),
        "schemas.ts": ('import * as core from "./core";\n\n'
                       "export const ZodType: core.$constructor = core.$constructor();\n\n"
                       "export function setup(inst: unknown) {\n  ZodType.init(inst);\n}\n"),
    })
    try:
        assert _callees(index, "setup") == {("core.ts", "$constructor.init"): "dynamic"}
        assert len(neighbours(CallGraph(index.catalog), definitions_named(index.catalog, "setup"), "callees")) == 1
    finally:
        index.close()


def test_a_bare_name_no_import_brings_is_no_definition_elsewhere(tmp_path):
    """An ES module's bare names are its own or its imports': `callback()` on a parameter, or a
    global the test runner sets (`expect`), is none of the repository's functions of that name."""
    index = _index(tmp_path, {
        "a.ts": "export function callback() { return 1; }\nexport function expect() { return 2; }\n",
        "b.ts": "export function callback() { return 3; }\n",
        "c.ts": ('import { helper } from "./d";\n\n'
                 "export function run(callback: () => void) {\n  callback();\n  expect();\n  return helper();\n}\n"),
        "d.ts": "export function helper() { return 4; }\n",
    })
    try:
        assert _callees(index, "run") == {("d.ts", "helper"): "import"}
    finally:
        index.close()


def test_a_name_a_module_of_the_repository_does_not_define_is_no_guess_elsewhere(tmp_path):
    """`z.map()` where the module exports `map` under another name (`export { mapType as map }`):
    none of the repository's other functions named map."""
    index = _index(tmp_path, {
        "v3.ts": "const mapType = makeMap();\nexport { mapType as map };\n",
        "a.ts": "export function map() { return 1; }\n",
        "b.ts": "export function map() { return 2; }\n",
        "use.ts": 'import * as z from "./v3";\n\nexport function check() {\n  return z.map();\n}\n',
    })
    try:
        check = definitions_named(index.catalog, "check")
        assert len(check) == 1 and neighbours(CallGraph(index.catalog), check, "callees") == []
    finally:
        index.close()


def test_this_calls_no_method_of_a_file_it_does_not_import(tmp_path):
    index = _index(tmp_path, {
        "a.js": "export class A {\n  get(key) { return key; }\n}\n",
        "b.js": "export class B {\n  get(key) { return key; }\n}\n",
        "app.js": "export class App {\n  setting(name) {\n    return this.get(name);\n  }\n}\n",
    })
    try:
        setting = definitions_named(index.catalog, "App.setting")
        assert len(setting) == 1 and neighbours(CallGraph(index.catalog), setting, "callees") == []
    finally:
        index.close()


def test_a_bare_name_a_parameter_or_a_variable_declares_is_that_value(tmp_path):
    """A parameter, a variable or a destructured name hides the file's functions of its name (a
    type alias of the name is no value at all); where a value and a function of one name are each
    declared in a callback of their own, each use reaches its own (the function's is linked); a
    function no value hides is still linked."""
    index = _index(tmp_path, {
        "values.ts": ("export function callback() { return 1; }\nexport function handler() { return 2; }\n"
                      "export function run(callback: () => void, items: number[]) {\n  const handler = items[0];\n"
                      "  callback();\n  return twice(handler);\n}\n"
                      "export function twice(f: unknown) {\n  return callback();\n}\n"),
        "suite.test.ts": ("export function suite() {\n  test('a', () => {\n    const a = make();\n    check(a);\n"
                          "    type a = ReturnType<typeof make>;\n  });\n}\n"
                          "function make() { return 1; }\nfunction check(x: unknown) { return x; }\n"
                          "export function suite2() {\n  test('b', () => {\n    const data = 1;\n    check(data);\n"
                          "  });\n  test('c', () => {\n    const data = () => 1;\n    check(data);\n  });\n}\n"),
        "app.js": ("function callback() { return 1; }\n"
                   "function run(callback, { handler }) {\n  callback();\n  return go(handler);\n}\n"
                   "function go(f) { return f; }\nfunction handler() { return 2; }\n"),
        "req.js": ("var req = {};\nreq.range = function range(size) {\n  var range = size;\n"
                   "  return parse(range);\n};\nfunction parse(x) { return x; }\n"),
    })
    try:
        assert _callees(index, "req.range") == {("req.js", "parse"): "exact"}  # its own variable, not itself
        assert _callees(index, "run") == {("values.ts", "twice"): "exact", ("app.js", "go"): "exact"}
        assert _callees(index, "twice") == {("values.ts", "callback"): "exact"}
        assert _callees(index, "suite") == {("suite.test.ts", "make"): "exact", ("suite.test.ts", "check"): "exact"}
        # a value in one callback, a function of the name in another: each use sees its own
        assert _callees(index, "suite2") == {("suite.test.ts", "check"): "exact",
                                             ("suite.test.ts", "suite2.data"): "exact"}
    finally:
        index.close()


def test_a_name_require_binds_is_the_module_or_its_member(tmp_path):
    """`var View = require('./view')` binds View to the module, `const { helper } = require(...)`
    to its member, as ES imports do; a local variable of the name inside a function hides it."""
    index = _index(tmp_path, {
        "view.js": "function View(name) {\n  this.name = name;\n}\nmodule.exports = View;\n",
        "util.js": "function helper() { return 1; }\nmodule.exports = { helper };\n",
        "other.js": "function helper() { return 3; }\nfunction View() { return 4; }\n",
        "app.js": ("var View = require('./view');\nconst { helper } = require('./util');\n\n"
                   "function render(name) {\n  helper();\n  return new View(name);\n}\n"
                   "function lookup(app) {\n  var View = app.view;\n  return new View('x');\n}\n"),
    })
    try:
        assert _callees(index, "render") == {("view.js", "View"): "import", ("util.js", "helper"): "import"}
        assert _callees(index, "lookup") == {}
    finally:
        index.close()


def test_a_function_assigned_to_a_property_is_a_member_of_its_object(tmp_path):
    """`inst.date = () => ...` and `res.send = function send()` are members of inst and res (the
    object's `send` is what `this.send()` in its other members calls), `Foo.prototype.bar` is
    Foo's; none is a module's top-level name (`z.date()` is the function)."""
    index = _index(tmp_path, {
        "schemas.ts": ("export function date() { return 1; }\n"
                       "export function make(inst: unknown) {\n  inst.date = () => date();\n}\n"),
        "use.ts": 'import * as z from "./schemas";\n\nexport function check() {\n  return z.date();\n}\n',
        "response.js": ("var res = {};\nres.send = function send(body) {\n  return body;\n};\n"
                        "res.json = function json(obj) {\n  return this.send(obj);\n};\n"
                        "function Foo() {}\nFoo.prototype.bar = function () {\n  return 1;\n};\n"
                        "function useFoo() {\n  const foo = new Foo();\n  return foo.bar();\n}\n"),
    })
    try:
        assert _callees(index, "check") == {("schemas.ts", "date"): "import"}
        assert _callees(index, "res.json") == {("response.js", "res.send"): "exact"}
        assert _callees(index, "useFoo") == {("response.js", "Foo"): "exact", ("response.js", "Foo.bar"): "type"}
    finally:
        index.close()


def test_an_unknown_receiver_calls_the_method_a_type_declares_before_a_property_filled_in(tmp_path):
    """`schema.parse()` on a value of unknown type: the interface's `parse`, not the function a
    constructor assigns to the property of the object it fills in (`inst.parse = ...`)."""
    index = _index(tmp_path, {
        "schemas.ts": ("export interface ZodType {\n  parse(data: unknown): unknown;\n}\n"
                       "export function init(inst) {\n  inst.parse = (data) => data;\n}\n"),
        "use.ts": ('import * as z from "./schemas";\n\n'
                   "export function check(schema) {\n  return schema.parse(1);\n}\n"),
    })
    try:
        assert _callees(index, "check") == {("schemas.ts", "ZodType.parse"): "import"}
    finally:
        index.close()


def test_a_method_of_a_type_that_declares_none_is_no_guess_elsewhere(tmp_path):
    """`a.run()` on a value of an imported type alias that declares no `run`: none of the
    repository's functions named run in files the caller does not import."""
    index = _index(tmp_path, {
        "types.ts": "export type Alias = Base<number>;\n",
        "a.ts": "export function run() { return 1; }\n",
        "b.ts": "export function run() { return 2; }\n",
        "use.ts": 'import type { Alias } from "./types";\n\nexport function check(a: Alias) {\n  return a.run();\n}\n',
    })
    try:
        check = definitions_named(index.catalog, "check")
        assert len(check) == 1 and neighbours(CallGraph(index.catalog), check, "callees") == []
    finally:
        index.close()


def test_a_call_in_a_class_body_is_made_on_that_class(tmp_path):
    """`this.entries()` in a member that is no definition of its own (`[Symbol.iterator]()`) is
    the enclosing class's entries, not a same-named method of another class beside it."""
    index = _index(tmp_path, {
        "mapset.ts": ("export function enable() {\n  class DraftMap {\n    entries() { return 1; }\n"
                      "    [Symbol.iterator]() { return this.entries(); }\n  }\n"
                      "  class DraftSet {\n    entries() { return 2; }\n"
                      "    [Symbol.iterator]() { return this.entries(); }\n  }\n}\n"),
    })
    try:
        assert _callees(index, "DraftMap") == {("mapset.ts", "enable.DraftMap.entries"): "type"}
        assert _callees(index, "DraftSet") == {("mapset.ts", "enable.DraftSet.entries"): "type"}
    finally:
        index.close()


def test_the_package_s_own_name_is_the_indexed_folder(tmp_path):
    """A package's tests import it by the name its package.json gives (`import * as z from "zod"`,
    `"zod/mini"`): the indexed folder's own files, from the top; another package's name is none."""
    index = _index(tmp_path, {
        "package.json": '{"name": "mylib", "version": "1.0.0"}\n',
        "index.ts": 'export * from "./schemas";\n',
        "schemas.ts": "export function string() { return 1; }\n",
        "mini/index.ts": "export function string() { return 2; }\n",
        "tests/a.test.ts": ('import * as z from "mylib";\nimport * as m from "mylib/mini";\n'
                            'import * as o from "other";\n\n'
                            "export function check() {\n  z.string();\n  m.string();\n  return o.string();\n}\n"),
    })
    try:
        assert _callees(index, "check") == {("schemas.ts", "string"): "import", ("mini/index.ts", "string"): "import"}
    finally:
        index.close()


def test_a_built_in_global_s_static_member_is_no_method_here(tmp_path):
    """`Object.defineProperty(...)` on the global `Object` (nothing in the file declares or imports
    it) is the runtime's, not the method of that name a class the file imports declares."""
    index = _index(tmp_path, {
        "util.ts": "export class Props {\n  defineProperty(key: string) { return key; }\n}\n",
        "use.ts": ('import { Props } from "./util";\n\n'
                   'export function setup(obj: object) {\n  Object.defineProperty(obj, "a", {});\n'
                   "  return new Props();\n}\n"),
    })
    try:
        assert _callees(index, "setup") == {("util.ts", "Props"): "import"}
    finally:
        index.close()


def test_the_project_s_path_aliases_name_its_files(tmp_path):
    """tsconfig.json's `compilerOptions.paths` (JSON with comments and trailing commas) maps an
    import to the project's files as the compiler does: `"shop/*": ["./src/*.ts"]` makes
    "shop/cart" src/cart.ts, not another file's function of the same name."""
    index = _index(tmp_path, {
        "package.json": '{"name": "shop"}\n',
        "tsconfig.json": ('{\n  // where the package\'s modules live\n  "compilerOptions": {\n'
                          '    "paths": {"shop/*": ["./src/*.ts"], "@util": ["./src/util/index.ts"],},\n  },\n}\n'),
        "src/cart.ts": "export function total() { return 1; }\n",
        "src/util/index.ts": "export function helper() { return 2; }\n",
        "cart.ts": "export function total() { return 3; }\n",
        "tests/cart.test.ts": ('import { total } from "shop/cart";\nimport { helper } from "@util";\n\n'
                               "export function check() {\n  total();\n  return helper();\n}\n"),
    })
    try:
        assert _callees(index, "check") == {("src/cart.ts", "total"): "import",
                                            ("src/util/index.ts", "helper"): "import"}
    finally:
        index.close()


def test_a_function_a_block_declares_is_what_its_bare_uses_reach_not_the_import_it_hides(tmp_path):
    """`const build = () => ...` in a callback, or `function helper()` in a function's body,
    hides the imported name there, and only there; a value nearer the use hides the function in
    turn (a parameter, a callback's own `const`); names that no block sees bare hide nothing (an
    object's member, `this.helper = ...`, a function expression's own name); and where one
    caller's uses reach several blocks' functions of the name (a callback's each), they keep
    what the import says. A name declared twice in one block (an overload's signature and its
    body) is both."""
    index = _index(tmp_path, {
        "lib.ts": ("export function build() { return 1; }\nexport function helper() { return 1; }\n"
                   "export function make() { return 1; }\n"),
        "app.ts": ('import { build, helper, make } from "./lib";\n\n'
                   "export function inner() {\n"
                   "  return [1].map(() => {\n    const build = () => 2;\n"
                   "    function given(build: () => number) { return build(); }\n"
                   "    return build() + given(build) + [3].map((helper) => helper());\n  });\n}\n\n"
                   "export function outer() {\n  const api = { build: () => 3 };\n  return build() + api.x;\n}\n\n"
                   "export const run = () => {\n  function helper() { return 2; }\n  return helper();\n};\n\n"
                   "export function overloaded() {\n  function make(x: number): number\n"
                   "  function make(x: any) { return x; }\n  return make(1);\n}\n\n"
                   "export function mixed() {\n  [1].map(() => { const build = () => 2; return build(); });\n"
                   "  [2].map(() => { const helper = vi.fn(); return helper(); });\n  return build();\n}\n\n"
                   "export function twins() {\n"
                   "  [1].map(() => { function make() { return 4; } return make(); });\n"
                   "  [2].map(() => { function make() { return 5; } return make(); });\n}\n"),
        "old.js": ('import { helper, build } from "./lib";\n'
                   "export function members(items) {\n"
                   "  items.map(function () { this.helper = () => 2; return helper(); });\n"
                   "  items.map(function build(x) { return x; });\n  return build();\n}\n"),
    })
    try:
        assert _callees(index, "inner") == {("app.ts", "inner.build"): "exact", ("app.ts", "inner.given"): "exact"}
        assert _callees(index, "given") == {}  # its parameter
        assert _callees(index, "outer") == {("lib.ts", "build"): "import"}
        assert _callees(index, "run") == {("app.ts", "run.helper"): "exact"}
        made = sorted((chunk.start_line, how) for chunk, how in direct_relations(index, "overloaded", "callees"))
        assert made == [(22, "exact"), (23, "exact")]  # a signature and its body, both the block's
        assert _callees(index, "mixed") == {("app.ts", "mixed.build"): "exact", ("lib.ts", "build"): "import"}
        assert _callees(index, "twins") == {("lib.ts", "make"): "import"}
        assert _callees(index, "members") == {("lib.ts", "helper"): "import", ("lib.ts", "build"): "import"}
    finally:
        index.close()
