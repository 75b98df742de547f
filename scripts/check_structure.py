"""Checks the package's structure, which the test suite enforces: prints each violation on a line
of its own and exits 1 if there is any.

Rules, read with `ast` from the source of `codesearch/` (nothing is imported):

- Layers. Each module belongs to the layer of its package (a top-level module to its own name),
  and imports only from its own layer or those below. Lowest first:

      foundations  model, paths, text, faults, gc_pause, filters, wire, locations, vocabulary,
                   config (and the package's `__init__`)
      ingest       files to chunks and graph facts
      access       what a client may read: ingest's ignore rules applied to secrets
      analysis     what the indexer computes per chunk, from ingest's records
      embedding    the models
      store        SQLite and Chroma; knows nothing of tokenizing, search or processes
      indexing     writes the store
      graph        the store's graph as NetworkX graphs, and their file formats
      search       reads the store
      workspace    the repositories one answer covers (their boosts follow search's fusion rule)
      api          calls search and indexing
      team         many repositories in Milvus: stateless indexers, search with search's ranking
      daemon       serves the api in a process of its own
      transports   carry api requests to a service
      cli, doctor, eval   front-ends and tools, beside each other at the top

  Modules of one layer may import each other (no loops).
- No import loops: no cycle in the graph of imports between modules of `codesearch/`.
- SQL lives in `codesearch/store/`: no module outside it imports `sqlite3` (or `pysqlite3`), nor
  passes a string that reads as an SQL statement to `execute`, `executemany` or `executescript`.
- No class has more than MAX_METHODS methods; no module is longer than MAX_LINES lines.

Every import counts, for layers and loops alike: one inside a function runs as surely as one at
the top, only later; one under `if TYPE_CHECKING:` is a dependency on the module's types, which
a layer below must not know, and a loop through it is still a loop for whoever reads the code.

Use: `python scripts/check_structure.py [PACKAGE_DIR]` (default: `codesearch/` beside this folder).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__", "model", "paths", "text", "faults", "gc_pause", "filters", "wire", "locations", "vocabulary",
     "config"),
    ("ingest",), ("access",), ("analysis",), ("embedding",), ("store",), ("indexing",), ("graph",), ("search",),
    ("workspace",), ("api",), ("team",), ("daemon",), ("transports",), ("cli", "doctor", "eval"),
)
RANK: dict[str, int] = {name: rank for rank, names in enumerate(LAYERS) for name in names}
MAX_METHODS = 30
MAX_LINES = 600
SQL_CALLS = frozenset({"execute", "executemany", "executescript"})
SQL_STATEMENT = re.compile(r"\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|WITH|REPLACE|BEGIN|COMMIT|"
                           r"ROLLBACK|SAVEPOINT|RELEASE|VACUUM|ANALYZE|ATTACH|DETACH)\b", re.IGNORECASE)
SQLITE_MODULES = frozenset({"sqlite3", "pysqlite3"})


def module_name(package: Path, path: Path) -> str:
    """The dotted name of a source file: `codesearch.store.catalog`, `codesearch.search` for an `__init__`."""
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(name: str, is_package: bool, tree: ast.Module, modules: set[str]) -> dict[str, int]:
    """The modules of the package that `name` imports anywhere in its source, each with the line of
    its first import; `from X import y` names module `X.y` where that is one, else `X`."""
    found: dict[str, int] = {}
    here = name.split(".") if is_package else name.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else (node.module or "")
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import a.b.c` of a name inside a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                found.setdefault(target, node.lineno)
    return found


def layer_of(name: str) -> tuple[str, int]:
    """The layer a module belongs to: its package, or its own name at the top of the package."""
    parts = name.split(".")
    key = parts[1] if len(parts) > 1 else "__init__"
    if key not in RANK:
        raise SystemExit(f"{name}: in no layer; add {key!r} to LAYERS in {Path(__file__).name}")
    return key, RANK[key]


def import_loops(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Every strongly connected set of two or more modules (Tarjan), each as one cycle through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [one_cycle(graph, set(component), component[0]) for component in sorted(components)]


def one_cycle(graph: dict[str, dict[str, int]], members: set[str], start: str) -> list[str]:
    """A shortest path from `start` back to itself inside one strongly connected set (breadth first)."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node]):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if len(path) > 1 else [start, node, start]
                if target in members and target not in previous:
                    previous[target] = node
                    following.append(target)
        frontier = following
    return [start, start]


def sql_violations(where: str, tree: ast.Module) -> list[str]:
    """Imports of the SQLite library, and SQL statements handed to a cursor or connection."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name.partition(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [(node.module or "").partition(".")[0]]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and SQL_STATEMENT.match(node.args[0].value)):
            found.append(f"{where}:{node.lineno}: SQL outside store/: {node.func.attr}({node.args[0].value[:40]!r})")
            continue
        else:
            continue
        found += [f"{where}:{node.lineno}: SQL outside store/: imports {name}"
                  for name in names if name in SQLITE_MODULES]
    return found


def violations(package: Path) -> list[str]:
    """Every breach of the rules above in the package at `package`, one line each."""
    sources = {module_name(package, path): path for path in sorted(package.rglob("*.py"))}
    trees = {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, path in sources.items()}
    modules = set(sources)
    found: list[str] = []
    graph: dict[str, dict[str, int]] = {}
    for name, path in sources.items():
        where = path.relative_to(package.parent).as_posix()
        graph[name] = imported_modules(name, path.name == "__init__.py", trees[name], modules)
        own_key, own_rank = layer_of(name)
        for target, line in sorted(graph[name].items(), key=lambda item: item[1]):
            key, rank = layer_of(target)
            if rank > own_rank:
                found.append(f"{where}:{line}: import points up: {target} ({key}) is above {own_key}")
        if not where.startswith(f"{package.name}/store/"):
            found += sql_violations(where, trees[name])
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            found.append(f"{where}: {lines} lines, over {MAX_LINES}")
        for node in ast.walk(trees[name]):
            if isinstance(node, ast.ClassDef):
                methods = sum(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) for item in node.body)
                if methods > MAX_METHODS:
                    found.append(f"{where}:{node.lineno}: class {node.name} has {methods} methods, over {MAX_METHODS}")
    found += [f"import loop: {' -> '.join(cycle)}" for cycle in import_loops(graph)]
    return found


def main(argv: list[str]) -> int:
    package = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "codesearch"
    found = violations(package)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
