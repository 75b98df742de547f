"""The `read` method: source text from inside the repository, by path and lines or by chunk id.

An agent reads what a search found without a file tool of its own, and never past the root:
the path is confined (symlinks resolved), what `access.AccessRule` keeps private is refused, and
the file is opened first and checked after (`paths.open_checked`), so no race can swap a folder
on the way for a link that leaves the root."""

from __future__ import annotations

import os

from ..access import AccessRule
from ..indexing.index import Index
from ..paths import NotRegularFile, OutsideRoot, confine, inside, on_disk, open_checked
from ..wire import NotFound, RequestError
from .types import MAX_READ_LINES, ReadAnswer, ReadRequest


def read_source(index: Index, request: ReadRequest) -> ReadAnswer:
    """Raises RequestError for anything that cannot be read as asked: OutsideRoot for what
    lies outside the repository or is private, NotFound for what is not there."""
    end: int | None
    if request.id is not None:
        chunk = index.catalog.files.chunks_by_ids([request.id]).get(request.id)
        if chunk is None:
            raise NotFound(f"no chunk with id {request.id!r} (the file may have changed: search again)")
        rel, start, end = chunk.path, chunk.start_line, chunk.end_line
    else:
        assert request.path is not None
        rel = confine(index.root, request.path)
        start, end = request.start_line or 1, request.end_line
    refusal = AccessRule(index.root, index.dir).refusal(rel) if rel else "the repository's root folder"
    if refusal:
        raise OutsideRoot(f"{rel or '.'} cannot be read: {refusal}")
    return _read_lines(index, rel, start, end)


def _read_lines(index: Index, rel: str, start: int, end: int | None) -> ReadAnswer:
    last = start + MAX_READ_LINES - 1 if end is None else min(end, start + MAX_READ_LINES - 1)
    lines: list[str] = []
    total = 0
    try:
        with os.fdopen(open_checked(on_disk(index.root, rel), inside(index.root)), "rb") as handle:
            if b"\0" in handle.read(8192):
                raise RequestError(f"{rel} is a binary file")
            handle.seek(0)
            for total, raw in enumerate(handle, start=1):
                if start <= total <= last:
                    lines.append(raw.decode("utf-8", errors="replace"))
    except NotRegularFile as exc:
        raise NotFound(f"{rel} is {exc.kind}, not a file") from None
    except FileNotFoundError:
        raise NotFound(f"{rel} does not exist") from None
    except OSError as exc:
        raise RequestError(f"{rel} cannot be read ({exc.strerror or exc})") from None
    if start > max(total, 1):
        raise NotFound(f"{rel} has {total} lines; start_line {start} is past its end")
    wanted_end = total if end is None else min(end, total)
    returned_end = start - 1 + len(lines)
    return ReadAnswer(path=rel, start_line=start, end_line=returned_end, total_lines=total,
                      text="".join(lines), truncated=returned_end < wanted_end)
