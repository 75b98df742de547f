"""Folders that hold code which is not the project's own, found from the structure of the index's
file list rather than from folder names (`vendor/`, `third_party/` and `node_modules/` are named
in analysis/content_class.py already; a copied library is often called something else: `_vendor/`,
`externals/`, `packages/urllib3/`, `deps/`):

- a copy of another folder: most of its files have an identical twin (same content hash) in a
  shallower folder (generated docs copied into a docset, a build folder, a library checked in
  twice);
- a project of its own inside the project's source: a folder that holds a licence or a package
  manifest and sits somewhere inside a folder (not the root) that itself holds source files (a
  library dropped into a package). A package of a monorepo sits beside the others
  (`packages/zod`, `serde_derive`), in folders without source files of their own, and is not
  flagged.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from ..ingest.languages import spec_for_path

MIN_COPIED_FILES = 3  # a folder is a copy when at least this many of its files are copies ...
COPIED_SHARE = 0.5  # ... and at least this share of them
LICENCE = re.compile(r"^(licen[cs]e|copying|unlicense)([._-][\w.-]*)?$", re.IGNORECASE)
MANIFEST = re.compile(r"^(package\.json|setup\.py|pyproject\.toml|Cargo\.toml|go\.mod|composer\.json|pom\.xml|"
                      r"build\.gradle(\.kts)?|mix\.exs|Package\.swift|build\.zig|[^/]+\.(gemspec|csproj|cabal))$")


@dataclass(frozen=True)
class FileEntry:
    """What the structure needs of a file: its path, content hash ("" when not indexed)."""

    path: str
    content_hash: str


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def copied_folders(files: Iterable[FileEntry]) -> set[str]:
    """Folders most of whose files are copies of files in a shallower (or, as deep, earlier) folder."""
    by_hash: dict[str, list[str]] = defaultdict(list)
    per_folder: dict[str, int] = defaultdict(int)
    for f in files:
        if f.content_hash:
            by_hash[f.content_hash].append(f.path)
            per_folder[_folder(f.path)] += 1
    copies: dict[str, int] = defaultdict(int)
    for paths in by_hash.values():
        if len(paths) < 2:
            continue
        original = min(paths, key=lambda p: (p.count("/"), p))
        for path in paths:
            if path != original and _folder(path) != _folder(original):
                copies[_folder(path)] += 1
    return {folder for folder, n in copies.items()
            if n >= MIN_COPIED_FILES and n >= COPIED_SHARE * per_folder[folder]}


def nested_projects(files: Iterable[FileEntry]) -> set[str]:
    """Folders with a licence or package manifest of their own inside a folder (not the root)
    that directly holds source files (a build script or manifest is not the source meant)."""
    marked: set[str] = set()
    with_source: set[str] = set()
    for f in files:
        folder, name = _folder(f.path), f.path.rsplit("/", 1)[-1]
        if LICENCE.match(name) or MANIFEST.match(name):
            marked.add(folder)
        elif f.content_hash and spec_for_path(f.path) is not None:
            with_source.add(folder)
    return {folder for folder in marked if any(a in with_source for a in _ancestors(folder))}


def _ancestors(folder: str) -> list[str]:
    """The folders that hold `folder`, the root left out."""
    out = []
    while "/" in folder:
        folder = _folder(folder)
        out.append(folder)
    return out


def vendored_folders(files: Iterable[FileEntry]) -> frozenset[str]:
    entries = list(files)
    return frozenset(copied_folders(entries) | nested_projects(entries))


def in_folders(path: str, folders: frozenset[str]) -> bool:
    """Whether `path` lies in one of `folders` (at any depth)."""
    if not folders:
        return False
    folder = _folder(path)
    while folder:
        if folder in folders:
            return True
        folder = _folder(folder)
    return False
