"""Extraction on worker processes gives exactly what in-process extraction gives, and the pool
is kept for reuse."""

from __future__ import annotations

import threading
from functools import partial

import pytest
from conftest import SAMPLES

import codesearch.ingest.extract as extract_module
from codesearch.analysis.rows import prepare_rows
from codesearch.config import Settings
from codesearch.faults import ENV as FAULT_ENV
from codesearch.ingest.extract import Extracted, SkipFile, extract_files, release_idle_pool, shutdown_pool
from codesearch.ingest.walker import RepoWalker, SourceFile


@pytest.fixture(scope="module")
def sample_jobs():
    settings = Settings()
    entries = [e for e in RepoWalker(SAMPLES, settings).walk() if isinstance(e, SourceFile)]
    assert len(entries) > 40
    return [(e.rel, e.path, e.language) for e in entries], settings


def _comparable(result: Extracted | SkipFile):
    if isinstance(result, SkipFile):
        return ("skip", result.reason)
    return (result.rel, result.language, result.digest, result.fell_back, result.chunks, result.calls,
            result.imports, sorted(result.defined_names), result.keyword_columns, result.embed_hashes)


def test_worker_results_equal_in_process_results(sample_jobs, monkeypatch):
    jobs, settings = sample_jobs
    finish = partial(prepare_rows, "test-model", settings.embed_body_lines, settings.embed_words,
                     settings.embed_min_chars)
    in_process = list(extract_files(jobs, settings, workers=1, finish=finish))
    monkeypatch.setattr(extract_module, "PARALLEL_MIN_FILES", 1)
    try:
        on_workers = list(extract_files(jobs, settings, workers=2, finish=finish))
    finally:
        shutdown_pool()
    assert [_comparable(r) for r in on_workers] == [_comparable(r) for r in in_process]
    assert any(r.calls for r in on_workers if isinstance(r, Extracted))
    # the parse results stay in the worker: the graph facts stand for them
    assert all(r.parsed is None for r in on_workers if isinstance(r, Extracted))
    assert any(r.parsed is not None for r in in_process if isinstance(r, Extracted))


def test_the_pool_is_reused_and_a_warm_pool_takes_small_jobs(sample_jobs, monkeypatch):
    jobs, settings = sample_jobs
    monkeypatch.setattr(extract_module, "PARALLEL_MIN_FILES", 1)
    try:
        list(extract_files(jobs, settings, workers=2))
        pool = extract_module._pool
        assert pool is not None
        monkeypatch.setattr(extract_module, "PARALLEL_MIN_FILES", 10_000)  # cold threshold out of reach
        small = jobs[:extract_module.PARALLEL_MIN_FILES_WARM]
        results = list(extract_files(small, settings, workers=2))
        assert extract_module._pool is pool
        assert all(r.parsed is None for r in results if isinstance(r, Extracted))  # went to the workers
    finally:
        shutdown_pool()
    assert extract_module._pool is None


def test_an_idle_pool_is_released_but_never_one_in_use(sample_jobs, monkeypatch):
    jobs, settings = sample_jobs
    monkeypatch.setattr(extract_module, "PARALLEL_MIN_FILES", 1)
    try:
        running = extract_files(jobs, settings, workers=2)
        first = next(running)  # a run has the pool (a writer half way through its batch)
        release_idle_pool()
        assert extract_module._pool is not None
        rest = list(running)
        assert len(rest) + 1 == len(jobs) and isinstance(first, Extracted | SkipFile)
        release_idle_pool()  # nobody uses it now
        assert extract_module._pool is None
        assert len(list(extract_files(jobs, settings, workers=2))) == len(jobs)  # spawned again
    finally:
        shutdown_pool()


def test_a_pool_in_use_is_not_replaced_by_a_run_asking_another_size(sample_jobs, monkeypatch):
    jobs, settings = sample_jobs
    monkeypatch.setattr(extract_module, "PARALLEL_MIN_FILES", 1)
    try:
        running = extract_files(jobs, settings, workers=2)
        next(running)  # one writer half way through its batch
        pool = extract_module._pool
        assert len(list(extract_files(jobs, settings, workers=3))) == len(jobs)  # another writer
        assert extract_module._pool is pool
        assert len(list(running)) + 1 == len(jobs)  # the first one's pool was never torn down
    finally:
        shutdown_pool()


