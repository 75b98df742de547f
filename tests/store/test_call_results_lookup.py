"""Chain hints made plain read each name's definitions through the catalog's name index: a
repository with many chunks costs a chain a lookup, not a read of every chunk."""

from __future__ import annotations

from conftest import keyword_indexed_files

from codesearch.store.call_results import CallResults
from codesearch.store.module_files import ModuleFiles

FILLER = 3000  # chunks a scan would read for each name asked about


def test_a_chains_names_are_looked_up_through_the_name_index(tmp_path):
    router = ("package m\n\ntype Router struct{}\n\nfunc NewRouter() *Router { return &Router{} }\n\n"
              "func (r *Router) Path() *Router { return r }\n\n")
    index = keyword_indexed_files(tmp_path / "m", {
        "go.mod": "module example.com/m\n",
        "router.go": router + "".join(f"func filler{i}() {{}}\n\n" for i in range(FILLER))})
    try:
        db = index.catalog.db
        results = CallResults(db, lambda: ModuleFiles.of_root(["router.go"], "m"), {})
        steps = 0

        def count() -> int:
            nonlocal steps
            steps += 1
            return 0

        db.set_progress_handler(count, 100)  # called every 100 virtual machine instructions
        try:
            assert results.type_of("NewRouter()@>Path", "router.go") == "Router@"
        finally:
            db.set_progress_handler(None, 100)
        assert steps < FILLER // 10
    finally:
        index.close()
