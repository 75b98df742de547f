"""Which of the repository's files a module an import names is, or that it is none of them (the
standard library, a dependency): what call resolution needs to link a call through an import,
and never to link one through a module from elsewhere to a definition of the same name here."""

from __future__ import annotations

import posixpath
import sys
from collections import defaultdict
from collections.abc import Iterable

from .script_project import NO_PROJECT, ScriptProject

_PYTHON = (".py", ".pyi", ".pyw")
_SCRIPT = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_STANDARD_PYTHON = frozenset(sys.stdlib_module_names)
_KOTLIN = (".kt", ".kts")
_STANDARD_KOTLIN = frozenset({"kotlin", "java", "javax", "jdk"})  # a Kotlin class need not live in a file of its name
RUST_STANDARD_CRATES = frozenset({"std", "core", "alloc", "proc_macro", "test"})  # never a file here
_RUST_ENTRY = ("lib", "main", "mod")  # the file that stands for a crate or a folder's module


class ModuleFiles:
    """The files a module names, by language: `files(module, importer)` is a list of paths, []
    where it cannot tell (resolve by name), or None where the module is not the repository's."""

    def __init__(self, paths: Iterable[str], root_name: str = "", script: ScriptProject = NO_PROJECT):
        self.by_stem: dict[str, list[str]] = defaultdict(list)  # last stem component -> paths
        self.by_folder: dict[str, list[str]] = defaultdict(list)  # last folder component -> folders
        self.folders: dict[str, list[str]] = defaultdict(list)  # folder -> its files
        self.root_name = root_name  # the indexed folder's name
        self.root_package = ""  # the indexed folder's name where it is a Python package itself
        self.root_crate = root_name.replace("-", "_")  # the indexed folder's name as a Rust crate
        self.script = script  # the indexed folder's JavaScript or TypeScript project: its name, its path aliases
        for path in paths:
            if path == "__init__.py":
                self.root_package = root_name
            stem = posixpath.splitext(path)[0]
            self.by_stem[stem.rsplit("/", 1)[-1]].append(path)
            folder = posixpath.dirname(path)
            if folder not in self.folders:
                self.by_folder[folder.rsplit("/", 1)[-1]].append(folder)
            self.folders[folder].append(path)
        self._packages: dict[tuple[str, str], set[str]] = {}  # (folder, extension) -> its files

    @classmethod
    def of_root(cls, paths: Iterable[str], root: str) -> ModuleFiles:
        """The files of an index of the folder `root`, with its name and its package's."""
        return cls(paths, posixpath.basename(root), ScriptProject.of_root(root) if root else NO_PROJECT)

    def package_files(self, path: str) -> set[str]:
        """The files of a file's package: its folder's files of its own language, found once a
        run for each folder (shared: read it, never change it)."""
        key = (posixpath.dirname(path), posixpath.splitext(path)[1])
        found = self._packages.get(key)
        if found is None:
            found = self._packages[key] = {p for p in self.folders.get(key[0], ()) if p.endswith(key[1])}
        return found

    def _stems(self, key: str, exact: bool = False) -> list[str]:
        """Files whose path without extension is `key` or ends with `/key`."""
        last = key.rsplit("/", 1)[-1]
        return [p for p in self.by_stem.get(last, ())
                if (stem := posixpath.splitext(p)[0]) == key or (not exact and stem.endswith("/" + key))]

    def _package(self, key: str, exact: bool = False) -> list[str]:
        """The file that stands for a folder (`__init__`, `index`) or the module file itself."""
        return (self._stems(key, exact) or self._stems(key + "/__init__", exact)
                or self._stems(key + "/index", exact))

    def files(self, module: str, importer: str) -> list[str] | None:
        if importer.endswith(_PYTHON):
            return self._python(module, importer)
        if importer.endswith(".go"):
            return self._go(module)
        if importer.endswith(_SCRIPT):
            return self._script(module, importer)
        if importer.endswith(".rs"):
            return self._rust(module, importer)
        if importer.endswith(".java"):
            return self._java(module)
        if importer.endswith(_KOTLIN):
            return None if module.partition(".")[0] in _STANDARD_KOTLIN else []
        return []

    def _python(self, module: str, importer: str) -> list[str] | None:
        if module.startswith("."):
            dots = len(module) - len(module.lstrip("."))
            base = posixpath.dirname(importer)
            for _ in range(dots - 1):
                base = posixpath.dirname(base)
            rest = module[dots:].replace(".", "/")
            key = posixpath.join(base, rest) if rest else base
            return self._package(key, exact=True) if key else self._stems("__init__", exact=True)
        if module.split(".")[0] in _STANDARD_PYTHON:
            return None
        parts = module.split(".")
        while parts:  # `a.b.C` (a member of a.b), then a.b, then a
            found = self._package("/".join(parts))
            if found:
                return found
            parts.pop()
        return self._inside_root_package(module) if module.partition(".")[0] == self.root_package else None

    def _inside_root_package(self, module: str) -> list[str] | None:
        """`pkg.a.b` where the indexed folder is the package `pkg` itself (its name is not part of
        any path here): `a/b` from the top, exactly."""
        parts = module.split(".")[1:]
        while parts:
            found = self._package("/".join(parts), exact=True)
            if found:
                return found
            parts.pop()
        return self._stems("__init__", exact=True) or None  # `pkg` itself: its __init__.py

    def _java(self, module: str) -> list[str] | None:
        """`a.b.C` (or a class nested in it, `a.b.C.D`) is the file `a/b/C.java`: a public class
        lives in the file of its name, so a class no file here is named for is from elsewhere."""
        parts = module.split(".")
        while len(parts) > 1:
            found = [p for p in self._stems("/".join(parts)) if p.endswith(".java")]
            if found:
                return found
            parts.pop()
        return None

    def _go(self, module: str) -> list[str] | None:
        parts = module.split("/")
        if "." not in parts[0]:
            return None  # the standard library: no domain in its path
        for start in range(1, len(parts)):
            key = "/".join(parts[start:])
            last = key.rsplit("/", 1)[-1]
            folders = [f for f in self.by_folder.get(last, ()) if f == key or f.endswith("/" + key)]
            if folders:
                return [p for f in folders for p in self.folders[f] if p.endswith(".go")]
        return []  # the module's root package, or another module: not told apart here

    def _script(self, module: str, importer: str) -> list[str] | None:
        if module.startswith("."):
            key = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module))
            return self._package(posixpath.splitext(key)[0] if key.endswith(_SCRIPT) else key, exact=True)
        if module.startswith("node:"):
            return None
        for target in self.script.aliased(module):  # the project's path aliases, as the compiler reads them
            found = self._package(posixpath.splitext(target)[0] if target.endswith(_SCRIPT) else target, exact=True)
            if found:
                return found
        name = self.script.package_name
        if name and (module == name or module.startswith(name + "/")):
            inside = module[len(name) + 1:]  # the package's own name: its files from the top
            found = self._package(inside, exact=True) if inside else self._stems("index", exact=True)
            if found:
                return found
        key = module.lstrip("@~/").removeprefix("src/")
        if "/" not in key:
            return None
        package, _, inside = key.partition("/")
        # a package's own source under its name (`pkg/src/sub`), or indexed from that source folder
        # itself, where `pkg/sub` is `sub` from the top
        return (self._package(key) or self._package(f"{package}/src/{inside}")
                or self._package(inside, exact=True) or None)

    def _rust(self, module: str, importer: str) -> list[str] | None:
        """`crate.a.b`, `self.a`, `super.a` from the importer's crate or module; `name.a` from the
        workspace's crate `name` (a folder of that name), else a dependency or the standard library."""
        parts = [p for p in module.split(".") if p]
        if not parts or parts[0] in RUST_STANDARD_CRATES:
            return None if parts else []
        if parts[0] == "crate":
            base = self._rust_source(posixpath.dirname(importer))
            parts = parts[1:]
        elif parts[0] in ("self", "super"):
            stem = posixpath.splitext(importer)[0]
            base = posixpath.dirname(stem) if posixpath.basename(stem) in _RUST_ENTRY else stem
            while parts and parts[0] in ("self", "super"):
                base = posixpath.dirname(base) if parts.pop(0) == "super" else base
        else:  # a module beside the importer's (`mod a;` names `a` in paths), else a crate
            stem = posixpath.splitext(importer)[0]
            here = posixpath.dirname(stem) if posixpath.basename(stem) in _RUST_ENTRY else stem
            beside = posixpath.join(here, parts[0])
            if self._stems(beside, exact=True) or self._stems(beside + "/mod", exact=True):
                base = here
            else:
                crate = self._rust_crate(parts.pop(0))
                if crate is None:
                    return None
                base = crate
        while parts:  # `a.b.C` (a member of a.b), then a.b, then a
            key = posixpath.join(base, *parts) if base else "/".join(parts)
            found = self._stems(key, exact=True) or self._stems(key + "/mod", exact=True)
            if found:
                return found
            parts.pop()
        own = self._stems(base, exact=True) if base else []
        return own or [p for entry in _RUST_ENTRY for p in self._stems(posixpath.join(base, entry), exact=True)][:1]

    def _rust_source(self, folder: str) -> str:
        """The source folder of the crate a folder belongs to: the nearest `src` above it."""
        walked = folder
        while walked and posixpath.basename(walked) != "src":
            walked = posixpath.dirname(walked)
        return walked or folder

    def _rust_crate(self, name: str) -> str | None:
        """The source folder of the workspace's crate `name` (a folder so named, `-` for `_`), or
        None: a dependency."""
        folders = self.by_folder.get(name, []) + self.by_folder.get(name.replace("_", "-"), [])
        for folder in sorted(folders, key=len):
            source = posixpath.join(folder, "src")
            if source in self.folders:
                return source
        return "src" if "src" in self.folders and name == self.root_crate else None