def test_a_file_whose_worker_dies_is_skipped_and_every_other_file_extracted(sample_jobs, monkeypatch):
    """A grammar that crashes on a file (or the out-of-memory killer) takes its worker down:
    that file is skipped as `crashed` and the run goes on. With multiprocessing's Pool the lost
    worker was replaced and its files' results waited for forever: the index run (and a daemon's
    writer) hung."""
    jobs, settings = sample_jobs
    poison = next(rel for rel, _, _ in jobs[len(jobs) // 2:] if not set(rel) & {":", "@"})
    in_process = [_comparable(r) for r in extract_files(jobs, settings, workers=1)]
    monkeypatch.setenv(FAULT_ENV, f"extracting {poison}")  # spawned workers die on reaching it
    monkeypatch.setattr(extract_module, "PARALLEL_MIN_FILES", 1)
    shutdown_pool()
    results: list = []
    run = threading.Thread(target=lambda: results.extend(extract_files(jobs, settings, workers=2)), daemon=True)
    try:
        run.start()
        run.join(180)
        assert not run.is_alive(), "the extraction waited forever for a dead worker's files"
    finally:
        shutdown_pool()
    assert [rel for (rel, _, _), r in zip(jobs, results) if isinstance(r, SkipFile) and r.reason == "crashed"] \
        == [poison]
    assert [c for (rel, _, _), c in zip(jobs, map(_comparable, results)) if rel != poison] == \
        [c for (rel, _, _), c in zip(jobs, in_process) if rel != poison]
    assert len(list(extract_files(jobs, settings, workers=2))) == len(jobs)  # and a later run completes too
    shutdown_pool()


def _mark_extracted(folder: str, result: Extracted) -> None:
    """A finisher (it runs on the worker): one file in `folder` per file extracted."""
    import os
    import uuid
    open(os.path.join(folder, uuid.uuid4().hex), "w").close()


def test_workers_extract_only_a_bounded_window_ahead_of_a_slow_consumer(sample_jobs, tmp_path):
    """The catalog's writer is slower than two workers on a big tree: results not yet taken
    must not pile up in memory (the pool's own map submitted every file at once)."""
    import time
    jobs, settings = sample_jobs
    many = (jobs * (1000 // len(jobs) + 1))[:1000]
    results = extract_files(many, settings, workers=2, finish=partial(_mark_extracted, str(tmp_path)))
    taken = [next(results) for _ in range(5)]
    counts = [-1]
    while counts[-1] != len(list(tmp_path.iterdir())):  # until the workers have stopped
        counts.append(len(list(tmp_path.iterdir())))
        time.sleep(1.0)
    # the slice being taken, and the window of slices submitted after it
    bound = (extract_module.WINDOW_CHUNKS_PER_WORKER * 2 + 1) * extract_module.IMAP_CHUNKSIZE
    assert len(taken) < counts[-1] <= bound
    assert sum(1 for _ in results) == len(many) - len(taken)  # and the rest comes when asked for
    assert len(list(tmp_path.iterdir())) == len(many)


def _square_unless_a_worker(n: int) -> int:
    """n*n; on a worker process, item 13 takes the worker down (as a crash in a grammar would)."""
    import multiprocessing
    import os
    if n == 13 and multiprocessing.parent_process() is not None:
        os._exit(1)
    return n * n


def test_map_on_workers_keeps_order_and_finishes_what_a_broken_pool_leaves():
    from codesearch.ingest.extract import map_on_workers
    assert list(map_on_workers(_square_unless_a_worker, iter(range(10)), workers=2)) == [n * n for n in range(10)]
    assert list(map_on_workers(_square_unless_a_worker, iter([13]), workers=1)) == [169]  # one worker: done here
    # item 13 kills its worker: it and whatever was not finished are done in this process
    assert list(map_on_workers(_square_unless_a_worker, iter(range(40)), workers=2)) == [n * n for n in range(40)]
    assert list(map_on_workers(_square_unless_a_worker, iter(range(5)), workers=2)) == [n * n for n in range(5)]
    shutdown_pool()
