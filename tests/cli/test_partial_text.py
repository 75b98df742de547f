"""`codesearch query` in text through a daemon whose model has not loaded within the bound: the
answer says it was made without vectors and why (the note on stderr), not that 0% or 100% of
the chunks "have vectors so far". The daemon is real, over an index `codesearch index` embedded
whole; its model is held back by a gate (gated_daemon.py)."""

from __future__ import annotations

import pytest
from daemon_helpers import cli, seed_repo, seeded_tree  # noqa: F401 - fixtures
from gated_daemon import GatedDaemon

from codesearch.daemon.embedder import MODEL_WAIT_SECONDS


@pytest.fixture
def held(seeded_tree):  # noqa: F811 - the fixture imported above
    daemon = GatedDaemon(seeded_tree)
    try:
        yield daemon.start().serve()
    finally:
        daemon.close()


def test_a_partial_text_answer_says_it_was_made_without_vectors_and_why(held):
    root = held.daemon.root
    proc = cli("query", "retry delay with exponential backoff", "--repo", str(root), "--color", "never")
    assert proc.returncode == 0, proc.stderr
    assert "(partial: answered without vectors;" in proc.stdout, proc.stdout
    assert "have vectors so far" not in proc.stdout
    assert f"did not get ready within {MODEL_WAIT_SECONDS:g} s" in proc.stderr, proc.stderr

    held.gate.set()
    proc = cli("query", "retry delay with exponential backoff", "--repo", str(root), "--color", "never")
    assert proc.returncode == 0 and "partial" not in proc.stdout and not proc.stderr.strip(), proc
