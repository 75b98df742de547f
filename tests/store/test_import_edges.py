"""Which of the repository's files an import statement names (the file-to-file import edges)."""

from __future__ import annotations

import pytest

from codesearch.store.import_edges import _FileIndex

FILES = ["src/fmt.rs", "src/collections.rs", "src/store.rs", "src/proc_macro.rs", "flask/app.py", "web/util.js"]


@pytest.mark.parametrize("module", ["std::fmt", "::std::collections::HashMap", "core::fmt::Write",
                                    "alloc::collections", "proc_macro::TokenStream", "std::{fmt, collections}"])
def test_rust_standard_crates_never_name_a_file_of_the_repository(module):
    assert _FileIndex(FILES).resolve(module, "src/main.rs") == []


@pytest.mark.parametrize(("module", "importer", "files"), [
    ("crate::store::Store", "src/main.rs", ["src/store.rs"]),
    ("crate::{fmt, store}", "src/main.rs", ["src/fmt.rs", "src/store.rs"]),
    ("flask.app", "flask/cli.py", ["flask/app.py"]),
    ("./util.js", "web/index.js", ["web/util.js"]),
    ("./missing", "web/index.js", []),
])
def test_imports_name_the_files_they_reach(module, importer, files):
    assert _FileIndex(FILES).resolve(module, importer) == files
