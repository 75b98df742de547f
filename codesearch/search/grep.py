"""Exact and regex search: ripgrep finds the lines, the index says where they stand.

ripgrep (the `rg` binary of the `ripgrep` wheel) does the scanning: a finite-automaton engine, so
no pattern can backtrack for ever, with the repository's .gitignore rules and parallel reading.
Python's `re` over every file was 20 to 60 times slower on the benchmark's trees, and a trigram
prefilter in the catalog would index what rg already reads at disk speed. What codesearch adds is
the structure: each matching line is placed in the innermost chunk that holds it, and the groups
are ranked: the matched name's own definition first, then code that much else calls, then the
rest, with tests, examples and vendored code last (unless the search is aimed at them).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..gc_pause import paused_gc
from ..ingest.languages import language_for_path
from ..paths import INDEX_DIR_NAME, confine, escape_name
from ..store.catalog import Catalog, ChunkSpan
from ..wire import RequestError
from .ranking import is_test_path
from .types import MAX_GREP_MATCHES, ChunkRef, GrepAnswer, GrepFile, GrepMatch, GrepRequest

RG_TIMEOUT_SECONDS = 30.0
IGNORE_FILE = ".codesearchignore"


class GrepUnavailable(RuntimeError):
    """No ripgrep binary to run."""


def rg_binary() -> str:
    """The `rg` of this environment (the ripgrep wheel puts it beside the interpreter), else PATH's."""
    beside = Path(sys.executable).parent / "rg"
    if beside.exists():
        return str(beside)
    found = shutil.which("rg")
    if found is None:
        raise GrepUnavailable("ripgrep is not installed: pip install ripgrep==14.1.0")
    return found


@dataclass(slots=True)
class Hit:
    """One line ripgrep reported: a match, with the context lines around it."""

    path: str
    line: int
    column: int
    text: str
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)


def rg_command(root: Path, index_dir: Path, request: GrepRequest) -> list[str]:
    command = [rg_binary(), "--no-config", "--null", "--line-number", "--column", "--no-heading",
               "--with-filename", "--color", "never", "--no-messages", "--no-require-git",
               "--glob", f"!/{INDEX_DIR_NAME}/"]
    if index_dir.is_relative_to(root) and index_dir.name != INDEX_DIR_NAME:
        command += ["--glob", f"!/{index_dir.relative_to(root).as_posix()}/"]
    if (root / IGNORE_FILE).is_file():
        command += ["--ignore-file", str(root / IGNORE_FILE)]
    command.append("--ignore-case" if request.ignore_case else "--case-sensitive")
    if request.fixed:
        command.append("--fixed-strings")
    if request.word:
        command.append("--word-regexp")
    if request.before:
        command += ["--before-context", str(request.before)]
    if request.after:
        command += ["--after-context", str(request.after)]
    if request.filters.path_glob:
        command += ["--glob", request.filters.path_glob]
    command += ["--regexp", request.pattern, "--"]
    if request.paths:
        targets = [confine(root, p) for p in request.paths]
        command += [t or "." for t in targets]
    return command


