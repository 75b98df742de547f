"""Calls resolved by scope, type and import in Rust, PHP and Ruby, on small projects written here:
the receiver's declared or constructed type picks the method among same-named ones, `self`/`$this`
stay in the caller's own type, a trait or interface method called through it links to its
declaration (dynamic), a function passed as a value is a reference, and a call on a value of a
type from the standard library or a dependency links to nothing here."""

from __future__ import annotations

import pytest
from conftest import keyword_indexed_files, related_by_name, site_references

from codesearch.indexing.index import Index
from codesearch.ingest.languages.php import import_aliases as php_imports
from codesearch.ingest.languages.rust import import_aliases as rust_imports
from codesearch.store.module_files import ModuleFiles

RUST = {
    "Cargo.toml": '[workspace]\nmembers = ["engine"]\n',
    "engine/Cargo.toml": '[package]\nname = "engine"\n',
    "engine/src/lib.rs": "pub mod store;\npub mod runner;\npub mod cache;\npub mod checks;\n",
    "engine/src/store.rs": (
        "pub struct Store {}\n\n"
        "impl Store {\n"
        "    pub fn new() -> Self { Store {} }\n"
        "    pub fn get(&self, key: &str) -> u32 { 0 }\n"
        "    pub fn insert(&mut self, key: u32) {}\n"
        "}\n\n"
        "pub struct Other {}\n\n"
        "impl Other {\n"
        "    pub fn get(&self, key: &str) -> u32 { 1 }\n"
        "    pub fn write_str(&self) {}\n"
        "}\n\n"
        "pub fn helper(x: u32) -> u32 { x }\n\n"
        "pub fn serialize(x: u32) -> u32 { x }\n\n"
        "pub struct Key(pub u32);\n\n"
        "impl Key {\n    pub fn raw(&self) -> u32 { self.0 }\n}\n\n"
        "pub fn key() -> Key {\n    Key(1)\n}\n"
    ),
    "engine/src/runner/traits.rs": (
        "pub trait Runner {\n    fn run(&self);\n}\n\n"
        "pub struct Job;\n\n"
        "impl Runner for Job {\n    fn run(&self) {}\n}\n\npub fn launch() {}\n"
    ),
    "engine/src/cache.rs": (
        "use std::collections::HashMap;\n"
        "use std::fmt;\n"
        "use crate::store::{helper, Other, Store};\n"
        "use crate::runner::Runner;\n"
        "use serde::Serialize;\n\n"
        "pub struct Cache {\n"
        "    store: Store,\n"
        "    map: HashMap<u32, u32>,\n"
        "    runner: Box<dyn Runner>,\n"
        "}\n\n"
        "impl Cache {\n"
        "    pub fn read(&mut self, other: &Other, f: &mut fmt::Formatter) -> u32 {\n"
        "        let fresh = Store::new();\n"
        "        fresh.get(\"a\");\n"
        "        self.store.get(\"k\");\n"
        "        other.get(\"o\");\n"
        "        self.map.insert(1, 2);\n"
        "        self.runner.run();\n"
        "        Self::refresh(self);\n"
        "        self.refresh();\n"
        "        f.write_str(\"x\");\n"
        "        Serialize::serialize(&1);\n"
        "        [1].iter().map(helper);\n"
        "        Ok::<u32, ()>(1).unwrap()\n"
        "    }\n\n"
        "    fn refresh(&self) {}\n"
        "}\n\n"
        "pub fn generic<R: Runner>(r: &R) {\n    r.run();\n}\n\n"
        "pub fn through_dyn(r: &dyn Runner) {\n    r.run();\n}\n"
    ),
    "engine/src/checks.rs": (
        "use crate::{runner::{self, Runner}, store::Store};\n\n"
        "fn check(x: u32) -> u32 { x }\n\n"
        "fn one() -> u32 {\n    check(1)\n}\n\n"
        "fn atomics() -> u32 {\n    fn check(x: u32) -> u32 { x + 1 }\n    check(2)\n}\n\n"
        "fn aliased() -> u32 {\n    let check = elsewhere::<u32>;\n    let twice = |x: u32| x * 2;\n"
        "    twice(check(3))\n}\n\n"
        "fn unknown() {\n    let s = make();\n    s.insert(1);\n    runner::start();\n"
        "    runner::traits::launch();\n    runner::traits::Job::run(&Job);\n}\n\n"
        "pub trait Summary {\n    fn summary(&self);\n}\n\n"
        "impl Summary for Bytes {\n    fn summary(&self) {}\n}\n\n"
        "fn new() {}\n\n"
        "fn foreign() {\n    Bytes::new();\n}\n"
    ),
    "engine/src/runner/mod.rs": "pub fn start() {}\n",
}

