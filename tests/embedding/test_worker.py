"""The daemon's embedding process (embedding/worker.py): the same vectors as the model in this
process, gone once idle, and a child that dies is one clear error and then a new child."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import replace

import numpy as np
import pytest

from codesearch.config import Settings
from codesearch.embedding.backends import create_embedder, process_embedder
from codesearch.embedding.base import EmbeddingError
from codesearch.embedding.worker import NICENESS, QUERY_THREADS, ChildProcessEmbedder, daemon_embedder

TEXTS = ["def compute_backoff(attempt):\n    return min(cap, base * 2 ** attempt)",
         "class RetryPolicy:\n    \"\"\"How often and how long to wait between attempts.\"\"\"",
         "fn parse_config(path: &Path) -> Result<Config> { toml::from_str(&fs::read_to_string(path)?) }"]
SETTINGS = Settings(embed_threads=1)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_for(condition, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def child_embedder():
    embedder = ChildProcessEmbedder(create_embedder(SETTINGS), SETTINGS, idle_seconds=0.5)
    yield embedder
    embedder.close()


def test_the_childs_vectors_are_this_processs_and_it_exits_once_idle(child_embedder):
    here = create_embedder(SETTINGS).encode_documents(TEXTS)
    there = child_embedder.encode_documents(TEXTS)
    assert there.shape == here.shape and there.dtype == np.float32
    assert np.allclose(there, here, atol=1e-5)
    pid = child_embedder.child_pid
    assert pid is not None and pid != os.getpid() and alive(pid)
    yielding = min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICENESS)  # the child yields the cores to searches
    assert os.getpriority(os.PRIO_PROCESS, pid) == yielding
    assert np.allclose(child_embedder.encode_query(TEXTS[0]), create_embedder(SETTINGS).encode_query(TEXTS[0]))
    assert child_embedder.key == create_embedder(SETTINGS).key
    assert wait_for(lambda: child_embedder.child_pid is None and not alive(pid))


def test_a_child_that_dies_is_one_clear_error_then_a_new_child(child_embedder):
    child_embedder.idle_seconds = 60
    child_embedder.encode_documents(TEXTS[:1])
    first = child_embedder.child_pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    with pytest.raises(EmbeddingError, match="embedding process ended"):
        child_embedder.encode_documents(TEXTS)
    assert child_embedder.encode_documents(TEXTS).shape == (3, 384)
    assert child_embedder.child_pid not in (None, first)


def test_a_model_error_in_the_child_comes_back_as_its_message(tmp_path):
    settings = replace(SETTINGS, device="no-such-device")  # settings allow any device; the embedder refuses it
    embedder = ChildProcessEmbedder(create_embedder(SETTINGS), settings, idle_seconds=5)
    try:
        with pytest.raises(EmbeddingError, match="no-such-device"):
            embedder.encode_documents(TEXTS)
    finally:
        embedder.close()


def test_only_a_daemon_embeds_in_a_child_and_only_when_asked():
    assert isinstance(daemon_embedder(SETTINGS).inner, ChildProcessEmbedder)
    assert not isinstance(daemon_embedder(replace(SETTINGS, daemon_embed_in_child=False)).inner,
                          ChildProcessEmbedder)
    assert not isinstance(process_embedder(SETTINGS).inner, ChildProcessEmbedder)


def test_the_idle_timer_never_stops_a_child_that_got_a_batch_since(child_embedder):
    child_embedder.idle_seconds = 60
    child_embedder.encode_documents(TEXTS[:1])
    stale = child_embedder._batches
    child_embedder.encode_documents(TEXTS[:2])  # a batch after the one that started that timer
    pid = child_embedder.child_pid
    child_embedder._stop_if_idle(stale)  # that timer fires late: the child stays
    assert child_embedder.child_pid == pid and alive(pid)
    child_embedder._stop_if_idle(child_embedder._batches)  # the latest timer: idle since, it goes
    assert child_embedder.child_pid is None and wait_for(lambda: not alive(pid))


def test_a_daemon_embeds_queries_on_one_thread_and_its_batches_on_daemon_embed_threads(tmp_path):
    from codesearch.daemon.lifecycle import daemon_settings
    settings = daemon_settings(tmp_path)  # a repository without settings of its own
    assert settings.embed_threads == Settings().daemon_embed_threads == 0  # all cores, at a lower priority
    model = daemon_embedder(replace(settings, embed_threads=2)).inner
    assert isinstance(model, ChildProcessEmbedder)
    assert model.inner.threads == QUERY_THREADS == 1  # the query model, in the daemon
    assert model.settings.embed_threads == 2  # what the child builds its model from
    in_daemon = daemon_embedder(replace(settings, embed_threads=2, daemon_embed_in_child=False)).inner
    assert in_daemon.threads == 2  # one model does both
