"""Exact and regex search: ripgrep finds the lines, the index says where they stand.

ripgrep (the `rg` binary of the `ripgrep` wheel) does the scanning: a finite-automaton engine, so
no pattern can backtrack for ever, with the repository's .gitignore rules and parallel reading.
Python's `re` over every file was 20 to 60 times slower on the benchmark's trees, and a trigram
prefilter in the catalog would index what rg already reads at disk speed. What codesearch adds is
the structure: each matching line is placed in the innermost chunk that holds it, and the groups
are ranked: the matched name's own definition first, then code that much else calls, then the
rest, with tests, examples and vendored code last (unless the search is aimed at them).

A common word matches 80,000 lines of a 30,000-file tree, so nothing here works line by line in
Python where it can be helped: ripgrep's output is cut into fields by one regex per read, while
it still runs; lines are placed in chunks with array lookups; the answer's JSON is written from
pre-encoded pieces (a chunk's once for all its lines) instead of records turned into dicts.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # json.dumps' own, in C
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from ..access import AccessRule
from ..gc_pause import paused_gc
from ..ingest.languages import language_for_path
from ..paths import confine, escape_name, on_disk, unescape_name, unsteady
from ..store.catalog import Catalog, ChunkSpan
from ..wire import RequestError
from .ranking import is_test_path
from .requests import MAX_GREP_MATCHES, ChunkRef, GrepAnswer, GrepFile, GrepMatch, GrepRequest

if TYPE_CHECKING:
    import numpy as np
    import re2

T = TypeVar("T")

RG_TIMEOUT_SECONDS = 30.0
CTIME_LAG_SECONDS = 0.05  # a folder's ctime is stamped from a clock that may lag by a tick (1-10 ms)
STEADY_TRIES = 3  # searches of files whose folders changed meanwhile, before they are left out
IGNORE_FILE = ".codesearchignore"
READ_BYTES = 1 << 18  # ripgrep's output is cut into fields this much at a time
PIPE_BYTES = 1 << 20  # the pipe it writes into holds this much meanwhile (Linux's usual limit)
JSON_BLOCK_PIECES = 2048  # pieces of an answer's JSON joined into one written block: about 300 KB


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


def rg_command(root: Path, index_dir: Path, request: GrepRequest) -> list[str]:
    """ripgrep's arguments. The access rule's exclusions come after the client's glob, so no
    glob can bring `.git` or the index back; explicit paths must pass the rule and exist."""
    access = AccessRule(root, index_dir)
    command = [rg_binary(), "--no-config", "--null", "--line-number", "--column",
               "--no-heading" if request.before or request.after else "--heading",
               "--with-filename", "--color", "never", "--no-messages", "--no-require-git"]
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
    command += access.rg_exclusions()
    command += ["--regexp", request.pattern, "--"]
    if request.paths:
        command += [_searchable(root, access, p) for p in request.paths]
    return command


def _searchable(root: Path, access: AccessRule, path: str) -> str:
    """A client's path as ripgrep is given it: confined, allowed by the access rule, present."""
    rel = confine(root, path)
    refusal = access.refusal(rel) if rel else None
    if refusal:
        raise RequestError(f"{path} cannot be searched: {refusal}")
    if not os.path.lexists(on_disk(root, rel)):
        raise RequestError(f"{path} does not exist")
    return unescape_name(rel) or "."  # the name on disk: a byte that is no UTF-8 is no `\\xNN` to ripgrep


# --- reading ripgrep's output --------------------------------------------------------------

@dataclass(slots=True)
class MatchedLines:
    """The matching lines in ripgrep's order (each file's together, by line), a list per field:
    the file (a position in `files`), line, column (1-based, in characters), text (as the inside
    of a JSON string: escaped, UTF-8), and the context lines around each when they were asked for."""

    files: list[str] = field(default_factory=list)  # printable names, in the order first seen
    file_of: list[int] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    columns: list[int] = field(default_factory=list)
    quoted: list[bytes] = field(default_factory=list)
    # each line's JSON up to its chunk (`{"path": .., "line": .., "column": .., "text": .., "chunk": `),
    # made while ripgrep still runs
    heads: list[bytes] = field(default_factory=list)
    before: list[list[str]] | None = None
    after: list[list[str]] | None = None
    changed: int = 0  # files left out: a folder on their way changed while ripgrep read them

    def __len__(self) -> int:
        return len(self.lines)

    def texts(self) -> list[str]:
        """Each line's text (one JSON parse for all: only typed answers need them as strings)."""
        return json.loads(b"".join((b'["', b'", "'.join(self.quoted), b'"]'))) if self.quoted else []

    def keep(self, wanted: Callable[[str], bool]) -> MatchedLines:
        """Only the lines of the files `wanted` accepts (the language filter)."""
        return self.keep_files(lambda f: wanted(self.files[f]))

    def keep_files(self, wanted: Callable[[int], bool]) -> MatchedLines:
        """Only the lines of the files (positions in `files`) that `wanted` accepts."""
        chosen = [i for i, f in enumerate(self.file_of) if wanted(f)]
        kept = MatchedLines(files=self.files, file_of=[self.file_of[i] for i in chosen],
                    lines=[self.lines[i] for i in chosen], columns=[self.columns[i] for i in chosen],
                    quoted=[self.quoted[i] for i in chosen], heads=[self.heads[i] for i in chosen])
        if self.before is not None and self.after is not None:
            kept.before, kept.after = [self.before[i] for i in chosen], [self.after[i] for i in chosen]
        return kept


