"""One file on disk -> its chunks (and parse results), with content checks that skip bad input."""

from __future__ import annotations

import multiprocessing
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from .chunking import chunk_code, chunk_text
from .config import Settings
from .languages import spec_by_name, spec_for_path
from .model import Chunk, ParsedFile
from .parsing import parse_source

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
    """What one file yields for the index."""

    rel: str
    language: str
    chunks: list[Chunk]
    parsed: ParsedFile | None
    content: bytes = field(repr=False, default=b"")

    @property
    def fell_back(self) -> bool:
        """True when no grammar was used (text, Markdown or line windows)."""
        return self.parsed is None


def read_source(path: Path, settings: Settings) -> bytes:
    """Read a file, or raise SkipFile for binary, huge, minified or unreadable content."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(settings.max_file_bytes + 1)
    except FileNotFoundError:
        raise SkipFile("vanished", "deleted while being indexed") from None
    except IsADirectoryError:
        raise SkipFile("not_regular") from None
    except OSError as exc:
        raise SkipFile("unreadable", exc.strerror or str(exc)) from None
    check_content(data, settings)
    return data


def check_content(data: bytes, settings: Settings) -> None:
    if len(data) > settings.max_file_bytes:
        raise SkipFile("too_large", f"over {settings.max_file_bytes} bytes")
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        raise SkipFile("binary", "contains NUL bytes")
    if not data:
        return
    lines = data.count(b"\n") + 1
    if len(data) > settings.max_line_chars:
        longest = max(map(len, data.split(b"\n")))
        if longest > settings.max_line_chars:
            raise SkipFile("minified", f"a line of {longest} characters")
    if len(data) > 1024 and len(data) / lines > settings.max_mean_line_chars:
        raise SkipFile("minified", f"mean line length {len(data) // lines}")


def language_of(rel: str, data: bytes, default: str) -> str:
    if rel.endswith(".h") and default == "c" and _CPP_HEADER.search(data):
        return "cpp"
    return default


def extract(rel: str, data: bytes, language: str, settings: Settings) -> Extracted:
    """Parse and chunk one file's content. Never raises on malformed source."""
    language = language_of(rel, data, language)
    spec = spec_by_name(language) or spec_for_path(rel)
    budget = settings.max_chunk_chars
    if spec is not None:
        parsed = parse_source(rel, data, spec)
        chunks = chunk_code(parsed, budget)
        parsed.release_tree()
        return Extracted(rel, spec.name, chunks, parsed, data)
    text = data.decode("utf-8", errors="replace")
    return Extracted(rel, language, chunk_text(rel, language, text, budget, settings.text_window_lines), None, data)


def extract_file(rel: str, path: Path, language: str, settings: Settings) -> Extracted | SkipFile:
    """Read and extract one file; a skip is returned, not raised, so it can cross processes."""
    try:
        return extract(rel, read_source(path, settings), language, settings)
    except SkipFile as skip:
        return skip


def _extract_job(job: tuple[str, str, str, Settings]) -> Extracted | SkipFile:
    rel, path, language, settings = job
    return extract_file(rel, Path(path), language, settings)


PARALLEL_MIN_FILES = 300  # below this, starting worker processes costs more than it saves


def extract_files(jobs: list[tuple[str, Path, str]], settings: Settings,
                  workers: int = 0) -> Iterator[Extracted | SkipFile]:
    """Extract many files, in order, on `workers` processes (0: one per core, 1: in-process).

    Workers are spawned, not forked: the parent may hold torch and its thread pools.
    """
    workers = workers or os.cpu_count() or 1
    if workers <= 1 or len(jobs) < PARALLEL_MIN_FILES:
        for rel, path, language in jobs:
            yield extract_file(rel, path, language, settings)
        return
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers) as pool:
        yield from pool.imap(_extract_job, [(r, str(p), lang, settings) for r, p, lang in jobs], chunksize=8)
