"""The package keeps its structure (scripts/check_structure.py): layers, no import loops, SQL in
store/ alone, no class or module past its size; and the check finds each kind of breach."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "check_structure.py"
_spec = importlib.util.spec_from_file_location("check_structure", SCRIPT)
assert _spec is not None and _spec.loader is not None
check_structure = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_structure)


def test_the_package_keeps_its_structure() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def write_package(root: Path, files: dict[str, str]) -> Path:
    package = root / "codesearch"
    for name, text in {"__init__.py": "", **files}.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return package


@pytest.mark.parametrize(("files", "expected"), [
    ({"store/__init__.py": "", "store/a.py": "def f():\n    from ..search import b\n",
      "search/__init__.py": "", "search/b.py": ""},
     "codesearch/store/a.py:2: import points up: codesearch.search.b (search) is above store"),
    ({"search/__init__.py": "", "search/a.py": "from . import b\n", "search/b.py": "from .a import x\n"},
     "import loop: codesearch.search.a -> codesearch.search.b -> codesearch.search.a"),
    ({"daemon/__init__.py": "", "daemon/a.py": "import sqlite3\n"},
     "codesearch/daemon/a.py:1: SQL outside store/: imports sqlite3"),
    ({"daemon/__init__.py": "", "daemon/a.py": "def f(db):\n    db.execute('SELECT 1 FROM files')\n"},
     "codesearch/daemon/a.py:2: SQL outside store/: execute('SELECT 1 FROM files')"),
    ({"model.py": "class Big:\n" + "".join(f"    def m{i}(self): ...\n" for i in range(31))},
     "codesearch/model.py:1: class Big has 31 methods, over 30"),
    ({"model.py": "x = 1\n" * 601}, "codesearch/model.py: 601 lines, over 600"),
])
def test_the_check_finds_each_kind_of_breach(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    assert check_structure.violations(write_package(tmp_path, files)) == [expected]


def test_imports_down_and_within_a_layer_pass(tmp_path: Path) -> None:
    package = write_package(tmp_path, {
        "store/__init__.py": "", "store/catalog.py": "import sqlite3\nfrom ..model import x\nfrom . import edges\n",
        "store/edges.py": "def f(db):\n    db.execute('SELECT 1')\n",
        "cli/__init__.py": "", "cli/a.py": "from ..doctor import run\nfrom ..store import catalog\n",
        "doctor.py": "", "model.py": "",
    })
    assert check_structure.violations(package) == []
