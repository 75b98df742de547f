"""IgnoreRules: the joined regex that lets a path skip a folder's spec never hides a pattern that
matches, and the chain a walk passes down answers as the per-path lookup does."""

from __future__ import annotations

import os
from pathlib import Path

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codesearch.config import Settings
from codesearch.ingest.ignore import FolderRules, IgnoreRules
from codesearch.ingest.walker import RepoWalker, SourceFile

PATTERNS = ["*.log", "!keep.log", "build/", "/rootonly.py", "docs/**/gen", "**/node_modules", "foo/*",
            "!foo/bar", "[ab]c?.py", "\\#lit.py", "trailing.py  ", "a/b/c.py", "*", "!*/", "**", "dir/**",
            "\\!bang", "x[!y]z", "[]]", "a|b", "(x)", "*.py[cod]", "# comment", "", "?", "a/**/b/"]
PATHS = ["keep.log", "a.log", "x/a.log", "build/", "build", "x/build/", "rootonly.py", "x/rootonly.py",
         "docs/a/b/gen", "docs/gen/", "node_modules/", "x/node_modules/", "foo/bar", "foo/baz/", "abc.py",
         "bcd.py", "#lit.py", "trailing.py", "a/b/c.py", "!bang", "xaz", "xyz", "]", "a|b", "(x)", "m.pyc",
         "a/x/b/", "a/b/", "\\", "\\\\x01.py", "deep/er/still.txt"]


def agrees(lines: list[str], path: str) -> bool:
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    include = spec.check_file(path).include
    return FolderRules(spec).decide(path) == (None if include is None else bool(include))


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_folder_decides_as_its_spec(pattern):
    assert all(agrees([pattern, "!keep.log"], path) for path in PATHS)


def test_a_whole_gitignore_decides_as_its_spec():
    assert all(agrees(PATTERNS, path) for path in PATHS)


PIECES = st.sampled_from(["a", "b", ".py", "*", "**", "/", "?", "[ab]", "[!a]", "\\*", "\\", " ", ".", "|", "(", ")",
                          "^", "$", "{", "+"])
LINES = st.lists(st.builds(lambda bang, parts: ("!" if bang else "") + "".join(parts), st.booleans(),
                           st.lists(PIECES, min_size=1, max_size=5)), min_size=1, max_size=6)
PATH_PARTS = st.lists(st.sampled_from(["a", "b", "a.py", "b.py", "ab", "x", "*", "(", "|", "\\"]), min_size=1,
                      max_size=4)


@settings(max_examples=400, deadline=None)
@given(LINES, PATH_PARTS, st.booleans())
def test_generated_rules_decide_as_their_spec(lines, parts, is_dir):
    try:
        pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # a line pathspec refuses is refused the same way by both
        return
    assert agrees(lines, "/".join(parts) + ("/" if is_dir else ""))


def test_the_chain_answers_as_the_lookup_by_path(tmp_path):
    (tmp_path / ".gitignore").write_text("*.log\n!keep.log\nout/\n")
    (tmp_path / "pkg" / "deep").mkdir(parents=True)
    (tmp_path / "pkg" / ".gitignore").write_text("*.py\n!keep.log\n")
    (tmp_path / "pkg" / "deep" / ".codesearchignore").write_text("!keep.py\n*.md\n")
    rules = IgnoreRules(tmp_path)
    for rel, is_dir, ignored in [("a.log", False, True), ("pkg/keep.log", False, False), ("pkg/a.py", False, True),
                                 ("pkg/deep/keep.py", False, False), ("pkg/deep/x.md", False, True),
                                 ("out", True, True), ("pkg/out", True, True), ("out", False, False)]:
        assert rules.is_ignored(rel, is_dir) is ignored, rel
    assert rules.is_ignored_anywhere("out/keep.py", False)
    assert not rules.is_ignored_anywhere("pkg/deep/keep.py", False)


@pytest.mark.skipif(os.uname().sysname == "Darwin", reason="macOS refuses names that are not UTF-8")
def test_rules_in_a_folder_whose_name_is_escaped_apply(tmp_path):
    folder = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"dir\xff")))
    folder.mkdir()
    (folder / ".gitignore").write_text("skip.py\n")
    (folder / "skip.py").write_text("x = 1\n")
    (folder / "keep.py").write_text("x = 1\n")
    found = {e.rel for e in RepoWalker(tmp_path, Settings()).walk() if isinstance(e, SourceFile)}
    assert found == {"dir\\xff/keep.py"}
    assert IgnoreRules(tmp_path).is_ignored_anywhere("dir\\xff/skip.py", False)


def test_a_line_pathspec_cannot_read_is_skipped_and_the_other_rules_still_apply(tmp_path):
    (tmp_path / ".gitignore").write_text("*.log\n\\\nbuild/\n")
    for rel in ("app.py", "debug.log", "build/out.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    found = {e.rel for e in RepoWalker(tmp_path, Settings()).walk() if isinstance(e, SourceFile)}
    assert "app.py" in found and "debug.log" not in found and "build/out.py" not in found
