"""Calls resolved by scope, type and import in Java, C# and Kotlin, on the small projects under
sample_repos/{java,csharp,kotlin}_calls: the receiver's declared or constructed type picks the
method among same-named ones, `this` and `super` stay in the class and its bases, a call through an
interface links to its declaration (dynamic), a method reference is a reference, and a call on a
value of a type from outside the repository links to nothing here."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import keyword_indexed_sample, related_by_name, site_references

SAMPLES = Path(__file__).resolve().parents[2] / "sample_repos"


_index = keyword_indexed_sample
_related = related_by_name
_references = site_references


@pytest.fixture(scope="module")
def java(tmp_path_factory):
    index = _index(tmp_path_factory.mktemp("java"), "java_calls")
    yield index
    index.close()


def test_java_receivers_by_declared_and_constructed_type(java):
    callees = _related(java, "Cache.read", "callees")
    assert callees == {
        "Cache.refresh": "exact",  # this.refresh() and this::refresh
        "Store.get": "type",  # a field declared Store
        "Other.get": "type",  # a parameter declared Other
        "Store.put": "type",  # var fresh = new Store()
        "Store": "type",  # new Store()
        "Runner.run": "dynamic",  # through the interface: its declaration
        "Strings.upper": "type",  # a class imported by name
        "Strings.trim": "import",  # a static import
        "Base.close": "type",  # super.close(): the base class (extends Base), not the own override
    }


def test_java_calls_on_outside_types_link_nothing_local(java):
    # a Map's get (java.util) and a Store imported from a library are not the repository's,
    # though Store.get, Other.get and Cache.get share the name
    assert set(_related(java, "Store.get", "callers")) == {"Cache.read"}
    assert _related(java, "Cache.get", "callers") == {}
    assert _related(java, "Client.fetch", "callees") == {}
    assert _related(java, "Job.run", "callers") == {}  # through Runner: its declaration only


def test_java_method_reference_is_a_reference(java):
    assert _references(java, "refresh") == [(False, "exact"), (True, "exact")]


@pytest.fixture(scope="module")
def csharp(tmp_path_factory):
    index = _index(tmp_path_factory.mktemp("csharp"), "csharp_calls")
    yield index
    index.close()


def test_csharp_receivers_base_and_extension_methods(csharp):
    callees = _related(csharp, "Cache.Read", "callees")
    assert callees == {
        "Example.Cache.Refresh": "exact",  # this.Refresh() and the method group Apply(Refresh)
        "Example.Cache.Apply": "exact",
        "Example.Store.Get": "type",  # a field declared Store
        "Example.Other.Get": "type",  # a parameter declared Other
        "Example.Store": "type",  # new Store()
        "Example.Store.Put": "type",  # var fresh = new Store()
        "Example.IRunner.Run": "dynamic",  # a property of the interface's type: its declaration
        "Example.Util.Strings.Upper": "type",  # a static call on the class
        "Example.Util.Strings.Shout": "type",  # an extension method of string
        "Example.Util.Strings.AsList": "type",  # an extension method of IEnumerable<T>
        "Example.Base.Close": "type",  # base.Close(): the first base, not the own override
    }


def test_csharp_calls_on_outside_types_link_nothing_local(csharp):
    # a Dictionary's Remove is not the class's own Remove; Console.WriteLine is the base library's
    assert _related(csharp, "Cache.Remove", "callers") == {}
    assert _related(csharp, "Job.Run", "callers") == {}
    assert _references(csharp, "Refresh") == [(False, "exact"), (True, "exact")]


@pytest.fixture(scope="module")
def kotlin(tmp_path_factory):
    index = _index(tmp_path_factory.mktemp("kotlin"), "kotlin_calls")
    yield index
    index.close()


def test_kotlin_receivers_constructors_and_extension_functions(kotlin):
    callees = _related(kotlin, "Cache.read", "callees")
    assert callees == {
        "Cache.refresh": "exact",  # this.refresh() and ::refresh
        "Store.get": "type",  # a constructor `val` property declared Store
        "Other.get": "type",  # a parameter declared Other
        "Store": "type",  # Store(): a capitalized callee constructs
        "Store.put": "type",  # val fresh = Store()
        "Runner.run": "dynamic",  # a nullable property of the interface's type
        "Strings.upper": "type",  # a call on an imported object
        "shout": "type",  # an extension function of String
        "firstOrNone": "type",  # an extension function of Iterable<T>, called on a Set
        "Base.close": "type",  # super.close(): the superclass, not the own override
    }


def test_kotlin_calls_on_outside_types_link_nothing_local(kotlin):
    # a MutableMap's remove is not the class's own remove; kotlin.math.max is not util's max;
    # a ConcurrentHashMap's get (java.util) is neither Store's nor Other's
    assert _related(kotlin, "Cache.remove", "callers") == {}
    assert _related(kotlin, "max", "callers") == {}
    assert _related(kotlin, "Client.fetch", "callees") == {}
    assert _related(kotlin, "Job.run", "callers") == {}
    assert _references(kotlin, "refresh") == [(False, "exact"), (True, "exact")]