HEAD = b'{"path": %b, "line": %b, "column": %b, "text": "%b", "chunk": '  # a line's JSON up to its chunk
# ripgrep's output, with --heading: each file's name and a NUL, then its matching lines
# (`line:column:text`), each file after a blank line. A line's record starts a line or follows the NUL.
HEADED_RECORD = re.compile(rb"(?<![^\n\0])(\d+):(\d+):([^\n]*)\n")
RECORD_ALONE = re.compile(rb"(\d+):(\d+):(.*)", re.DOTALL)
# with context (--no-heading): `path NUL line:column:text` (a match) or `path NUL line-text` (context)
RECORD = re.compile(rb"([^\0\n]*)\0(\d+)(?::(\d+):|-)([^\n]*)\n")
_JSON_ESCAPES = ((b"\\", b"\\\\"), (b'"', b'\\"'), (b"\t", b"\\t"))  # all a clean part needs (see _quote_all)


class _Reader:
    """Turns ripgrep's output, fed as it comes, into MatchedLines: at most `cap` matching lines. Without
    context the output is ripgrep's --heading form (`heading`): half the bytes, and read in bulk."""

    def __init__(self, before: int, after: int, cap: int):
        self.heading = not (before or after)
        self.hits = MatchedLines(before=None if self.heading else [], after=None if self.heading else [])
        self.before_n, self.after_n, self.cap = before, after, cap
        self.position: dict[bytes, int] = {}
        self.path_json: list[bytes] = []
        self.carry = b""  # the start of a line that the next read completes
        self.current = -1  # the file whose lines come now (--heading)
        self.at_name = True  # a file's name comes next: the output's start, or after a blank line (--heading)
        self.name_lines: list[bytes] = []  # the lines so far of a file name with line breaks (--heading)
        self.pending: list[tuple[int, int, str]] = []  # context lines no match has claimed yet
        self.full = False

    def feed(self, data: bytes, final: bool = False) -> None:
        buf = self.carry + data if self.carry else data
        cut = buf.rfind(b"\n") + 1
        part, self.carry = buf[:cut], buf[cut:]  # an unfinished last line (ripgrep stopped) is dropped
        if not part:
            return
        if self.heading:
            self._headed(part)
            return
        rows = RECORD.findall(part)
        if len(rows) != part.count(b"\n"):  # some line is no record of one line
            rows, rest = _records_one_by_one(part)
            self.carry = rest + self.carry
        if rows:
            self._with_context(rows)

    def _file(self, raw: bytes) -> int:
        found = self.position.get(raw)
        if found is None:
            found = self.position[raw] = len(self.hits.files)
            self.hits.files.append(escape_name(os.fsdecode(raw)))
            self.path_json.append(encode_basestring(self.hits.files[-1]).encode())
        return found

    def _headed(self, part: bytes) -> None:
        """Whole lines of --heading output: in bulk when the part is plain (`_headed_in_bulk`),
        else line by line."""
        if b"\r" in part:
            part = part.replace(b"\r\n", b"\n")  # a CRLF file's lines, without their CR
        read = self._headed_in_bulk(part)
        if read is None:
            read = self._headed_by_line(part)
        files, numbers, columns, quoted = read
        if not numbers:
            return
        room = self.cap - len(self.hits)
        if len(numbers) >= room:
            files, numbers, columns, quoted = files[:room], numbers[:room], columns[:room], quoted[:room]
            self.full = True
        hits, names = self.hits, self.path_json
        heads = [HEAD % (names[f], n, c, q) for f, n, c, q in zip(files, numbers, columns, quoted)]
        places = [*map(int, columns)]
        for k in [k for k, q in enumerate(quoted) if not q.isascii()]:  # byte columns -> characters
            text = json.loads(b'"%b"' % quoted[k]).encode()
            places[k] = _character_column(text, places[k])
            heads[k] = HEAD % (names[files[k]], numbers[k], b"%d" % places[k], quoted[k])
        hits.file_of += files
        hits.lines += map(int, numbers)
        hits.columns += places
        hits.quoted += quoted
        hits.heads += heads

    def _headed_in_bulk(self, part: bytes) -> tuple[list[int], list[bytes], list[bytes], list[bytes]] | None:
        """Each line's file, line number, column and quoted text, from one regex over the part,
        JSON-escaped in three replaces, with the files found by arrays: for a part of plain lines
        (valid UTF-8; no control characters but tabs; every line a record, a file's name or the
        blank line before one). None for any other part."""
        import numpy as np
        if self.name_lines:
            return None
        if not part.isascii():
            try:
                part.decode()
            except UnicodeDecodeError:
                return None
        arr = np.frombuffer(part, dtype=np.uint8)
        controls = np.flatnonzero(arr < 32)  # one pass over the bytes; the rest over these few
        kinds = arr[controls]
        breaks, names_end = controls[kinds == 10], controls[kinds == 0]
        if len(breaks) + len(names_end) + np.count_nonzero(kinds == 9) != len(controls):
            return None
        blank = np.empty(len(breaks), dtype=bool)
        blank[0] = breaks[0] == 0
        blank[1:] = breaks[1:] - breaks[:-1] == 1
        blanks = breaks[blank]
        rows = HEADED_RECORD.findall(_quote_all(part))
        if len(rows) != len(breaks) - len(blanks):
            return None
        line_of_name = np.searchsorted(breaks, names_end)  # the line each name stands on
        starts = np.where(line_of_name > 0, breaks[np.maximum(line_of_name - 1, 0)] + 1, 0)
        after_blank = np.where(starts == 0, self.at_name, np.isin(starts - 1, blanks))
        records_before = line_of_name - np.searchsorted(blanks, names_end)
        first_records = records_before[0] if len(names_end) else len(rows)  # the lines of the file before
        if not after_blank.all() or (first_records and (self.current < 0 or self.at_name)):
            return None
        self.at_name = bool(blank[-1])
        files = [self.current, *(self._file(part[s:e]) for s, e in zip(starts.tolist(), names_end.tolist()))]
        counts = np.diff(np.concatenate(([0], records_before, [len(rows)])))
        self.current = files[-1]
        numbers, columns, quoted = zip(*rows) if rows else ((), (), ())
        return np.repeat(np.asarray(files, dtype=np.int64), counts).tolist(), list(numbers), list(columns), list(quoted)

    def _headed_by_line(self, part: bytes) -> tuple[list[int], list[bytes], list[bytes], list[bytes]]:
        """The same, a line at a time: names with line breaks, a binary file's notice (for a file
        named on the command line), text that is not UTF-8 or holds control characters."""
        files: list[int] = []
        numbers: list[bytes] = []
        columns: list[bytes] = []
        quoted: list[bytes] = []
        for line in part.split(b"\n")[:-1]:
            was_at_name, self.at_name = self.at_name, not line
            if not line:  # the blank line before a file's name
                self.name_lines = []
                continue
            if b"\0" in line:
                name, _, line = line.partition(b"\0")
                self.current = self._file(b"\n".join([*self.name_lines, name]))
                self.name_lines = []
            elif was_at_name or self.name_lines:  # a name's first lines, or a notice
                self.name_lines.append(line)
                continue
            record = RECORD_ALONE.fullmatch(line)
            if record is None:  # a notice, or the first line of a name with line breaks
                self.name_lines.append(line)
                continue
            files.append(self.current)
            numbers.append(record.group(1))
            columns.append(record.group(2))
            quoted.append(encode_basestring(record.group(3).decode("utf-8", errors="replace"))[1:-1].encode())
        return files, numbers, columns, quoted

    def _with_context(self, rows: list[tuple[bytes, bytes, bytes, bytes]]) -> None:
        """A context line between two matches is the first's after-context and the second's
        before-context, as far as each reaches."""
        hits = self.hits
        assert hits.before is not None and hits.after is not None
        for raw, number, column, body in rows:
            if self.full:
                return
            f = self._file(raw)
            line = int(number)
            body = body.removesuffix(b"\r")
            text = body.decode("utf-8", errors="replace")
            if not column:  # a context line
                if hits.lines and hits.file_of[-1] == f and 0 < line - hits.lines[-1] <= self.after_n:
                    hits.after[-1].append(text)
                self.pending.append((f, line, text))
                continue
            hits.file_of.append(f)
            hits.lines.append(line)
            hits.columns.append(_character_column(body, int(column)))
            hits.quoted.append(encode_basestring(text)[1:-1].encode())
            hits.heads.append(HEAD % (self.path_json[f], number, b"%d" % hits.columns[-1], hits.quoted[-1]))
            hits.before.append([t for g, n, t in self.pending if g == f and line - self.before_n <= n < line])
            hits.after.append([])
            self.pending = []
            self.full = len(hits) >= self.cap


