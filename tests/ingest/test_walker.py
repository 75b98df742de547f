"""RepoWalker and read_source: ignore rules, skip reasons, symlinks, content checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import SAMPLES

from codesearch.config import Settings
from codesearch.ingest.extract import SkipFile, read_source
from codesearch.ingest.walker import RepoWalker, Skipped, SourceFile

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def write(root: Path, rel: str, content: str | bytes = "x = 1\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def walk(root: Path, settings: Settings | None = None, index_dir: Path | None = None):
    return list(RepoWalker(root, settings or Settings(), index_dir=index_dir).walk())


def indexed(entries) -> set[str]:
    return {e.rel for e in entries if isinstance(e, SourceFile)}


def skipped(entries) -> dict[str, str]:
    return {e.rel: e.reason for e in entries if isinstance(e, Skipped)}


def seen(entries) -> set[str]:
    return {e.rel for e in entries}


# --- ignore rules ----------------------------------------------------------------------------------

def test_nested_gitignore_with_reinclude(tmp_path):
    write(tmp_path, ".gitignore", "*.log\nout/\n")
    write(tmp_path, "app.py")
    write(tmp_path, "debug.log", "noise\n")
    write(tmp_path, "out/built.py")
    write(tmp_path, "pkg/.gitignore", "*.py\n")
    write(tmp_path, "pkg/hidden.py")
    write(tmp_path, "pkg/notes.md", "# notes\n")
    write(tmp_path, "pkg/deep/.gitignore", "!keep.py\n")
    write(tmp_path, "pkg/deep/keep.py")
    write(tmp_path, "pkg/deep/drop.py")
    entries = walk(tmp_path)
    assert indexed(entries) == {"app.py", "pkg/notes.md", "pkg/deep/keep.py"}
    # ignored paths are left out silently, not reported as skipped
    for rel in ("debug.log", "out", "out/built.py", "pkg/hidden.py", "pkg/deep/drop.py"):
        assert rel not in seen(entries), rel


def test_deeper_gitignore_reincludes_a_root_pattern(tmp_path):
    write(tmp_path, ".gitignore", "*.md\n")
    write(tmp_path, "README.md", "# top\n")
    write(tmp_path, "docs/.gitignore", "!important.md\n")
    write(tmp_path, "docs/important.md", "# keep\n")
    write(tmp_path, "docs/other.md", "# drop\n")
    assert indexed(walk(tmp_path)) == {"docs/important.md"}


def test_files_inside_an_ignored_folder_cannot_be_reincluded(tmp_path):
    write(tmp_path, ".gitignore", "vendor/\n")
    write(tmp_path, "vendor/.gitignore", "!lib.py\n")
    write(tmp_path, "vendor/lib.py")
    write(tmp_path, "main.py")
    assert indexed(walk(tmp_path)) == {"main.py"}


def test_git_info_exclude(tmp_path):
    write(tmp_path, ".git/info/exclude", "*.gen.py\nscratch/\n")
    write(tmp_path, "model.gen.py")
    write(tmp_path, "scratch/tmp.py")
    write(tmp_path, "model.py")
    assert indexed(walk(tmp_path)) == {"model.py"}


def test_codesearchignore_at_root_and_deeper(tmp_path):
    write(tmp_path, ".codesearchignore", "secret.py\nfixtures/\n")
    write(tmp_path, "secret.py")
    write(tmp_path, "fixtures/data.py")
    write(tmp_path, "src/.codesearchignore", "*_test.py\n")
    write(tmp_path, "src/thing_test.py")
    write(tmp_path, "src/thing.py")
    assert indexed(walk(tmp_path)) == {"src/thing.py"}


def test_git_dir_and_index_dir_are_always_skipped(tmp_path):
    write(tmp_path, ".git/hooks/pre-commit.py")
    write(tmp_path, ".git/config.py")
    write(tmp_path, "sub/.git/objects.py")  # a nested repository's .git too
    write(tmp_path, ".codesearch/catalog.py")
    write(tmp_path, ".codesearch/notes.md", "# index\n")
    write(tmp_path, "main.py")
    entries = walk(tmp_path, index_dir=tmp_path / ".codesearch")
    assert indexed(entries) == {"main.py"}
    assert not [rel for rel in seen(entries) if rel.startswith((".git", ".codesearch", "sub/.git"))]


def test_custom_index_dir_inside_the_repository_is_skipped(tmp_path):
    write(tmp_path, "var/index/vectors.py")
    write(tmp_path, "main.py")
    assert indexed(walk(tmp_path, index_dir=tmp_path / "var" / "index")) == {"main.py"}


def test_default_index_dir_is_skipped_without_explicit_index_dir(tmp_path):
    write(tmp_path, ".codesearch/leftover.py")
    write(tmp_path, "main.py")
    entries = walk(tmp_path)
    assert indexed(entries) == {"main.py"}
    assert not [rel for rel in seen(entries) if rel.startswith(".codesearch")]


def test_default_index_dir_is_skipped_when_the_index_lives_elsewhere(tmp_path):
    repo = tmp_path / "repo"
    write(repo, ".codesearch/leftover.py")
    write(repo, "main.py")
    assert indexed(walk(repo, index_dir=tmp_path / "elsewhere")) == {"main.py"}


def test_sample_python_repo_honours_its_gitignore():
    entries = walk(SAMPLES / "python")
    rels = seen(entries)
    assert "build" not in rels and "build/generated.py" not in rels
    assert "debug.log" not in rels
    assert {"inventory.py", "config.py", "tests/test_inventory.py", "README.md"} <= indexed(entries)
    languages = {e.rel: e.language for e in entries if isinstance(e, SourceFile)}
    assert languages["inventory.py"] == "python" and languages["README.md"] == "markdown"


# --- skip reasons from the walker --------------------------------------------------------------------

def test_too_large_file_is_skipped_by_the_walker(tmp_path):
    write(tmp_path, "big.py", "x = 1\n" * 100)
    write(tmp_path, "small.py", "x = 1\n")
    entries = walk(tmp_path, Settings(max_file_bytes=200))
    assert skipped(entries) == {"big.py": "too_large"}
    assert indexed(entries) == {"small.py"}


def test_unsupported_extension(tmp_path):
    write(tmp_path, "image.png", b"\x89PNG\r\n")
    write(tmp_path, "data.xyz", "stuff\n")
    write(tmp_path, "noextension", "stuff\n")
    assert skipped(walk(tmp_path)) == {"image.png": "unsupported_type", "data.xyz": "unsupported_type",
                                       "noextension": "unsupported_type"}


@pytest.mark.parametrize("name", ["app.min.js", "style.min.css", "app.bundle.js", "api.pb.go", "model_pb2.py",
                                  "package-lock.json"])
def test_generated_names_are_skipped(tmp_path, name):
    write(tmp_path, name, "x\n")
    assert skipped(walk(tmp_path)) == {name: "generated"}


def test_source_file_record(tmp_path):
    path = write(tmp_path, "pkg/mod.py", "x = 1\n")
    (entry,) = walk(tmp_path)
    assert entry == SourceFile(rel="pkg/mod.py", disk=str(path), size=6, mtime_ns=path.stat().st_mtime_ns,
                               language="python")
    assert entry.path == path


# --- symlinks -----------------------------------------------------------------------------------------

def test_symlink_to_a_parent_folder_is_a_loop(tmp_path):
    write(tmp_path, "pkg/inner/mod.py")
    os.symlink("..", tmp_path / "pkg" / "inner" / "up")  # -> pkg, which contains the link
    os.symlink(".", tmp_path / "pkg" / "self")  # -> pkg itself
    os.symlink(tmp_path, tmp_path / "root")  # -> the repository root
    entries = walk(tmp_path)
    assert skipped(entries) == {"pkg/inner/up": "symlink_loop", "pkg/self": "symlink_loop",
                                "root": "symlink_loop"}
    assert indexed(entries) == {"pkg/inner/mod.py"}


def test_cyclic_symlinks_are_a_loop(tmp_path):
    os.symlink("b.py", tmp_path / "a.py")
    os.symlink("a.py", tmp_path / "b.py")
    assert skipped(walk(tmp_path)) == {"a.py": "symlink_loop", "b.py": "symlink_loop"}


def test_symlink_outside_the_root(tmp_path):
    outside = tmp_path / "outside"
    write(outside, "lib.py")
    repo = tmp_path / "repo"
    write(repo, "main.py")
    os.symlink(outside / "lib.py", repo / "lib.py")
    os.symlink(outside, repo / "vendor")
    entries = walk(repo)
    assert skipped(entries) == {"lib.py": "outside_root", "vendor": "outside_root"}
    assert indexed(entries) == {"main.py"}


def test_symlink_to_a_file_inside_the_root(tmp_path):
    write(tmp_path, "src/real.py")
    os.symlink("src/real.py", tmp_path / "alias.py")
    entries = walk(tmp_path)
    assert skipped(entries) == {"alias.py": "symlink"}
    assert indexed(entries) == {"src/real.py"}  # indexed once, under its own path


def test_broken_symlink(tmp_path):
    os.symlink("missing.py", tmp_path / "dangling.py")
    assert skipped(walk(tmp_path)) == {"dangling.py": "broken_symlink"}


# --- unreadable and vanished files ---------------------------------------------------------------------

@pytest.mark.skipif(IS_ROOT or not hasattr(os, "geteuid"), reason="root can read files with mode 000")
def test_unreadable_file_chmod(tmp_path):
    path = write(tmp_path, "locked.py")
    path.chmod(0)
    try:
        assert skipped(walk(tmp_path)) == {"locked.py": "unreadable"}
        with pytest.raises(SkipFile) as info:
            read_source(path, Settings(), "python")
        assert info.value.reason == "unreadable"
    finally:
        path.chmod(0o644)


def test_unreadable_file_walker_simulated(tmp_path, monkeypatch):
    locked = write(tmp_path, "locked.py")
    write(tmp_path, "open.py")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, *a, **k: False if Path(p) == locked
                        else real_access(p, mode, *a, **k))
    entries = walk(tmp_path)
    assert skipped(entries) == {"locked.py": "unreadable"}
    assert indexed(entries) == {"open.py"}


def test_unreadable_file_read_source_simulated(tmp_path, monkeypatch):
    locked = write(tmp_path, "locked.py")

    real_open = os.open

    def denied(path, *args, **kwargs):
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(SkipFile) as info:
        read_source(locked, Settings(), "python")
    assert info.value.reason == "unreadable"


def test_file_deleted_between_walk_and_read(tmp_path):
    write(tmp_path, "gone.py")
    (entry,) = walk(tmp_path)
    assert isinstance(entry, SourceFile)
    entry.path.unlink()
    with pytest.raises(SkipFile) as info:
        read_source(entry.path, Settings(), "python")
    assert info.value.reason == "vanished"


def test_file_deleted_before_classify(tmp_path):
    path = write(tmp_path, "gone.py")
    walker = RepoWalker(tmp_path, Settings())
    path.unlink()
    assert walker.classify("gone.py", path) == Skipped("gone.py", "vanished", "deleted while being indexed")


# --- content checks in read_source ------------------------------------------------------------------------

def test_binary_file_raises_skipfile_binary(tmp_path):
    path = write(tmp_path, "blob.py", b"x = 1\n\x00\x01\x02binary")
    with pytest.raises(SkipFile) as info:
        read_source(path, Settings(), "python")
    assert info.value.reason == "binary"


def test_too_large_in_read_source(tmp_path):
    path = write(tmp_path, "big.py", "x = 1\n" * 100)
    with pytest.raises(SkipFile) as info:
        read_source(path, Settings(max_file_bytes=100), "python")
    assert info.value.reason == "too_large"


def test_minified_long_line(tmp_path):
    path = write(tmp_path, "app.js", "var a=1;" * 300 + "\n")
    with pytest.raises(SkipFile) as info:
        read_source(path, Settings(max_line_chars=1000), "javascript")
    assert info.value.reason == "minified"


def test_minified_after_a_license_header(tmp_path):
    header = "".join(f"// line {n} of the license\n" for n in range(20))
    path = write(tmp_path, "lib.min.js", header + "var a=1;" * 300 + "\n")
    with pytest.raises(SkipFile) as info:
        read_source(path, Settings(max_line_chars=1000), "javascript")
    assert info.value.reason == "minified"


def test_one_embedded_long_line_keeps_the_file(tmp_path):
    code = "".join(f"def handler_{n}(request):\n    return render(request, {n})\n\n" for n in range(60))
    image = 'LOGO = "data:image/png;base64,' + "iVBORw0KGgo" * 200 + '"\n'
    path = write(tmp_path, "views.py", code + image + code.replace("handler_", "view_"))
    assert read_source(path, Settings(max_line_chars=1000), "python").startswith(b"def handler_0")


def test_minified_mean_line_length(tmp_path):
    line = "x" * 250
    path = write(tmp_path, "dense.js", "\n".join([line] * 10))
    with pytest.raises(SkipFile) as info:
        read_source(path, Settings(max_line_chars=2000, max_mean_line_chars=200), "javascript")
    assert info.value.reason == "minified"


def test_prose_of_long_lines_is_read(tmp_path):
    """A Markdown table's rows, or a paragraph to a line, are long on average and still prose."""
    row = "| `Prefork` | bool | " + "Enables use of the SO_REUSEPORT socket option. " * 5 + "| false |\n"
    path = write(tmp_path, "api.md", "# Config\n\n" + row * 40)
    assert read_source(path, Settings(max_line_chars=2000, max_mean_line_chars=200), "markdown").startswith(b"# Config")
    dense = write(tmp_path, "dense.js", row * 40)
    with pytest.raises(SkipFile):
        read_source(dense, Settings(max_line_chars=2000, max_mean_line_chars=200), "javascript")


def test_ordinary_file_is_read(tmp_path):
    content = b"def f():\n    return 1\n"
    path = write(tmp_path, "ok.py", content)
    assert read_source(path, Settings(), "python") == content
    assert read_source(write(tmp_path, "empty.py", b""), Settings(), "python") == b""


def test_directory_passed_to_read_source(tmp_path):
    with pytest.raises(SkipFile) as info:
        read_source(tmp_path, Settings(), "python")
    assert info.value.reason == "not_regular"
