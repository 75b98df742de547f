"""One file on disk -> its chunks (and parse results), with content checks that skip bad input."""

from __future__ import annotations

import atexit
import hashlib
import multiprocessing
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice, tee
from pathlib import Path
from typing import Any

from ..config import Settings
from ..faults import checkpoint
from ..model import Chunk, ParsedFile
from ..paths import NotRegularFile, OutsideRoot, open_checked
from .chunking import chunk_code, chunk_text
from .languages import spec_by_name, spec_for_path
from .parsing import TooDeep, parse_source

BINARY_SNIFF_BYTES = 8192
# a .h file is C++ when it uses C++-only syntax
_CPP_HEADER = re.compile(rb"^\s*(namespace\s+\w+|template\s*<|class\s+\w+[^;]*\{|(public|private|protected)\s*:)|std::",
                         re.MULTILINE)


class SkipFile(Exception):
    """The file's content is not worth indexing; `reason` is the stats word, str() the detail."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(detail or reason)
        self.reason = reason


@dataclass
class Extracted:
    """What one file yields for the index.

    The graph facts are plain tuples, ready for the catalog: a worker process sends them back
    instead of the ParsedFile, whose many small objects cost more to unpickle than to build.
    """

    rel: str
    language: str
    chunks: list[Chunk]
    parsed: ParsedFile | None  # None when no grammar was used, or once sent from a worker
    digest: str  # content hash of the file: what the catalog compares to see a change
    fell_back: bool  # True when no grammar was used (text, Markdown or line windows)
    # rows as the catalog stores them: (caller chunk id, path, callee, line, receiver hint, a
    # reference), (path, module, line, statement)
    calls: list[tuple[str, str, str, int, str, bool]] = field(default_factory=list)
    imports: list[tuple[str, str, int, str]] = field(default_factory=list)
    defined_names: list[str] = field(default_factory=list)
    # filled by the indexer's finisher: keyword-index columns per chunk, and chunk id -> embed hash
    keyword_columns: list[tuple[str, str, str, str]] | None = None
    embed_hashes: dict[str, str | None] | None = None
    message_templates: list[str] | None = None  # per chunk, analysis/messages.py
    traits: list[tuple[int, int]] | None = None  # per chunk: fingerprint and content class (analysis/rows.py)

    @classmethod
    def from_parsed(cls, parsed: ParsedFile, chunks: list[Chunk], digest: str) -> Extracted:
        ids, file_id, path = parsed.chunk_ids, chunks[0].id, parsed.path
        return cls(path, parsed.language, chunks, parsed, digest, fell_back=False,
                   calls=[(file_id if c.caller is None else ids.get(c.caller, file_id), path, c.name, c.line,
                           c.hint, c.ref) for c in parsed.calls],
                   imports=[(path, i.module, i.line, i.text) for i in parsed.imports],
                   defined_names=list({d.name for d in parsed.definitions}))


def read_source(path: Path, settings: Settings, language: str, walked: bool = False) -> bytes:
    """Read a file of this language, or raise SkipFile for binary, huge, minified or unreadable
    content. A `walked` file must really be where the walk saw it: a folder on the way swapped for
    a link since then would otherwise have the index take in a file from outside the root."""
    accept = (lambda real: real == str(path)) if walked else (lambda real: True)
    try:
        with os.fdopen(open_checked(path, accept), "rb") as handle:
            data = handle.read(settings.max_file_bytes + 1)
    except FileNotFoundError:
        raise SkipFile("vanished", "deleted while being indexed") from None
    except NotRegularFile as exc:
        raise SkipFile("not_regular", exc.kind) from None
    except OutsideRoot:
        raise SkipFile("outside_root", "moved behind a link while being indexed") from None
    except OSError as exc:
        raise SkipFile("unreadable", exc.strerror or str(exc)) from None
    check_content(data, settings, prose=language in _PROSE)
    return data


_PROSE = frozenset({"markdown", "rst", "asciidoc"})  # a paragraph or a table row to a line is ordinary there


def check_content(data: bytes, settings: Settings, prose: bool = False) -> None:
    if len(data) > settings.max_file_bytes:
        raise SkipFile("too_large", f"over {settings.max_file_bytes} bytes")
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        raise SkipFile("binary", "contains NUL bytes")
    if not data:
        return
    lines = data.count(b"\n") + 1
    if len(data) > settings.max_line_chars:
        # most of the file in over-long lines: one embedded image, badge or test string in a
        # file of ordinary lines leaves it indexed
        long_lines = [n for n in map(len, data.split(b"\n")) if n > settings.max_line_chars]
        if sum(long_lines) * 2 > len(data):
            raise SkipFile("minified", f"a line of {max(long_lines)} characters")
    if not prose and len(data) > 1024 and len(data) / lines > settings.max_mean_line_chars:
        raise SkipFile("minified", f"mean line length {len(data) // lines}")


def file_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def language_of(rel: str, data: bytes, default: str) -> str:
    if rel.endswith(".h") and default == "c" and _CPP_HEADER.search(data):
        return "cpp"
    return default


def extract(rel: str, data: bytes, language: str, settings: Settings) -> Extracted:
    """Parse and chunk one file's content. Never raises on malformed source; SkipFile for a
    file too deeply nested to parse in bounded time, or whose walk overflows the stack (one
    file's reason in the summary, not the end of the whole index)."""
    language = language_of(rel, data, language)
    spec = spec_by_name(language) or spec_for_path(rel)
    budget = settings.max_chunk_chars
    if spec is not None:
        try:
            parsed = parse_source(rel, data, spec)
        except TooDeep as exc:
            raise SkipFile("too_complex", str(exc)) from None
        except RecursionError:
            raise SkipFile("too_complex", "its names and calls nest past the stack's depth") from None
        chunks = chunk_code(parsed, budget)
        parsed.release_tree()
        return Extracted.from_parsed(parsed, chunks, file_digest(data))
    text = data.decode("utf-8", errors="replace")
    chunks = chunk_text(rel, language, text, budget, settings.text_window_lines)
    return Extracted(rel, language, chunks, None, file_digest(data), fell_back=True)


def extract_file(rel: str, path: Path, language: str, settings: Settings) -> Extracted | SkipFile:
    """Read and extract one file; a skip is returned, not raised, so it can cross processes."""
    try:
        return extract(rel, read_source(path, settings, language, walked=True), language, settings)
    except SkipFile as skip:
        return skip


def extract_bytes(rel: str, data: bytes, language: str, settings: Settings) -> Extracted | SkipFile:
    """Extract content already read (with the same content checks as a file's)."""
    try:
        check_content(data, settings, prose=language in _PROSE)
        return extract(rel, data, language, settings)
    except SkipFile as skip:
        return skip


Finisher = Callable[[Extracted], None]  # more per-file work for the same process (picklable)


def _extract_and_finish(rel: str, path: Path, language: str, settings: Settings,
                        finish: Finisher | None) -> Extracted | SkipFile:
    result = extract_file(rel, path, language, settings)
    if finish is not None and isinstance(result, Extracted):
        finish(result)
    return result


def _extract_job(job: tuple[str, str, str, Settings, Finisher | None]) -> Extracted | SkipFile:
    rel, path, language, settings, finish = job
    checkpoint(f"extracting {rel}")  # a test kills the worker here, as a grammar's crash would
    result = _extract_and_finish(rel, Path(path), language, settings, finish)
    if isinstance(result, Extracted):
        result.parsed = None  # the graph facts carry what the index needs, at a fraction of the cost
    return result


# Starting worker processes costs time (interpreter, imports, grammars, queries): below this many
# files one process finishes first (scripts/bench_index.py; docs/benchmarks.md, "Parsing and
# chunking"). A pool already running pays off for much smaller jobs.
PARALLEL_MIN_FILES = 150
PARALLEL_MIN_FILES_WARM = 24
IMAP_CHUNKSIZE = 8
WINDOW_CHUNKS_PER_WORKER = 4  # slices of files a worker may extract ahead of the consumer
PARENT_CHECK_SECONDS = 0.5  # how soon a worker notices that its parent was killed

_pool: ProcessPoolExecutor | None = None
_pool_workers = 0
_pool_users = 0  # extract_files runs using the pool now (a workspace daemon has several writers)
_pool_lock = threading.Lock()


def _new_pool(workers: int) -> ProcessPoolExecutor:
    """Workers are spawned, not forked: the parent may hold torch and its thread pools. An
    executor, not multiprocessing's Pool: a worker that dies (a grammar's crash, the kernel's
    out-of-memory killer) breaks it, and its calls fail, where Pool quietly replaced the worker
    and left its files' results to be waited for forever."""
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_exit_with_parent, initargs=(os.getpid(),))