PHP = {
    "src/Store.php": ("<?php\nnamespace App;\n\nclass Store {\n  public function get($k) {}\n"
                      "  public function put($k) {}\n}\n"),
    "src/Other.php": "<?php\nnamespace App;\n\nclass Other {\n  public function get($k) {}\n}\n",
    "src/Base.php": "<?php\nnamespace App;\n\nclass Base {\n  public function close() {}\n}\n",
    "src/Runner.php": ("<?php\nnamespace App;\n\ninterface Runner {\n  public function run();\n}\n\n"
                       "class Job implements Runner {\n  public function run() {}\n}\n"),
    "src/Cache.php": (
        "<?php\n"
        "namespace App;\n\n"
        "use App\\Store;\n"
        "use App\\{Other, Runner};\n"
        "use Vendor\\Lib\\Client;\n\n"
        "class Cache extends Base {\n"
        "  private Store $store;\n"
        "  private Runner $runner;\n\n"
        "  public function read(Other $other, Client $client) {\n"
        "    $this->store->get('k');\n"
        "    $other->get('o');\n"
        "    $client->get('c');\n"
        "    $fresh = new Store();\n"
        "    $fresh->put('p');\n"
        "    $this->runner->run();\n"
        "    $this->refresh();\n"
        "    self::refresh();\n"
        "    parent::close();\n"
        "    array_map([$this, 'refresh'], []);\n"
        "  }\n\n"
        "  public function refresh() {}\n"
        "}\n"
    ),
}

RUBY = {
    "lib/store.rb": ("class Store\n  def get(k)\n    k\n  end\n\n  def put(k)\n    k\n  end\n\n"
                     "  def self.open\n    new\n  end\nend\n"),
    "lib/other.rb": "class Other\n  def get(k)\n    k\n  end\nend\n",
    "lib/cache.rb": (
        "require_relative \"store\"\n\n"
        "class Cache\n"
        "  def initialize\n    @store = Store.new\n  end\n\n"
        "  def read(k)\n"
        "    @store.get(k)\n"
        "    fresh = Store.new\n"
        "    fresh.put(k)\n"
        "    refresh(k)\n"
        "    self.refresh(k)\n"
        "    [k].each(&method(:refresh))\n"
        "    Store.open\n"
        "  end\n\n"
        "  def refresh(k)\n    k\n  end\n"
        "end\n"
    ),
}


def _index(tmp_path, files: dict[str, str]) -> Index:
    return keyword_indexed_files(tmp_path / "repo", files)


_related = related_by_name
_references = site_references


@pytest.fixture(scope="module")
def rust(tmp_path_factory):
    index = _index(tmp_path_factory.mktemp("rust"), RUST)
    yield index
    index.close()


@pytest.fixture(scope="module")
def php(tmp_path_factory):
    index = _index(tmp_path_factory.mktemp("php"), PHP)
    yield index
    index.close()


@pytest.fixture(scope="module")
def ruby(tmp_path_factory):
    index = _index(tmp_path_factory.mktemp("ruby"), RUBY)
    yield index
    index.close()


def test_rust_receivers_by_type_self_and_trait_objects(rust):
    assert _related(rust, "Cache.read", "callees") == {
        "Store.new": "type",  # Store::new(), a type a `use` names
        "Store.get": "type",  # let fresh = Store::new(); a field declared Store
        "Other.get": "type",  # a parameter declared &Other
        "Runner.run": "dynamic",  # a Box<dyn Runner>: the trait's declaration
        "Cache.refresh": "exact",  # Self::refresh and self.refresh
        "helper": "import",  # a function passed as a value, named by a `use`
    }


def test_rust_std_and_dependencies_link_nothing_here(rust):
    assert _related(rust, "Store.insert", "callers") == {"unknown": "import"}  # not the HashMap's insert
    assert _related(rust, "Other.write_str", "callers") == {}  # fmt::Formatter's
    assert _related(rust, "serialize", "callers") == {}  # serde's Serialize, a crate not in the workspace
    assert _related(rust, "Job.run", "callers") == {"unknown": "type"}  # through the trait: its declaration


