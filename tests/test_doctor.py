"""`codesearch doctor`: one line per check with what to do, exit 1 only when something needs
action. A healthy index served by a daemon, no daemon, a missing model (a settings override); the
damaged vector store is in tests/indexing/test_recovery.py, beside the other damage."""

from __future__ import annotations

import json
import stat

import pytest
from daemon_helpers import cli, seed_repo, seeded_daemon, seeded_tree  # noqa: F401 - fixtures by name


def doctor(root, *flags: str) -> tuple[int, dict]:
    done = cli("doctor", str(root), "--json", *flags, timeout=180)
    assert "Traceback" not in done.stderr
    return done.returncode, json.loads(done.stdout)


def by_area(report: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for check in report["checks"]:
        out.setdefault(check["area"], []).append(check)
    return out


def test_a_healthy_index_with_its_daemon(request, seed_repo):
    daemon = seeded_daemon(request, seed_repo)
    code, report = doctor(daemon.root)
    checks = by_area(report)
    assert code == 0 and report["healthy"], report
    assert checks["daemon"][0]["status"] == "ok" and str(daemon.pid) in checks["daemon"][0]["detail"]
    assert checks["socket"][0]["status"] == "ok" and stat.S_IMODE(daemon.sock.stat().st_mode) == 0o600
    assert "in the daemon" in checks["model"][0]["detail"]  # loaded, or loading: never loaded twice
    assert checks["vectors"][0]["status"] == "ok" and checks["embedded"][0]["detail"].startswith("every chunk")
    assert checks["index"][0]["status"] == "ok" and "freshness" in checks
    assert checks["watcher"][0]["status"] == "ok" and "native" in checks["watcher"][0]["detail"]
    assert "biggest folders indexed" in checks["folders"][0]["detail"]
    human = cli("doctor", str(daemon.root), timeout=180)
    assert human.returncode == 0 and human.stdout.strip().endswith("healthy")
    assert all(line[:4] in ("ok  ", "note", "FAIL", "    ") or line == "healthy" for line in human.stdout.splitlines())


def test_no_daemon_is_advice_not_a_failure(seeded_tree):
    code, report = doctor(seeded_tree, "--fast")
    daemon = by_area(report)["daemon"][0]
    assert code == 0 and report["healthy"]
    assert daemon["status"] == "note" and "codesearch daemon start" in daemon["fix"]


def test_a_missing_model_needs_action(seeded_tree):
    code, report = doctor(seeded_tree, "--model", str(seeded_tree / "no-such-model"))
    model = by_area(report)["model"][0]
    assert code == 1 and not report["healthy"]
    assert model["status"] == "fail" and "cannot be loaded" in model["detail"]
    assert "pip install codesearch" in model["fix"]
    human = cli("doctor", str(seeded_tree), "--model", str(seeded_tree / "no-such-model"), timeout=180)
    assert human.returncode == 1 and "FAIL  model" in human.stdout and "need" in human.stdout


def test_a_folder_without_an_index(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    code, report = doctor(tmp_path, "--fast")
    assert code == 0
    assert by_area(report)["index"][0]["status"] == "note" and "no index yet" in by_area(report)["index"][0]["detail"]


@pytest.mark.parametrize("folder", ["node_modules/pkg", "vendor"])
def test_vendored_folders_that_slipped_in_are_named(tmp_path, folder):
    (tmp_path / folder).mkdir(parents=True)
    (tmp_path / folder / "lib.js").write_text("function f() { return 1 }\n")
    (tmp_path / "main.py").write_text("def g():\n    return 2\n")
    assert cli("index", str(tmp_path), "--no-vectors", "-q").returncode == 0
    code, report = doctor(tmp_path, "--fast")
    notes = [c for c in by_area(report)["folders"] if c["status"] == "note"]
    assert code == 0 and notes and folder.split("/")[0] in notes[0]["detail"]
    assert ".codesearchignore" in notes[0]["fix"]
