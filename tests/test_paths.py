"""paths.py: lossless printable names, and confinement to the repository root."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codesearch.paths import OutsideRoot, confine, escape_name, on_disk, unescape_name
from codesearch.wire import RequestError

# names as os.fsdecode gives them: any bytes but NUL and '/'
NAMES = st.binary(min_size=1, max_size=40).filter(lambda b: b"\0" not in b and b"/" not in b).map(os.fsdecode)


@settings(max_examples=500, deadline=None)
@given(NAMES)
def test_escaping_is_lossless_printable_and_one_line(name):
    escaped = escape_name(name)
    assert unescape_name(escaped) == name
    escaped.encode("utf-8")  # valid UTF-8: SQLite and JSON take it
    assert "\n" not in escaped and "\r" not in escaped


@settings(max_examples=300, deadline=None)
@given(NAMES, NAMES)
def test_distinct_names_stay_distinct(a, b):
    if a != b:
        assert escape_name(a) != escape_name(b)


@pytest.mark.parametrize("name", ["inventory.py", "src/app/main.go", "naïve/ünïcode.rs", "with space.py"])
def test_ordinary_names_are_unchanged(name):
    assert escape_name(name) == name == unescape_name(name)


@pytest.mark.parametrize("raw, escaped", [
    (os.fsdecode(b"caf\xe9.py"), "caf\\xe9.py"), ("new\nline.py", "new\\x0aline.py"),
    ("back\\slash.py", "back\\\\slash.py"), ("lit\\xe9.py", "lit\\\\xe9.py"), ("tab\there", "tab\\x09here")])
def test_escaped_forms(raw, escaped):
    assert escape_name(raw) == escaped


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("password = 1\n")
    os.symlink(outside, root / "linkdir")
    os.symlink(outside / "secret.py", root / "link.py")
    os.symlink(root / "src", root / "alias")
    return root, outside


@pytest.mark.parametrize("path", ["../outside/secret.py", "src/../../outside/secret.py", "linkdir/secret.py",
                                  "linkdir", "/etc/passwd", "..", "link.py"])
def test_paths_that_leave_the_root_are_refused(tree, path):
    root, _ = tree
    with pytest.raises(OutsideRoot, match="outside the repository"):
        confine(root, path)
    assert issubclass(OutsideRoot, RequestError)  # every front-end answers it as a bad request


def test_paths_inside_the_root(tree):
    root, _ = tree
    assert confine(root, "src/a.py") == "src/a.py"
    assert confine(root, str(root / "src" / "a.py")) == "src/a.py"  # absolute, inside
    assert confine(root, "./src/../src/a.py") == "src/a.py"
    assert confine(root, "alias/a.py") == "src/a.py"  # a link inside the root: the place it names
    assert confine(root, "src/deleted_since.py") == "src/deleted_since.py"  # need not exist
    assert confine(root, ".") == ""


def test_the_last_component_may_stay_a_link_for_the_walker_to_judge(tree):
    root, _ = tree
    assert confine(root, "link.py", follow_last=False) == "link.py"
    with pytest.raises(OutsideRoot):
        confine(root, "linkdir/secret.py", follow_last=False)  # the folder on the way leaves the root


def test_on_disk_maps_an_escaped_name_back(tmp_path):
    raw = os.fsdecode(b"caf\xe9.py")
    (tmp_path / raw).write_text("x = 1\n")
    assert on_disk(tmp_path, escape_name(raw)).read_text() == "x = 1\n"
    assert confine(tmp_path, escape_name(raw)) == escape_name(raw)