def test_rust_generic_bound_and_dyn_parameter_reach_the_trait(rust):
    assert _related(rust, "generic", "callees") == {"Runner.run": "dynamic"}
    assert _related(rust, "through_dyn", "callees") == {"Runner.run": "dynamic"}
    assert _references(rust, "helper") == [(True, "import")]


def test_rust_nested_functions_grouped_uses_and_method_calls(rust):
    # a function defined inside another is seen there only, and shadows the file's own there
    assert _related(rust, "one", "callees") == {"check": "exact"}
    assert _related(rust, "atomics", "callees") == {"atomics.check": "exact"}
    assert _related(rust, "aliased", "callees") == {}  # a local bound to another function, a closure
    # `s.insert()` on a value nothing says the type of: a method of a file its grouped `use` names
    assert _related(rust, "unknown", "callees") == {"Store.insert": "import", "start": "import", "launch": "import",
                                                     "Job.run": "type"}  # a type at the end of a module path
    # a type of which this repository holds only impls of its own traits is from elsewhere: Bytes::new
    # is not the file's fn new
    assert _related(rust, "foreign", "callees") == {}


def test_rust_tuple_struct_made_not_its_impl_block(rust):
    assert _related(rust, "key", "callees") == {"Key": "exact"}


def test_rust_use_trees_bind_their_names():
    assert rust_imports("use a::b::C;", "a::b::C") == [("C", "a.b", "C")]
    assert rust_imports("use crate::x::{self, y::Z as W, *};", "crate::x::{self, y::Z as W, *}") == [
        ("x", "crate", "x"), ("W", "crate.x.y", "Z")]
    assert rust_imports("use serde;", "serde") == [("serde", "serde", "")]
    assert rust_imports("extern crate alloc as a;", "alloc") == [("a", "alloc", "")]


def test_rust_modules_are_workspace_files_or_from_elsewhere():
    modules = ModuleFiles(["engine/Cargo.toml", "engine/src/lib.rs", "engine/src/de/mod.rs", "engine/src/de/value.rs",
                           "engine/src/ser.rs", "tests/a.rs"], "repo")
    assert modules.files("std.fmt", "engine/src/ser.rs") is None
    assert modules.files("serde_json.Value", "engine/src/ser.rs") is None
    assert modules.files("crate.de.value.Foo", "engine/src/ser.rs") == ["engine/src/de/value.rs"]
    assert modules.files("super.ser", "engine/src/de/mod.rs") == ["engine/src/ser.rs"]
    assert modules.files("self.value", "engine/src/de/mod.rs") == ["engine/src/de/value.rs"]
    assert modules.files("engine.de.Error", "tests/a.rs") == ["engine/src/de/mod.rs"]


def test_php_this_self_parent_typed_parameters_properties_and_new(php):
    assert _related(php, "Cache.read", "callees") == {
        "Store.get": "type",  # a property declared Store
        "Other.get": "type",  # a parameter declared Other
        "Store.put": "type",  # $fresh = new Store()
        "Store": "import",  # new Store()
        "Runner.run": "dynamic",  # a property declared with an interface
        "Cache.refresh": "exact",  # $this->refresh(), self::refresh(), [$this, 'refresh']
        "Base.close": "type",  # parent::close(): the class `extends` names
    }
    assert _related(php, "Job.run", "callers") == {}
    assert (True, "exact") in _references(php, "refresh")


def test_php_uses_bind_their_names():
    assert php_imports("use App\\Store;", "App\\Store") == [("Store", "App", "Store")]
    assert php_imports("use App\\{Other, Runner as R};", "Other") == [("Other", "App", "Other"),
                                                                         ("R", "App", "Runner")]
    assert php_imports("use function App\\helper;", "App\\helper") == [("helper", "App", "helper")]


def test_php_dependency_types_link_nothing_here(php):
    # a Client from a vendor namespace: its get is not Store's or Other's
    assert _related(php, "Other.get", "callers") == {"Cache.read": "type"}
    assert _related(php, "Store.get", "callers") == {"Cache.read": "type"}


def test_ruby_self_implicit_self_instance_variables_and_new(ruby):
    assert _related(ruby, "Cache.read", "callees") == {
        "Store.get": "type",  # @store = Store.new
        "Store.put": "type",  # fresh = Store.new
        "Cache.refresh": "exact",  # a bare call, self.refresh and method(:refresh)
        "Store.open": "type",  # a class method called on the class
        "Store": "import",  # Store.new makes a Store
    }
    assert _related(ruby, "Other.get", "callers") == {}
    assert (True, "exact") in _references(ruby, "refresh")
