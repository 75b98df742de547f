"""What a JavaScript or TypeScript project's own files say about its imports: the name its
package.json gives it (a package's tests import it by that name: `import * as z from "zod"`) and
the path aliases of its tsconfig.json or jsconfig.json (`compilerOptions.paths`: `"zustand/*":
["./src/*.ts"]` lets `import "zustand/shallow"` name src/shallow.ts). Each is read from the indexed
folder or the nearest folder above it that has one, as the compiler finds them."""

from __future__ import annotations

import json
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

SEARCH_DEPTH = 3  # folders the project's files are looked for in: the indexed one and those above it
CONFIG_NAMES = ("tsconfig.json", "jsconfig.json")
# a string, or a comment: tsconfig.json is JSON with comments and trailing commas
_STRING_OR_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")

Aliases = tuple[tuple[str, tuple[str, ...]], ...]  # (pattern, targets relative to the indexed folder)


def _nearest(root: Path, names: tuple[str, ...]) -> tuple[Path, dict] | None:
    """The first of `names` in `root` or the folders above it, parsed as JSON with comments."""
    folder = root
    for _ in range(SEARCH_DEPTH):
        for name in names:
            try:
                text = (folder / name).read_text(encoding="utf-8")
            except (OSError, ValueError):
                continue
            try:
                found = json.loads(_TRAILING_COMMA.sub(r"\1", _STRING_OR_COMMENT.sub(
                    lambda m: m.group(0) if m.group(0).startswith('"') else "", text)))
            except ValueError:
                return None
            return (folder, found) if isinstance(found, dict) else None
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


def _path_aliases(root: Path) -> Aliases:
    """`compilerOptions.paths` with each target made relative to `root` (from `baseUrl`, else the
    config's folder); targets outside `root` are left out, as the index holds none of their files."""
    found = _nearest(root, CONFIG_NAMES)
    options = found[1].get("compilerOptions") if found else None
    if not found or not isinstance(options, dict) or not isinstance(options.get("paths"), dict):
        return ()
    base_url = options.get("baseUrl")
    base = found[0] / base_url if isinstance(base_url, str) else found[0]
    aliases = []
    for pattern, targets in options["paths"].items():
        inside = []
        for target in targets if isinstance(targets, list) else ():
            if isinstance(target, str):
                relative = os.path.relpath(os.path.normpath(base / target), root).replace(os.sep, "/")
                if not relative.startswith("../") and relative != "..":
                    inside.append(relative)
        if inside and isinstance(pattern, str):
            aliases.append((pattern, tuple(inside)))
    return tuple(aliases)


@dataclass(frozen=True)
class ScriptProject:
    """The project's name and path aliases; empty where the indexed folder has none."""

    package_name: str = ""
    path_aliases: Aliases = ()

    @classmethod
    def of_root(cls, root: str) -> ScriptProject:
        folder = Path(root)
        package = _nearest(folder, ("package.json",))
        name = package[1].get("name") if package else None
        return cls(name if isinstance(name, str) else "", _path_aliases(folder))

    def aliased(self, module: str) -> list[str]:
        """The paths (relative to the indexed folder, as the config writes them) that the alias
        matching `module` names, [] where none does: a pattern without `*` matched whole first,
        else the one with the longest text before its `*` (the compiler's order)."""
        best: tuple[int, list[str]] | None = None
        for pattern, targets in self.path_aliases:
            prefix, star, suffix = pattern.partition("*")
            if not star:
                if module == pattern:
                    return [posixpath.normpath(target) for target in targets]
                continue
            if module.startswith(prefix) and module.endswith(suffix) and len(module) >= len(prefix) + len(suffix) \
                    and (best is None or len(prefix) > best[0]):
                middle = module[len(prefix):len(module) - len(suffix)]
                best = (len(prefix), [posixpath.normpath(target.replace("*", middle, 1)) for target in targets])
        return best[1] if best else []


NO_PROJECT = ScriptProject()
