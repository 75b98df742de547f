"""Index progress as the CLI shows it: each event once (one `embed` stage per run, however many
passes the run's vectors took), and embedding progress that moves about once a second with a
moving rate and an ETA, on a machine of any speed. Real index runs with the real model."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from codesearch.config import load_settings
from codesearch.indexing.events import PART_SECONDS, ProgressEvent
from codesearch.indexing.index import Index
from codesearch.indexing.indexer import Indexer

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE = REPO_ROOT / "sample_repos" / "python"
FUNCTIONS = 900  # enough vectors for several parts on a fast machine


def test_a_file_changed_while_its_vectors_are_made_keeps_one_embed_stage(tmp_path):
    """The run indexes the file again and makes its vectors in a second pass: the stage grows
    instead of beginning again, and ends once, when the run's vectors are all made."""
    root = shutil.copytree(SAMPLE, tmp_path / "repo", ignore=shutil.ignore_patterns(".codesearch"))
    events: list[ProgressEvent] = []

    def edit_during_the_run(event: ProgressEvent) -> None:
        events.append(event)
        if event.stage == "embed" and event.phase == "begin":  # as a person saving a file would
            path = root / "config.py"
            path.write_text(path.read_text().replace('settings = dict(DEFAULTS)',
                                                     'settings = dict(DEFAULTS)  # a copy, edited now'))

    index = Index(root, load_settings(root), None, create=True)
    try:
        report = Indexer(index, on_progress=edit_during_the_run).run()
        left = index.catalog.vectors.count_needing()
    finally:
        index.close()
    embed = [e for e in events if e.stage == "embed"]
    assert [e.phase for e in embed if e.phase != "advance"] == ["begin", "end"], embed
    first_total = embed[0].total
    assert embed[-1].total > first_total  # the second pass grew the stage
    assert embed[-1].done == embed[-1].total  # rows handled, the changed file's twice
    assert report.vectors_embedded and left == 0  # and every chunk has its vector


def test_a_run_that_fails_while_embedding_still_ends_its_embed_stage(tmp_path):
    """A listener (a progress bar, an editor's status) is never left with a stage that began and
    never ended: the run's failure mid-embedding ends the stage on the way out."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "handlers.py").write_text("".join(
        f'def handler_{i}(request, retries={i}):\n    """Handle request {i}: parse it, retry {i} times."""\n'
        f'    return request.send(timeout={i})\n\n\n' for i in range(FUNCTIONS)))
    events: list[ProgressEvent] = []

    class Failed(Exception):
        pass

    def fail_once_embedding_advanced(event: ProgressEvent) -> None:
        events.append(event)
        if event.stage == "embed" and event.phase == "advance":
            raise Failed("the run fails here")

    index = Index(root, load_settings(root), None, create=True)
    try:
        try:
            Indexer(index, on_progress=fail_once_embedding_advanced).run()
        except Failed:
            pass
        else:
            raise AssertionError("the run did not fail")
    finally:
        index.close()
    assert [e.phase for e in events if e.stage == "embed"] == ["begin", "advance", "end"]


def test_embedding_progress_moves_about_once_a_second_with_a_moving_rate(tmp_path):
    root = tmp_path / "repo"
    for f in range(30):
        body = "".join(f'def handler_{f}_{i}(request, retries={i}):\n    """Handle request {i} of group {f}: '
                       f'parse it, retry {i} times."""\n    return request.send(timeout={i})\n\n\n'
                       for i in range(FUNCTIONS // 30))
        (root / "pkg").mkdir(parents=True, exist_ok=True)
        (root / "pkg" / f"group_{f}.py").write_text(body)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODESEARCH_")}
    env.update(PYTHONPATH=str(REPO_ROOT), HF_HUB_OFFLINE="1")
    proc = subprocess.Popen([sys.executable, "-m", "codesearch.cli", "index", str(root), "--progress-json", "-q"],
                            env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    arrivals: list[tuple[float, dict]] = []
    for line in proc.stderr:
        if line.startswith("{"):
            arrivals.append((time.monotonic(), json.loads(line)))
    assert proc.wait(timeout=600) == 0
    lines = [json.dumps(e, sort_keys=True) for _, e in arrivals]
    assert len(lines) == len(set(lines)), "an event came twice"
    embed = [(t, e) for t, e in arrivals if e["stage"] == "embed"]
    assert [e["phase"] for _, e in embed if e["phase"] != "advance"] == ["begin", "end"]
    assert embed[-1][1]["done"] == embed[-1][1]["total"] >= FUNCTIONS
    gaps = [b - a for (a, _), (b, _) in zip(embed, embed[1:])]
    assert len(gaps) >= 4 and statistics.median(gaps) <= PART_SECONDS * 2, gaps  # parts sized to PART_SECONDS
    later = [e for _, e in embed[len(embed) // 2:-1]]  # past the first measurement: a rate and an ETA
    assert all(e["rate_per_second"] and e["eta_seconds"] is not None for e in later), later
    assert len({e["eta_seconds"] for e in later}) > 1  # the ETA moves between batches too