def _quote_all(part: bytes) -> bytes:
    """The part with each text JSON-escaped as encode_basestring would (for a plain part: valid
    UTF-8, no control characters but tabs and line breaks); names and numbers keep their form."""
    for plain, escaped in _JSON_ESCAPES:
        if plain in part:
            part = part.replace(plain, escaped)
    return part


def _character_column(body: bytes, byte_column: int) -> int:
    if body.isascii():
        return byte_column
    return len(body[:byte_column - 1].decode("utf-8", errors="replace")) + 1


def _records_one_by_one(part: bytes) -> tuple[list[tuple[bytes, bytes, bytes, bytes]], bytes]:
    """The records of output with lines that are none: `--` between context groups, a binary
    file's notice (for a file named on the command line), or the first lines of a file name with
    a line break, which then stand before the rest of their record. Also what follows the last
    record (the start of a name that the next read completes)."""
    rows, end = [], 0
    for m in RECORD.finditer(part):
        path = m.group(1)
        if m.start() > end:
            path = _name_start(part[end:m.start()]) + path
        rows.append((path, m.group(2), m.group(3), m.group(4)))
        end = m.end()
    return rows, part[end:]


def _name_start(gap: bytes) -> bytes:
    """The lines of a file name with line breaks, among the lines before its record."""
    lines = gap.split(b"\n")[:-1]
    notices = [i for i, line in enumerate(lines) if line == b"--" or b": binary file matches (" in line]
    start = notices[-1] + 1 if notices else 0
    return b"".join(line + b"\n" for line in lines[start:])