def run_rg(root: Path, index_dir: Path, request: GrepRequest) -> tuple[list[Hit], bool]:
    """The matching lines in ripgrep's order (file by file), with their context; and whether the
    read stopped at MAX_GREP_MATCHES. Raises RequestError for a pattern ripgrep refuses, or a
    search that runs past RG_TIMEOUT_SECONDS."""
    process = subprocess.Popen(rg_command(root, index_dir, request), cwd=root, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + RG_TIMEOUT_SECONDS
    hits: list[Hit] = []
    truncated = False
    assert process.stdout is not None and process.stderr is not None
    try:
        for hit in _parse(process.stdout, request.before, request.after):
            if hit is not None:
                hits.append(hit)
                if len(hits) >= MAX_GREP_MATCHES:
                    truncated = True
                    break
            if time.monotonic() > deadline:
                raise RequestError(f"the search took over {RG_TIMEOUT_SECONDS:.0f} s; narrow the pattern or the paths")
    finally:
        if process.poll() is None:
            process.kill()
        process.stdout.close()
        errors = process.stderr.read().decode("utf-8", errors="replace")
        process.stderr.close()
        code = process.wait()
    if code == 2 and not hits and not truncated:
        raise RequestError(_first_error(errors) or "ripgrep failed")
    return hits, truncated


def _first_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return ""
    if "regex parse error" in lines[0] or lines[0].startswith("rg: regex"):
        detail = lines[-1].removeprefix("error: ")
        return f"invalid regular expression: {detail}"
    return lines[0].removeprefix("rg: ")


def _parse(stream, before: int, after: int) -> Iterator[Hit | None]:
    """Matches (and None for each other line, so the caller can check the clock) from ripgrep's
    `path NUL line:column:text` and `path NUL line-text` (context) lines. A context line between
    two matches is the first's after-context and the second's before-context, as far as each
    reaches. Split with `partition`, not a regex: a common word gives 100,000 lines."""
    pending: list[tuple[str, int, str]] = []  # context lines not yet claimed by a following match
    last: Hit | None = None
    names: dict[bytes, str] = {}  # each file's printable name, made once
    for raw in stream:
        path_bytes, sep, rest = raw.partition(b"\0")
        number, colon, tail = rest.partition(b":")
        is_match = bool(colon) and number.isdigit()
        if not is_match:
            number, dash, tail = rest.partition(b"-")
            if not (sep and dash and number.isdigit()):  # "--" between groups, or a line this parser does not know
                yield None
                continue
        path = names.get(path_bytes)
        if path is None:
            path = names[path_bytes] = escape_name(os.fsdecode(path_bytes))
        line = int(number)
        if is_match:
            byte_column, _, body = tail.partition(b":")
        else:
            byte_column, body = b"1", tail
        body = body.rstrip(b"\n").removesuffix(b"\r")
        text = body.decode("utf-8", errors="replace")
        if not is_match:
            if last is not None and last.path == path and 0 < line - last.line <= after:
                last.after.append(text)
            pending.append((path, line, text))
            yield None
            continue
        offset = int(byte_column) - 1
        column = offset + 1 if body.isascii() else len(body[:offset].decode("utf-8", errors="replace")) + 1
        hit = Hit(path, line, column, text,
                  before=[t for p, n, t in pending if p == path and line - before <= n < line] if pending else [])
        pending = []
        last = hit
        yield hit


# --- structure and ranking ------------------------------------------------------------------

def place(bounds: list[tuple[int, int, int]], hits: list[Hit]) -> list[int | None]:
    """The rowid of the innermost chunk holding each of one file's hits (in line order), from the
    file's (start_line, end_line, rid), by start and outermost first: one sweep down the file with
    a stack of the chunks open at the current line, instead of every chunk per hit."""
    stack: list[tuple[int, int, int]] = []
    out: list[int | None] = []
    i = 0
    for hit in hits:
        while i < len(bounds) and bounds[i][0] <= hit.line:
            stack.append(bounds[i])
            i += 1
        while stack and stack[-1][1] < hit.line:  # closed above the line
            stack.pop()
        out.append(next((b[2] for b in reversed(stack) if b[1] >= hit.line), None))
    return out


def name_pattern(request: GrepRequest) -> re.Pattern[str] | None:
    """The pattern in Python's dialect, to tell whether a definition's own name matches it (None
    when Python reads it differently: then no definition is ranked first)."""
    text = re.escape(request.pattern) if request.fixed else request.pattern
    if request.word:
        text = rf"(?<![\w]){text}(?![\w])"
    try:
        return re.compile(text, re.IGNORECASE if request.ignore_case else 0)
    except re.error:
        return None


def aimed_at_tests(request: GrepRequest) -> bool:
    """A search restricted to tests, examples or vendored code does not push them down."""
    aims = [*(request.paths or ()), request.filters.path_glob or ""]
    return any(a and is_test_path(a.rstrip("*/") + "/x") for a in aims)


@dataclass(slots=True)
class _Group:
    path: str
    span: ChunkSpan | None
    hits: list[Hit]
    tier: int = 1
    centrality: float = 0.0
    notes: list[str] = field(default_factory=list)


def grep(catalog: Catalog, root: Path, index_dir: Path, request: GrepRequest) -> GrepAnswer:
    with paused_gc():
        return _grep(catalog, root, index_dir, request)


def _grep(catalog: Catalog, root: Path, index_dir: Path, request: GrepRequest) -> GrepAnswer:
    started = time.perf_counter()
    hits, truncated = run_rg(root, index_dir, request)
    timing = {"rg": (time.perf_counter() - started) * 1000}
    if request.filters.language:
        hits = [h for h in hits if language_for_path(h.path) == request.filters.language]
    t = time.perf_counter()
    by_file: dict[str, list[Hit]] = {}
    for hit in hits:  # ripgrep gives each file's lines in order
        by_file.setdefault(hit.path, []).append(hit)
    bounds = catalog.chunk_bounds(list(by_file))
    placed: dict[tuple[str, int | None], list[Hit]] = {}
    for path, file_hits in by_file.items():
        for hit, rid in zip(file_hits, place(bounds.get(path, []), file_hits)):
            placed.setdefault((path, rid), []).append(hit)
    spans = catalog.spans_by_rid([rid for _, rid in placed if rid is not None])
    groups = [_Group(path, spans.get(rid) if rid is not None else None, group_hits)
              for (path, rid), group_hits in placed.items()]
    if request.sort == "rank":
        _rank(catalog, groups, request)
    else:
        groups.sort(key=lambda g: (g.path, g.hits[0].line))
    timing["structure"] = (time.perf_counter() - t) * 1000
    matches: list[GrepMatch] = []
    counts: dict[str, int] = {}
    for group in groups:
        counts[group.path] = counts.get(group.path, 0) + len(group.hits)
        if len(matches) >= request.limit:
            continue
        ref = _ref(group.span)
        for hit in group.hits[:request.limit - len(matches)]:
            matches.append(GrepMatch(path=hit.path, line=hit.line, column=hit.column, text=hit.text, chunk=ref,
                                     before=tuple(hit.before), after=tuple(hit.after),
                                     explain=tuple(group.notes) if request.explain else None))
    total = len(hits)
    timing["total"] = (time.perf_counter() - started) * 1000
    note = (f"stopped reading at {MAX_GREP_MATCHES:,} matching lines" if truncated else
            f"{total - len(matches):,} more matching lines than `limit` shows" if total > len(matches) else None)
    return GrepAnswer(pattern=request.pattern, matches=tuple(matches),
                      files=tuple(GrepFile(path, count) for path, count in counts.items()), total=total,
                      truncated=truncated or total > len(matches),
                      timing_ms={k: round(v, 2) for k, v in timing.items()}, note=note)


def _ref(span: ChunkSpan | None) -> ChunkRef | None:
    if span is None:
        return None
    return ChunkRef(kind=span.kind, name=span.name, qualified_name=span.qualified_name,
                    start_line=span.start_line, end_line=span.end_line)


def _rank(catalog: Catalog, groups: list[_Group], request: GrepRequest) -> None:
    """Tier 0: the line that names a definition whose name the pattern matches; tier 2: tests,
    examples and vendored code; then centrality (log of the weight of calls and imports into the
    chunk), then how many lines match in it."""
    pattern = name_pattern(request)
    demote_tests = not aimed_at_tests(request)
    weights = catalog.caller_weights(sorted({g.span.id for g in groups if g.span is not None}))
    for g in groups:
        span = g.span
        if span is not None:
            g.centrality = math.log1p(weights.get(span.id, 0.0))
            if g.centrality:
                g.notes.append(f"called or imported with weight {weights[span.id]:g}")
        if (span is not None and span.name_line and pattern is not None and pattern.search(span.name)
                and any(h.line == span.name_line for h in g.hits)):
            g.tier = 0
            g.notes.insert(0, f"defines {span.qualified_name or span.name}")
        elif demote_tests and is_test_path(g.path):
            g.tier = 2
            g.notes.append("test, example or vendored path: later")
    groups.sort(key=lambda g: (g.tier, -g.centrality, -len(g.hits), g.path, g.hits[0].line))
