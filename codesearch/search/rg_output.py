"""Reading ripgrep's output into MatchedLines while ripgrep still runs.

A common word matches 80,000 lines of a 30,000-file tree, so nothing here works line by line in
Python where it can be helped: the output is cut into fields by one regex per read, and each
line's JSON up to its chunk is made here, once.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # json.dumps' own, in C

from ..paths import escape_name


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


class RgReader:
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