def run_rg(root: Path, index_dir: Path, request: GrepRequest) -> tuple[MatchedLines, bool]:
    """The matching lines, with their context; and whether the read stopped at MAX_GREP_MATCHES.
    Cut into fields READ_BYTES at a time while ripgrep goes on writing into a pipe as large as
    the system allows. Raises RequestError for a pattern ripgrep refuses, or a search that runs
    past RG_TIMEOUT_SECONDS (ripgrep is stopped then)."""
    process = subprocess.Popen(rg_command(root, index_dir, request), cwd=root, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert process.stdout is not None and process.stderr is not None
    with contextlib.suppress(AttributeError, OSError):  # Linux only; 64 KB otherwise
        fcntl.fcntl(process.stdout.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    reader = _Reader(request.before, request.after, MAX_GREP_MATCHES)
    late = threading.Event()

    def stop() -> None:
        late.set()
        process.kill()
    timer = threading.Timer(RG_TIMEOUT_SECONDS, stop)
    timer.start()
    try:
        while not reader.full:
            data = process.stdout.read(READ_BYTES)  # all of it, unless the output ends first
            reader.feed(data, final=len(data) < READ_BYTES)
            if len(data) < READ_BYTES:
                break
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
        process.stdout.close()
        errors = process.stderr.read().decode("utf-8", errors="replace")
        process.stderr.close()
        code = process.wait()
    if late.is_set():
        raise RequestError(f"the search took over {RG_TIMEOUT_SECONDS:.0f} s; narrow the pattern or the paths")
    if code == 2 and not len(reader.hits) and not reader.full and errors.strip():
        raise RequestError(_first_error(errors))  # silent: no file passed the filters, so none matched
    return reader.hits, reader.full


def run_rg_steadily(root: Path, index_dir: Path, request: GrepRequest) -> tuple[MatchedLines, bool]:
    """`run_rg`, keeping only lines of files that ripgrep surely read inside the root. ripgrep
    opens files by name, so a folder swapped for a link to /etc while it walks would have it
    read /etc's files under the folder's name: the files whose way changed during the search
    (`paths.unsteady`) are searched again, after a pause, STEADY_TRIES times at most, then left
    out. Files the access rule refuses (an ignored `.env` that a client's glob whitelisted) go."""
    access = AccessRule(root, index_dir)
    for attempt in range(STEADY_TRIES):
        since = time.time() - CTIME_LAG_SECONDS
        hits, truncated = run_rg(root, index_dir, request)
        names = [name.removeprefix("./") for name in hits.files]
        shaky = unsteady(root, names, since)
        if not any(shaky) or attempt == STEADY_TRIES - 1:
            break
        time.sleep(CTIME_LAG_SECONDS * (attempt + 1))
    refused = [bad or access.refusal(name) is not None for bad, name in zip(shaky, names)]
    if any(refused):
        hits = hits.keep_files(lambda f: not refused[f])
        hits.changed = sum(shaky)
    return hits, truncated


def _first_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        return ""
    if "regex parse error" in lines[0] or lines[0].startswith("rg: regex"):
        detail = lines[-1].removeprefix("error: ")
        return f"invalid regular expression: {detail}"
    return lines[0].removeprefix("rg: ")


# --- where each line stands ----------------------------------------------------------------

class ChunkFacts(NamedTuple):
    """What a group of matches shows and is ranked by: the chunk that holds its lines."""

    span: ChunkSpan | None  # None: no chunk holds the lines
    json: bytes  # as a match's `chunk` shows it
    rest: bytes  # `json`, then the rest of a match without context or reasons, up to the next one
    weight: float  # the summed weight of the calls and imports into it
    centrality: float  # log1p(weight) (math's: numpy's differs in the last bit)
    name_line: int  # where its name stands (0: unknown)
    name: str  # the chunk's name ("": no chunk)


def _chunk_facts(span: ChunkSpan | None, weight: float) -> ChunkFacts:
    json = b"null" if span is None else (
        f'{{"kind": {encode_basestring(span.kind)}, "name": {encode_basestring(span.name)}, "qualified_name": '
        f'{encode_basestring(span.qualified_name)}, "start_line": {span.start_line}, "end_line": {span.end_line}}}'
    ).encode()
    return ChunkFacts(span, json, json + b', "before": [], "after": []}, ', weight, math.log1p(weight),
                      span.name_line if span is not None else 0, span.name if span is not None else "")


NO_CHUNK = _chunk_facts(None, 0.0)


class GrepFacts:
    """What grep reads of the catalog for the files and chunks that matched (each file's chunk
    bounds; each chunk's span, its JSON, and its caller weight), kept between requests until the
    next reindex (the catalog's `last_index_time` changes). A common word matches 15,000 files of
    a 30,000-file tree: reading their 290,000 chunk bounds, and the spans and caller weights of
    the 23,000 chunks that hold a match, took longer than ripgrep's whole search."""

    MAX_CHUNKS = 200_000  # chunks whose span and weight are kept (about 300 bytes each)

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self._lock = threading.Lock()
        self._stamp: str | None = None
        self._bounds: dict[str, np.ndarray] = {}
        self._chunks: dict[int, ChunkFacts] = {-1: NO_CHUNK}

    def _fresh(self) -> tuple[dict[str, np.ndarray], dict[int, ChunkFacts]]:
        stamp = self.catalog.get_meta("last_index_time")
        with self._lock:
            if stamp != self._stamp or len(self._chunks) > self.MAX_CHUNKS:
                self._stamp, self._bounds, self._chunks = stamp, {}, {-1: NO_CHUNK}
            return self._bounds, self._chunks

    def bounds(self, paths: list[str]) -> list[np.ndarray]:
        """Each path's chunks as rows (start_line, end_line, rid), by start and then outermost
        first (an empty array for a file without chunks)."""
        import numpy as np
        known, _ = self._fresh()
        missing = [p for p in paths if p not in known]
        if missing:
            read = self.catalog.chunk_bounds(missing)
            for path in missing:
                rows = read.get(path)
                known[path] = np.array(rows, dtype=np.int64) if rows else np.empty((0, 3), dtype=np.int64)
        return [known[p] for p in paths]

    def chunks(self, rids: list[int]) -> list[ChunkFacts]:
        """Each chunk's facts (NO_CHUNK for -1, no chunk, and for a rowid the catalog no longer has)."""
        _, known = self._fresh()
        missing = sorted(set(rids).difference(known))
        if missing:
            spans = self.catalog.spans_by_rid(missing)
            weights = self.catalog.caller_weights([s.id for s in spans.values()])
            for rid in missing:
                span = spans.get(rid)
                known[rid] = NO_CHUNK if span is None else _chunk_facts(span, weights.get(span.id, 0.0))
        return [*map(known.__getitem__, rids)]


def place(file_of: np.ndarray, lines: np.ndarray, bounds: list[np.ndarray], steps: int = 2) -> np.ndarray:
    """The rowid of the innermost chunk holding each hit (-1: none), for hits given as their file
    (a position in `bounds`) and line: the last chunk, in each file's order (by start, outermost
    first), that starts at or before the line and ends at or after it. All files at once:
    (file, line) pairs as one sorted key and a binary search for the last chunk starting before
    each line; a hit that chunk does not reach looks `steps` chunks further back (most land in a
    method or the class around it), and the few left over are found by `_place_exactly` among
    the chunks of their own files only (building its tables over every matched file's chunks
    cost more than the rest of the ranking)."""
    import numpy as np
    table, starts, ends = _keyed(bounds)
    if not len(table):
        return np.full(len(lines), -1, dtype=np.int64)
    wanted = (file_of << 32) | lines
    at = np.searchsorted(starts, wanted, side="right") - 1
    for _ in range(steps):
        short = (at >= 0) & (ends[np.maximum(at, 0)] < wanted)
        if not short.any():
            break
        at[short] -= 1
    found = np.where(at >= 0, table[np.maximum(at, 0), 2], -1)
    short = (at >= 0) & (ends[np.maximum(at, 0)] < wanted)
    if short.any():
        files, local = np.unique(file_of[short], return_inverse=True)
        found[short] = _place_exactly(local.astype(np.int64), lines[short], [bounds[f] for f in files.tolist()])
    return found


def _keyed(bounds: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The files' chunk rows as one table, with each chunk's start and end keyed by its file."""
    import numpy as np
    sizes = np.fromiter(map(len, bounds), dtype=np.int64, count=len(bounds))
    table = np.concatenate(bounds) if len(bounds) else np.empty((0, 3), dtype=np.int64)
    file_key = np.repeat(np.arange(len(bounds), dtype=np.int64), sizes) << 32
    return table, file_key | table[:, 0], file_key | table[:, 1]


def _place_exactly(file_of: np.ndarray, lines: np.ndarray, bounds: list[np.ndarray]) -> np.ndarray:
    """`place` without the short cut: after the binary search, a binary lifting over the chunk
    ends finds the nearest chunk before that still reaches the line."""
    import numpy as np
    table, starts, ends = _keyed(bounds)
    wanted = (file_of << 32) | lines
    at = np.searchsorted(starts, wanted, side="right") - 1
    # reach[k][i]: the furthest end among the chunks i-2^k+1 .. i (those before 0 count as none)
    reach = [ends]
    while (1 << len(reach)) <= len(ends):
        step = 1 << (len(reach) - 1)
        previous = reach[-1]
        reach.append(np.concatenate([previous[:step], np.maximum(previous[step:], previous[:-step])]))
    for k in range(len(reach) - 1, -1, -1):
        live = at >= 0
        short = np.zeros_like(live)
        short[live] = reach[k][at[live]] < wanted[live]
        at[short] -= 1 << k
    found = np.full(len(wanted), -1, dtype=np.int64)
    live = at >= 0
    found[live] = table[at[live], 2]
    return found


# --- structure and ranking ------------------------------------------------------------------

def name_pattern(request: GrepRequest) -> re2._Regexp | None:
    """The pattern on RE2, a linear-time engine of ripgrep's dialect, to tell whether a
    definition's own name matches it (None where RE2 reads it differently: then no definition
    is ranked first). Python's `re` backtracks: `([a-z_]+)*\\(` on a long snake_case name held
    the daemon's GIL for minutes."""
    import re2
    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    options.case_sensitive = not request.ignore_case
    options.literal = request.fixed and not request.word
    text = re2.escape(request.pattern) if request.fixed and request.word else request.pattern
    if request.word:
        text = rf"(?:^|\W)(?:{text})(?:\W|$)"
    try:
        return re2.compile(text, options)
    except re2.error:
        return None


def aimed_at_tests(request: GrepRequest) -> bool:
    """A search restricted to tests, examples or vendored code does not push them down."""
    aims = [*(request.paths or ()), request.filters.path_glob or ""]
    return any(a and is_test_path(a.rstrip("*/") + "/x") for a in aims)


@dataclass(slots=True)
class GrepResult:
    """One search's lines placed in their chunks and put in answer order, written either as the
    contract's records or straight as their JSON text (the same text, joined from pieces encoded
    once: each line's head while ripgrep ran, each chunk's when it was first read)."""

    request: GrepRequest
    hits: MatchedLines
    shown: list[int]  # the hits in the answer, in its order (at most `limit`)
    group_of: list[int]  # each hit's group: the chunk that holds it, in its file
    chunks: list[ChunkFacts]  # each group's chunk
    notes: list[list[str]] | None  # each group's reasons, when asked to explain
    files: list[tuple[int, int]]  # (file, matching lines), every file, in the answer's order
    truncated: bool  # the engine's read stopped at MAX_GREP_MATCHES
    timing_ms: dict[str, float]

    @property
    def total(self) -> int:
        return len(self.hits)

    @property
    def note(self) -> str | None:
        notes = []
        if self.truncated:
            notes.append(f"stopped reading at {MAX_GREP_MATCHES:,} matching lines")
        elif self.total > len(self.shown):
            notes.append(f"{self.total - len(self.shown):,} more matching lines than `limit` shows")
        if self.hits.changed:
            notes.append(f"{self.hits.changed:,} files left out: their folders changed while they were searched")
        return "; ".join(notes) or None

    def answer(self) -> GrepAnswer:
        hits, names, texts = self.hits, self.hits.files, self.hits.texts()
        refs = [None if (s := c.span) is None else ChunkRef(kind=s.kind, name=s.name, qualified_name=s.qualified_name,
                                                             start_line=s.start_line, end_line=s.end_line)
                for c in self.chunks]
        no_lines: tuple[str, ...] = ()
        matches = tuple(GrepMatch(
            path=names[hits.file_of[i]], line=hits.lines[i], column=hits.columns[i], text=texts[i],
            chunk=refs[self.group_of[i]],
            before=tuple(hits.before[i]) if hits.before is not None else no_lines,
            after=tuple(hits.after[i]) if hits.after is not None else no_lines,
            explain=tuple(self.notes[self.group_of[i]]) if self.notes is not None else None) for i in self.shown)
        return GrepAnswer(pattern=self.request.pattern, matches=matches,
                          files=tuple(GrepFile(names[f], count) for f, count in self.files), total=self.total,
                          truncated=self.truncated or self.total > len(self.shown), timing_ms=self.timing_ms,
                          note=self.note)

    def json(self) -> bytes:
        """`json.dumps(self.answer().to_dict(), ensure_ascii=False)` in UTF-8, without the records."""
        return b"".join(self.json_blocks())

    def json_blocks(self) -> Iterator[bytes]:
        """The same text in blocks of JSON_BLOCK_PIECES pieces, made as they are written: each
        shown line's head and its chunk's rest (chunk, context, reasons; it also ends the line and
        separates it from the next; ", " is cut from the last). Joined whole, a 40-MB answer
        cost 30 ms of fresh pages before the first byte left; a block at a time reuses the same
        memory and the socket starts sending at once."""
        hits = self.hits
        explain = [b""] * len(self.chunks) if self.notes is None else [
            f', "explain": {_strings(notes)}'.encode() for notes in self.notes]
        if hits.before is None or hits.after is None:
            rests = [*map(attrgetter("rest"), self.chunks)] if self.notes is None else [
                b"".join((chunk.json, b', "before": [], "after": []', why, b"}, "))
                for chunk, why in zip(self.chunks, explain)]
            pieces = [b""] * (2 * len(self.shown))  # each head, then its group's rest: filled by slices
            pieces[0::2] = _pick(hits.heads, self.shown)
            pieces[1::2] = _pick(rests, _pick(self.group_of, self.shown))
        else:
            chunks = [*map(attrgetter("json"), self.chunks)]
            before, after, group_of = hits.before, hits.after, self.group_of
            pieces = [piece for i in self.shown for piece in (hits.heads[i], chunks[group_of[i]], (
                f', "before": {_strings(before[i])}, "after": {_strings(after[i])}'.encode() + explain[group_of[i]]
                + b"}, "))]
        if pieces:
            pieces[-1] = pieces[-1][:-2]
        yield f'{{"pattern": {encode_basestring(self.request.pattern)}, "matches": ['.encode()
        step = JSON_BLOCK_PIECES
        for start in range(0, len(pieces), step):
            yield b"".join(pieces[start:start + step])
        names = [encode_basestring(p) for p in hits.files]
        files = ", ".join(f'{{"path": {names[f]}, "count": {count}}}' for f, count in self.files)
        truncated = "true" if self.truncated or self.total > len(self.shown) else "false"
        note = "" if self.note is None else f', "note": {encode_basestring(self.note)}'
        yield (f'], "files": [{files}], "total": {self.total}, "truncated": {truncated}, '
               f'"timing_ms": {json.dumps(self.timing_ms)}{note}}}').encode()


def _pick(items: Sequence[T], at: Sequence[int]) -> Sequence[T]:
    """items[i] for each i of `at`, in one C call (itemgetter; a 1-tuple for one)."""
    if len(at) == 1:
        return (items[at[0]],)
    return itemgetter(*at)(items) if at else ()


def _strings(items: list[str]) -> str:
    return f'[{", ".join(map(encode_basestring, items))}]'


def grep(facts: GrepFacts, root: Path, index_dir: Path, request: GrepRequest) -> GrepResult:
    with paused_gc():
        started = time.perf_counter()
        hits, truncated = run_rg_steadily(root, index_dir, request)
        timing = {"rg": (time.perf_counter() - started) * 1000}
        if request.filters.language:
            language = request.filters.language
            hits = hits.keep(lambda path: language_for_path(path) == language)
        t = time.perf_counter()
        result = _arrange(facts, hits, request, truncated, timing)
        timing["structure"] = (time.perf_counter() - t) * 1000
        timing["total"] = (time.perf_counter() - started) * 1000
        result.timing_ms = {k: round(v, 2) for k, v in timing.items()}
        return result


def _arrange(facts: GrepFacts, hits: MatchedLines, request: GrepRequest, truncated: bool,
             timing: dict[str, float]) -> GrepResult:
    """Group the hits by the chunk that holds them and put the groups in answer order (see
    `_rank`); the hits of a group stay in line order. Arrays, not a loop over the lines."""
    import numpy as np
    if not len(hits):
        return GrepResult(request, hits, [], [], [], [] if request.explain else None, [], truncated, timing)
    file_of = np.asarray(hits.file_of, dtype=np.int64)
    lines = np.asarray(hits.lines, dtype=np.int64)
    rids = place(file_of, lines, facts.bounds(hits.files))
    _, first, group_of, sizes = np.unique((file_of << 40) | (rids + 1), return_index=True, return_inverse=True,
                                          return_counts=True)
    group_file, group_rid = file_of[first], rids[first].tolist()
    chunks = facts.chunks(group_rid)
    by_path = np.empty(len(hits.files), dtype=np.int64)
    by_path[sorted(range(len(hits.files)), key=hits.files.__getitem__)] = np.arange(len(hits.files))
    first_line = lines[first]
    notes: list[list[str]] | None = [[] for _ in chunks] if request.explain else None
    if request.sort == "rank":
        tier, centrality = _rank(hits.files, lines, request, chunks, group_of, group_file, notes)
        order = np.lexsort((first_line, by_path[group_file], -sizes, -centrality, tier))
    else:
        order = np.lexsort((first_line, by_path[group_file]))
    place_of = np.empty(len(order), dtype=np.int64)
    place_of[order] = np.arange(len(order))
    shown = np.argsort(place_of[group_of], kind="stable")[:request.limit]
    counts = np.bincount(file_of, minlength=len(hits.files))
    in_order, first_place = np.unique(group_file[order], return_index=True)  # each file where it first shows
    files = [(f, int(counts[f])) for f in in_order[np.argsort(first_place)].tolist()]
    return GrepResult(request, hits, shown.tolist(), group_of.tolist(), chunks, notes, files, truncated, timing)


def _rank(files: list[str], lines: np.ndarray, request: GrepRequest, chunks: list[ChunkFacts],
          group_of: np.ndarray, group_file: np.ndarray, notes: list[list[str]] | None) -> tuple[np.ndarray, np.ndarray]:
    """Each group's tier and centrality. Tier 0: the line that names a definition whose name the
    pattern matches; tier 2: tests, examples and vendored code; then centrality (log of the
    weight of calls and imports into the chunk), then how many lines match in it."""
    import numpy as np
    centrality = np.fromiter(map(attrgetter("centrality"), chunks), dtype=np.float64, count=len(chunks))
    name_line = np.fromiter(map(attrgetter("name_line"), chunks), dtype=np.int64, count=len(chunks))
    on_name = np.bincount(group_of, weights=lines == name_line[group_of], minlength=len(chunks)) > 0
    tier = np.ones(len(chunks), dtype=np.int64)
    pattern = name_pattern(request)
    if pattern is not None:
        named = np.flatnonzero(on_name)  # groups with a line on their chunk's name (so never NO_CHUNK)
        names = [chunks[g].name for g in named.tolist()]
        defined = {name for name in set(names) if pattern.search(name)}  # each name tried once
        tier[named[np.fromiter(map(defined.__contains__, names), dtype=bool, count=len(names))]] = 0
    if not aimed_at_tests(request):
        tests = np.asarray([is_test_path(p) for p in files], dtype=bool)
        tier[(tier == 1) & tests[group_file]] = 2
    if notes is not None:
        for g, chunk in enumerate(chunks):
            if chunk.span is None:
                continue
            if tier[g] == 0:
                notes[g].append(f"defines {chunk.span.qualified_name or chunk.span.name}")
            if centrality[g]:
                notes[g].append(f"called or imported with weight {chunk.weight:g}")
        for g in np.flatnonzero(tier == 2).tolist():
            notes[g].append("test, example or vendored path: later")
    return tier, centrality
