"""Import edges: which of the repository's files each import statement names (by path suffix,
'flask/app' or 'app'; a `./x.js` path from the importer's folder), written as file-to-file edges,
and read back for call resolution."""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable

from .module_files import RUST_STANDARD_CRATES
from .schema import IMPORTS
from .sql import select_in
from .sqlite import sqlite3

MAX_ARRIVALS = 64  # files come or go: past this many, every import is resolved again
_MODULE_SPLIT = re.compile(r"[./\\:]+")

_KNOWN_EXTENSION = re.compile(r"\.(h|hpp|js|ts|mjs|cjs|py|rb|php|zig|lua|sh|jsx|tsx)$")


def _module_keys(module: str) -> list[str]:
    """Path suffixes an import might refer to: 'a.b.c' -> 'a/b/c', './x' -> 'x', '<x.h>' -> 'x'."""
    module = module.strip().strip("\"'<>`;")
    module = _KNOWN_EXTENSION.sub("", module)
    parts = [p for p in _MODULE_SPLIT.split(module) if p and p not in ("crate", "self", "super", "@")]
    return ["/".join(parts[i:]) for i in range(len(parts))]


def _grouped(module: str) -> list[str]:
    """`a::{b, c::{self, D}}` -> [`a::b`, `a::c::self`, `a::c::D`]: the paths a grouped import names."""
    head, _, rest = module.partition("{")
    inner, depth, start, parts = rest.rsplit("}", 1)[0], 0, 0, []
    for i, char in enumerate(inner + ","):
        depth += (char == "{") - (char == "}")
        if char == "," and depth == 0:
            parts.append(inner[start:i].strip().split(" as ")[0].strip())
            start = i + 1
    return [path for part in parts if part for path in ([head + part] if "{" not in part else _grouped(head + part))]


def _stem_keys(path: str) -> list[str]:
    """The names a file answers to in imports: its path without extension ('flask/app'), and
    its folder's for an `__init__`, `index`, `mod` or `lib` file."""
    stem = posixpath.splitext(path)[0]
    keys = [stem]
    if posixpath.basename(stem) in ("__init__", "index", "mod", "lib") and posixpath.dirname(stem):
        keys.append(posixpath.dirname(stem))
    return keys


class _FileIndex:
    """Finds the files an import names by path suffix ('flask/app', 'app'), from an index of
    the files' last path components (one entry a file, not one a suffix)."""

    def __init__(self, paths: Iterable[str]):
        self.by_last: dict[str, list[tuple[str, str]]] = defaultdict(list)  # last component -> (stem, path)
        for path in paths:
            for stem in _stem_keys(path):
                self.by_last[stem.rsplit("/", 1)[-1]].append((stem, path))

    def _suffix(self, key: str) -> list[str]:
        last = key.rsplit("/", 1)[-1]
        return [path for stem, path in self.by_last.get(last, ()) if stem == key or stem.endswith("/" + key)]

    def resolve(self, module: str, importer: str) -> list[str]:
        if "{" in module:  # Rust's `a::{b, c::D}`, PHP's `A\{B, C}`: each path the group names
            return sorted({path for each in _grouped(module) for path in self.resolve(each, importer)})
        if module.startswith(("./", "../")):  # a path from the importer's folder: that file or none
            local = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module))
            key = _KNOWN_EXTENSION.sub("", local)
            return [path for stem, path in self.by_last.get(key.rsplit("/", 1)[-1], ()) if stem == key][:1]
        if module.startswith("."):  # relative import: try next to the importer first
            local = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module.lstrip(".") or "."))
            found = self._suffix(posixpath.splitext(local)[0])
            if found:
                return found[:1]
        if "::" in module and module.lstrip(":").split("::", 1)[0] in RUST_STANDARD_CRATES:
            return []
        for key in _module_keys(module):
            found = self._suffix(key)
            if found:
                return found if len(found) <= 2 else []
        if "::" in module:  # Rust's `a::b::C`: an item C of the module a::b
            return self.resolve(module.rsplit("::", 1)[0], importer)
        return []


def rebuild_import_edges(db: sqlite3.Connection, changed_paths: set[str], arrived_or_gone: set[str],
                         everything: bool = False) -> None:
    """Resolve the imports that may have changed meaning: those of changed files, and those that
    may name a file that arrived or went (by its last path component); or all of them."""
    file_rids = dict(db.execute("SELECT f.path, c.rid FROM chunks c JOIN files f ON f.fid = c.fid "
                                "WHERE c.kind = 'file'").fetchall())
    index = _FileIndex(file_rids)
    if everything:
        db.execute(f"DELETE FROM edges WHERE kind = {IMPORTS}")
        rows: Iterable = db.execute("SELECT f.path, i.module FROM imports i JOIN files f ON f.fid = i.fid").fetchall()
    else:
        lasts = sorted({stem.rsplit("/", 1)[-1] for path in arrived_or_gone for stem in _stem_keys(path)})
        if len(lasts) > MAX_ARRIVALS:  # a checkout or a big move: everything is cheaper than guessing
            rebuild_import_edges(db, changed_paths, arrived_or_gone, everything=True)
            return
        importers = set(changed_paths)
        if lasts:  # files whose imports mention the name of a file that came or went (in C: a scan)
            mentions = " OR ".join("instr(i.module, ?) > 0" for _ in lasts)
            importers |= {r[0] for r in db.execute(f"SELECT DISTINCT f.path FROM imports i JOIN files f "
                                                   f"ON f.fid = i.fid WHERE {mentions}", lasts)}
        if not importers:
            return
        sources = [file_rids[p] for p in importers if p in file_rids]
        select_in(db, f"DELETE FROM edges WHERE kind = {IMPORTS} AND src IN ({{}})", sources)
        rows = select_in(db, "SELECT f.path, i.module FROM imports i JOIN files f ON f.fid = i.fid "
                             "WHERE f.path IN ({})", sorted(importers))
    edges = set()
    for path, module in rows:
        src = file_rids.get(path)
        if not src or not module:
            continue
        for target in index.resolve(module, path):
            if target != path and target in file_rids:
                edges.add((src, file_rids[target]))
    db.executemany(f"INSERT OR IGNORE INTO edges(src, kind, dst, weight) VALUES (?, {IMPORTS}, ?, 1)", sorted(edges))


def imported_files(db: sqlite3.Connection, paths: list[str]) -> dict[str, set[str]]:
    """The files each of these files imports (by the import edges)."""
    imported: dict[str, set[str]] = defaultdict(set)
    for src_path, dst_path in select_in(db, f"SELECT fa.path, fb.path FROM files fa "
                                            f"JOIN chunks a ON a.fid = fa.fid AND a.kind = 'file' "
                                            f"JOIN edges e ON e.src = a.rid AND e.kind = {IMPORTS} "
                                            f"JOIN chunks b ON b.rid = e.dst JOIN files fb ON fb.fid = b.fid "
                                            f"WHERE fa.path IN ({{}})", paths):
        imported[src_path].add(dst_path)
    return imported
