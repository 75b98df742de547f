"""Vendored code by structure: copies of another folder, projects nested in the project's source."""

from __future__ import annotations

import shutil

from conftest import SAMPLES

from codesearch.api.types import SearchRequest
from codesearch.config import load_settings
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer
from codesearch.indexing.vendored import FileEntry, copied_folders, in_folders, nested_projects, vendored_folders
from codesearch.model import Chunk
from codesearch.search.query import Query
from codesearch.search.ranking import RankingOptions, rank
from codesearch.search.searcher import Searcher


def chunk(cid: str, path: str) -> Chunk:
    return Chunk(id=cid, parent_id=None, path=path, language="python", kind="function", name="render",
                 qualified_name="render", signature="", docstring="", start_line=1, end_line=2,
                 content_hash=cid, header="", text="def render(): pass\n", part=1)


def entries(*pairs: tuple[str, str]) -> list[FileEntry]:
    return [FileEntry(path, digest) for path, digest in pairs]


def test_a_copied_folder_is_the_deeper_one():
    files = entries(("docs/Classes/A.html", "a"), ("docs/Classes/B.html", "b"), ("docs/Classes/C.html", "c"),
                    ("docs/set/Documents/Classes/A.html", "a"), ("docs/set/Documents/Classes/B.html", "b"),
                    ("docs/set/Documents/Classes/C.html", "c"), ("src/main.py", "m"))
    assert copied_folders(files) == {"docs/set/Documents/Classes"}


def test_a_few_shared_files_do_not_make_a_copy():
    files = entries(("a/LICENSE.txt", "l"), ("b/LICENSE.txt", "l"), ("b/x.py", "x"), ("b/y.py", "y"),
                    ("a/__init__.py", "i"), ("b/__init__.py", "i"), ("b/z.py", "z"))
    assert copied_folders(files) == set()


def test_a_project_nested_in_a_source_package_is_vendored():
    files = entries(("requests/__init__.py", "1"), ("requests/api.py", "2"), ("requests/packages/__init__.py", "3"),
                    ("requests/packages/urllib3/__init__.py", "4"), ("requests/packages/urllib3/LICENSE.txt", "5"),
                    ("requests/packages/urllib3/poolmanager.py", "6"))
    assert nested_projects(files) == {"requests/packages/urllib3"}
    assert in_folders("requests/packages/urllib3/util/retry.py", vendored_folders(files))
    assert not in_folders("requests/api.py", vendored_folders(files))


def test_monorepo_packages_are_the_project_s_own():
    files = entries(("package.json", "r"), ("packages/zod/package.json", "1"), ("packages/zod/LICENSE", ""),
                    ("packages/zod/src/index.ts", "2"), ("serde_derive/Cargo.toml", "3"),
                    ("serde_derive/src/lib.rs", "4"), ("build.rs", "5"), ("examples/tutorial/pyproject.toml", "6"))
    assert vendored_folders(files) == frozenset()


def test_ranking_penalizes_vendored_folders_like_tests():
    own = chunk("own", "app/views.py")
    copy = chunk("copy", "app/_vendored/lib/views.py")
    ranked = rank(Query.parse("show the page"), [(copy, 1.0), (own, 0.9)], RankingOptions(),
                  frozenset({"app/_vendored/lib"}))
    assert [r.chunk.path for r in ranked] == ["app/views.py", "app/_vendored/lib/views.py"]


def test_a_searcher_finds_a_library_copied_into_the_project(tmp_path):
    """On a real index: a library dropped into the project's package, under a name that is not on
    any list, ranks below the project's own code."""
    root = tmp_path / "repo"
    shutil.copytree(SAMPLES / "python", root, ignore=shutil.ignore_patterns(".codesearch"))
    lib = root / "shop" / "_bundled" / "backoff"
    lib.mkdir(parents=True)
    (root / "shop" / "__init__.py").write_text('"""The shop package."""\n')
    (lib / "LICENSE").write_text("MIT License\n")
    (lib / "delays.py").write_text(
        'def compute_backoff(attempt, base=0.5, cap=30.0):\n'
        '    """Return the retry delay for an attempt using capped exponential growth."""\n'
        '    return min(cap, base * 2 ** attempt)\n')
    index = Index(root, load_settings(root), create=True)
    try:
        Indexer(index).run(embed=False)
        searcher = Searcher(index)
        assert searcher.vendored_folders() == {"shop/_bundled/backoff"}
        answer = searcher.search(SearchRequest(query="retry delay with exponential backoff", mode="keyword",
                                               limit=5, files=True))
        paths = [r.path for r in answer.results]
        assert paths.index("inventory.py") < paths.index("shop/_bundled/backoff/delays.py")
    finally:
        index.close()
