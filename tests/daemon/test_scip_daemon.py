"""A running daemon takes up a SCIP index written at the repository's root (even one that
.gitignore leaves out, as projects often do), and lets a file edited after it fall back to
codesearch's own resolution."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from daemon_helpers import cli, start_daemon, wait_for

SCIP_FIXTURE = Path(__file__).resolve().parents[2] / "sample_repos" / "scip"
HOUR_NS = 3600 * 10**9


def _resolutions(daemon, name: str) -> dict[str, str]:
    answer = daemon.call("callees", {"name": name})
    return {r["qualified_name"] or r["name"]: r.get("resolution") for r in answer["results"]}


def test_the_daemon_reads_a_scip_index_when_it_appears_and_changes(request, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(SCIP_FIXTURE, root, ignore=shutil.ignore_patterns(".codesearch"))
    made = (root / "index.scip").read_bytes()
    (root / "index.scip").unlink()
    (root / ".gitignore").write_text("index.scip\n")
    daemon = start_daemon(request, root)
    assert "Shape.area" in _resolutions(daemon, "total")  # by name: `square.area()` taken for every `area`

    newest = max(p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file())
    (root / "index.scip").write_bytes(made)
    os.utime(root / "index.scip", ns=(newest + HOUR_NS, newest + HOUR_NS))
    wait_for(lambda: _resolutions(daemon, "total") == {"Square.area": "scip", "makeSquare": "scip"},
             timeout=30, what="the SCIP index's edges")
    assert daemon.call("stats")["scip_files"] == 3

    main = root / "src" / "main.ts"
    main.write_text(main.read_text() + "\nexport const extra = Math.max(1, 2);\n")
    os.utime(main, ns=(newest + 2 * HOUR_NS, newest + 2 * HOUR_NS))
    wait_for(lambda: "Shape.area" in _resolutions(daemon, "total"), timeout=30, what="main.ts resolved by name")
    assert daemon.call("stats")["scip_stale_files"] == 1
    assert _resolutions(daemon, "describe") == {"Circle.area": "scip"}  # shapes.ts: still the SCIP index's


def test_index_with_a_scip_file_is_refused_while_a_daemon_writes(request, tmp_path: Path) -> None:
    """The daemon alone writes its index and reads its own SCIP index (the setting, or
    index.scip): `index --scip` beside it is one line, exit 1, and writes nothing."""
    root = tmp_path / "repo"
    shutil.copytree(SCIP_FIXTURE, root, ignore=shutil.ignore_patterns(".codesearch"))
    given = tmp_path / "given.scip"
    (root / "index.scip").rename(given)
    start_daemon(request, root)
    done = cli("index", str(root), "--scip", str(given))
    assert done.returncode == 1 and "alone writes its index" in done.stderr
    assert done.stderr.strip().count("\n") == 0
