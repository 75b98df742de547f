"""Gitignore-style rules: .gitignore at every level, .git/info/exclude and .codesearchignore."""

from __future__ import annotations

from pathlib import Path

import pathspec

from ..config import IGNORE_FILE_NAME

IGNORE_FILES = (".gitignore", IGNORE_FILE_NAME)
ALWAYS_SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})


def _read_spec(paths: list[Path]) -> pathspec.GitIgnoreSpec | None:
    lines: list[str] = []
    for path in paths:
        try:
            lines.extend(path.read_text(encoding="utf-8", errors="replace").splitlines())
        except OSError:
            continue
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


class IgnoreRules:
    """Answers "is this path ignored?" the way git does, deepest rule file first.

    Rule files are read lazily per directory and cached; call `forget(dir)` when one changes.
    """

    def __init__(self, root: Path):
        self.root = root
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}
        self._root_extra = _read_spec([root / ".git" / "info" / "exclude"])

    def forget(self, rel_dir: str = "") -> None:
        """Drop cached rules (all of them when rel_dir is empty), e.g. after a .gitignore edit."""
        if not rel_dir:
            self._specs.clear()
        else:
            self._specs.pop(rel_dir, None)

    def _spec_for(self, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        if rel_dir not in self._specs:
            folder = self.root / rel_dir if rel_dir else self.root
            self._specs[rel_dir] = _read_spec([folder / name for name in IGNORE_FILES])
        return self._specs[rel_dir]

    def is_ignored(self, rel_path: str, is_dir: bool) -> bool:
        """True when the rules exclude `rel_path` ('/'-separated, relative to the root).

        Ancestors are not checked here: the walker never descends into an ignored folder, and
        `is_ignored_anywhere` checks the whole chain for paths that arrive from outside a walk.
        """
        parts = rel_path.split("/")
        if parts[-1] in ALWAYS_SKIPPED_DIRS:
            return True
        # deepest rule file first: a deeper file overrides a shallower one
        for depth in range(len(parts) - 1, -1, -1):
            rel_dir = "/".join(parts[:depth])
            spec = self._spec_for(rel_dir)
            specs = [spec] if depth else [spec, self._root_extra]
            for candidate in specs:
                if candidate is None:
                    continue
                sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
                result = candidate.check_file(sub)
                if result.include is not None:
                    return bool(result.include)
        return False

    def is_ignored_anywhere(self, rel_path: str, is_dir: bool) -> bool:
        """Like is_ignored, but also true when any parent folder is ignored."""
        parts = rel_path.split("/")
        for depth in range(1, len(parts)):
            if self.is_ignored("/".join(parts[:depth]), True):
                return True
        return self.is_ignored(rel_path, is_dir)