def _exit_with_parent(parent: int) -> None:
    """In each worker: end it once the process that started it is gone. An executor's idle
    workers wait on a queue whose other end their siblings hold too, so after a kill -9 of the
    indexer they would wait forever (holding its stdout and stderr, which its caller reads to
    the end)."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(0)
    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _worker_pool(workers: int) -> ProcessPoolExecutor:
    """One pool per process, kept for reuse (a daemon extracts again and again). Called under
    _pool_lock."""
    global _pool, _pool_workers
    # a pool of another size is replaced, unless a run is using it (then it serves this one too)
    if _pool is None or (_pool_workers != workers and _pool_users == 0):
        shutdown_pool()
        _pool = _new_pool(workers)
        _pool_workers = workers
    return _pool


def _forget_broken(pool: ProcessPoolExecutor) -> None:
    """A broken pool is not handed out again (another run may have replaced it already)."""
    global _pool
    with _pool_lock:
        if _pool is pool:
            _pool = None
    pool.shutdown(wait=False, cancel_futures=True)


def shutdown_pool() -> None:
    """Stop the extraction workers, if any are running."""
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=True, cancel_futures=True)
        _pool = None


def release_idle_pool() -> None:
    """Stop the extraction workers unless a run is using them: a daemon with nothing to index
    gives their memory back (docs/benchmarks.md, "Indexing") and spawns them again for the next big batch."""
    with _pool_lock:
        if _pool_users == 0:
            shutdown_pool()


atexit.register(shutdown_pool)


def extract_files(jobs: list[tuple[str, Path, str]], settings: Settings, workers: int = 0,
                  finish: Finisher | None = None) -> Iterator[Extracted | SkipFile]:
    """Extract many files, in order, on `workers` processes (0: one per core, 1: in-process).

    `finish` runs on each extracted file in the process that extracted it: the indexer prepares
    its rows there, so that work is spread over the workers too. A file whose worker dies while
    extracting it is skipped as `crashed`; the others are extracted as usual.
    """
    workers = workers or os.cpu_count() or 1
    threshold = PARALLEL_MIN_FILES_WARM if _pool is not None and _pool_workers == workers else PARALLEL_MIN_FILES
    if workers <= 1 or len(jobs) < threshold:
        for rel, path, language in jobs:
            yield _extract_and_finish(rel, path, language, settings, finish)
        return
    with _pool_in_use():
        yield from _on_workers(jobs, settings, finish, workers)


@contextmanager
def _pool_in_use() -> Iterator[None]:
    """Counted as a user of the pool meanwhile: it is not replaced, nor released as idle."""
    global _pool_users
    with _pool_lock:
        _pool_users += 1
    try:
        yield
    finally:
        with _pool_lock:
            _pool_users -= 1


def _extract_jobs(jobs: list[tuple[str, str, str, Settings, Finisher | None]]) -> list[Extracted | SkipFile]:
    return [_extract_job(job) for job in jobs]


def _ahead(pool: ProcessPoolExecutor, fn: Callable[[Any], Any], items: Iterator[Any], window: int) -> Iterator[Any]:
    """fn of each item on the pool, in order, with at most `window` items submitted and not yet taken."""
    pending: deque[Future] = deque(pool.submit(fn, item) for item in islice(items, window))
    try:
        while pending:
            result = pending.popleft().result()
            item = next(items, _END)
            if item is not _END:
                pending.append(pool.submit(fn, item))
            yield result
    finally:  # the consumer stopped, or the pool broke: what has not started never will
        for future in pending:
            future.cancel()


_END = object()


def map_on_workers(fn: Callable[[Any], Any], items: Iterator[Any], workers: int = 0) -> Iterator[Any]:
    """fn of each item, in order, on the extraction workers (started if need be; other work than
    extracting, such as resolving calls), at most WINDOW_CHUNKS_PER_WORKER items a worker ahead
    of the consumer. What a broken pool leaves is done here."""
    workers = workers or os.cpu_count() or 1
    if workers <= 1:
        yield from map(fn, items)
        return
    submitted, unfinished = tee(items)
    with _pool_in_use():
        with _pool_lock:
            pool = _worker_pool(workers)
        try:
            for result in _ahead(pool, fn, submitted, WINDOW_CHUNKS_PER_WORKER * workers):
                next(unfinished)
                yield result
            return
        except BrokenProcessPool:
            _forget_broken(pool)
    yield from map(fn, unfinished)


def _on_workers(jobs: list[tuple[str, Path, str]], settings: Settings, finish: Finisher | None,
                workers: int) -> Iterator[Extracted | SkipFile]:
    """Results in order, at most WINDOW_CHUNKS_PER_WORKER slices a worker extracted ahead of the consumer:
    the pool's own `map` submits every file at once, and where the consumer (the catalog's one
    writer) is the slower, the workers' results piled up in memory (gigabytes on a monorepo)."""
    chunksize = max(1, min(IMAP_CHUNKSIZE, len(jobs) // (4 * workers)))  # small jobs: keep both busy
    window = WINDOW_CHUNKS_PER_WORKER * workers
    done = 0
    while done < len(jobs):
        with _pool_lock:
            pool = _worker_pool(workers)
        slices = ([(r, str(p), lang, settings, finish) for r, p, lang in jobs[start:start + chunksize]]
                  for start in range(done, len(jobs), chunksize))
        try:
            for results in _ahead(pool, _extract_jobs, slices, window):
                for result in results:
                    yield result
                    done += 1
            return
        except BrokenProcessPool:
            _forget_broken(pool)
        # the file that took a worker down is among those that were running or queued: each of
        # them alone, so that only that one is skipped; then the rest as before
        suspects = jobs[done:done + (window + 1) * chunksize]
        yield from _one_by_one(suspects, settings, finish)
        done += len(suspects)


def _one_by_one(jobs: list[tuple[str, Path, str]], settings: Settings,
                finish: Finisher | None) -> Iterator[Extracted | SkipFile]:
    """Each file alone in a worker of its own pool: one whose worker dies is skipped as `crashed`."""
    pool = _new_pool(1)
    try:
        for rel, path, language in jobs:
            try:
                yield pool.submit(_extract_job, (rel, str(path), language, settings, finish)).result()
            except BrokenProcessPool:
                pool.shutdown(wait=False, cancel_futures=True)
                pool = _new_pool(1)
                yield SkipFile("crashed", "the process extracting it died (a crash in its parser, or killed)")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
