"""Calls resolved by scope, type and import in Java, C# and Kotlin, on the small projects under
sample_repos/{java,csharp,kotlin}_calls: the receiver's declared or constructed type picks the
method among same-named ones, `this` and `super` stay in the class and its bases, a call through an
interface links to its declaration (dynamic), a method reference is a reference, and a call on a
value of a type from outside the repository links to nothing here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.search.relations import definitions_named, neighbours
from codesearch.store.edges import CallGraph

SAMPLES = Path(__file__).resolve().parents[2] / "sample_repos"


def _index(tmp_path: Path, sample: str) -> Index:
    root = tmp_path / sample
    shutil.copytree(SAMPLES / sample, root)
    index = Index(root, load_settings(root), create=True)
    Indexer(index).run(embed=False)
    return index


def _related(index: Index, name: str, direction: str) -> dict[str, str]:
    """Qualified name -> resolution of the direct callers or callees of `name`."""
    graph = CallGraph(index.catalog)
    found = [r for r in neighbours(graph, definitions_named(index.catalog, name), direction) if r.depth == 1]
    chunks = index.catalog.files.chunks_by_ids([r.id for r in found])
    return {chunks[r.id].qualified_name: r.resolution for r in found}


def _references(index: Index, name: str) -> list[tuple[bool, str | None]]:
    """(is a reference, resolution) of each call site of `name`."""
    return sorted((s.reference, s.resolution) for s in index.catalog.graph.call_sites(name, 100))


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
