"""Walk a repository: what to index, and what to skip with a reason."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

from ..config import Settings
from ..paths import INDEX_DIR_NAME, escape_name, on_disk
from .ignore import ALWAYS_SKIPPED_DIRS, IGNORE_FILES, Chain, IgnoreRules, ignored_by
from .languages import language_for_name


@dataclass(frozen=True)
class SourceFile:
    """A file to index, as the walk saw it."""

    rel: str  # '/'-separated, relative to the root, escaped (paths.escape_name)
    disk: str  # where it is on disk
    size: int
    mtime_ns: int
    language: str

    @property
    def path(self) -> Path:
        """Made when asked: a Path for every file walked was a noticeable share of a walk that
        mostly finds nothing changed."""
        return Path(self.disk)


@dataclass(frozen=True)
class Skipped:
    """A path left out, and why (the reason is a short stable word used in stats)."""

    rel: str
    reason: str
    detail: str = ""


GENERATED_SUFFIXES = (".min.js", ".min.css", ".min.mjs", ".bundle.js", ".map", ".pb.go", "_pb2.py",
                      ".lock", "-lock.json", ".lock.json", ".g.dart", ".designer.cs")


class RepoWalker:
    """Yields SourceFile and Skipped entries for a repository, honouring ignore files."""

    def __init__(self, root: Path, settings: Settings, index_dir: Path | None = None):
        self.root = Path(root).resolve()
        self.settings = settings
        self.index_dir = index_dir.resolve() if index_dir else None
        self.ignore = IgnoreRules(self.root)

    def walk(self) -> Iterator[SourceFile | Skipped]:
        yield from self._walk_dir(str(self.root), "", self.ignore.outside)

    def _walk_dir(self, folder: str, rel_dir: str, above: Chain) -> Iterator[SourceFile | Skipped]:
        """`above`: the ignore chain `folder` itself was matched with; the entries are matched
        against this folder's chain only, not against every ancestor's rule files again. Paths
        stay strings (a Path per entry was a fifth of the walk's time)."""
        try:
            entries = sorted(os.scandir(folder), key=attrgetter("name"))
        except OSError as exc:
            yield Skipped(rel_dir or ".", "unreadable", exc.strerror or str(exc))
            return
        chain = self.ignore.chain_below(rel_dir, above, [e.name for e in entries if e.name in IGNORE_FILES])
        prefix = f"{rel_dir}/" if rel_dir else ""
        for entry in entries:
            rel = prefix + escape_name(entry.name)
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError as exc:
                yield Skipped(rel, "unreadable", exc.strerror or str(exc))
                continue
            if is_dir and (entry.name in ALWAYS_SKIPPED_DIRS or self._is_index_dir(folder, entry)):
                continue
            if ignored_by(chain, rel, is_dir or (is_link and os.path.isdir(entry.path))):
                continue
            if is_link:
                yield self.symlink(Path(entry.path), rel)
            elif is_dir:
                yield from self._walk_dir(entry.path, rel, chain)
            else:
                yield self.classify(rel, entry.path)

    def _is_index_dir(self, folder: str, entry: os.DirEntry[str]) -> bool:
        """The configured index folder, and any ROOT/.codesearch (another index of this root).
        `entry` is a folder, not a link: resolving keeps its name, so only a folder of the
        right name is resolved."""
        if entry.name == INDEX_DIR_NAME and os.path.realpath(folder) == str(self.root):
            return True
        return (self.index_dir is not None and entry.name == self.index_dir.name
                and os.path.realpath(entry.path) == str(self.index_dir))

    def symlink(self, path: Path, rel: str) -> Skipped:
        """Links are never followed: a target inside the root is indexed under its own path, a
        target outside it is not part of the repository, and following links invites loops."""
        try:
            target = path.resolve(strict=True)
        except RuntimeError:
            return Skipped(rel, "symlink_loop", "the link resolves to itself")
        except OSError:
            return Skipped(rel, "broken_symlink", "the link's target does not exist")
        if target != self.root and self.root not in target.parents:
            return Skipped(rel, "outside_root", f"a link to {escape_name(str(target))}, outside the repository")
        if target == self.root or target in path.parents:
            return Skipped(rel, "symlink_loop", "points at a folder that contains it")
        return Skipped(rel, "symlink", f"indexed at its target {escape_name(target.relative_to(self.root).as_posix())}")

    def walk_folder(self, rel: str) -> Iterator[SourceFile | Skipped]:
        """Walk one folder of the repository (for incremental updates)."""
        yield from self._walk_dir(str(on_disk(self.root, rel)), rel, self.ignore.chain_for(rel.rpartition("/")[0]))

    def classify(self, rel: str, path: str | Path) -> SourceFile | Skipped:
        """Decide from the name and a stat whether a regular file is indexed."""
        name = rel[rel.rfind("/") + 1:]
        language = language_for_name(name)
        if language is None:
            return Skipped(rel, "unsupported_type")
        if name.lower().endswith(GENERATED_SUFFIXES):
            return Skipped(rel, "generated", "generated or minified by its name")
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return Skipped(rel, "vanished", "deleted while being indexed")
        except OSError as exc:
            return Skipped(rel, "unreadable", exc.strerror or str(exc))
        if not stat.S_ISREG(st.st_mode):
            return Skipped(rel, "not_regular")
        if st.st_size > self.settings.max_file_bytes:
            return Skipped(rel, "too_large", f"{st.st_size} bytes > {self.settings.max_file_bytes}")
        if not os.access(path, os.R_OK):
            return Skipped(rel, "unreadable", "permission denied")
        return SourceFile(rel=rel, disk=os.fspath(path), size=st.st_size, mtime_ns=st.st_mtime_ns, language=language)


