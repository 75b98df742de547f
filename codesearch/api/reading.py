"""The `read` method: source text from inside the repository, by path and lines or by chunk id.

An agent reads what a search found without a file tool of its own, and never past the root:
the path is confined (symlinks resolved), and the index folder and `.git` are refused."""

from __future__ import annotations

from pathlib import Path

from ..indexing.index import Index
from ..paths import INDEX_DIR_NAME, OutsideRoot, confine, on_disk
from ..wire import RequestError
from .types import MAX_READ_LINES, ReadAnswer, ReadRequest

_PRIVATE_FOLDERS = (INDEX_DIR_NAME, ".git")


def read_source(index: Index, request: ReadRequest) -> ReadAnswer:
    """Raises RequestError (OutsideRoot among them) for anything that cannot be read as asked."""
    end: int | None
    if request.id is not None:
        chunk = index.catalog.chunks_by_ids([request.id]).get(request.id)
        if chunk is None:
            raise RequestError(f"no chunk with id {request.id!r} (the file may have changed: search again)")
        rel, start, end = chunk.path, chunk.start_line, chunk.end_line
    else:
        assert request.path is not None
        rel = confine(index.root, request.path)
        start, end = request.start_line or 1, request.end_line
    _refuse_private(index, rel)
    return _read_lines(on_disk(index.root, rel), rel, start, end)


def _refuse_private(index: Index, rel: str) -> None:
    first = rel.split("/", 1)[0]
    if rel == "" or first in _PRIVATE_FOLDERS or (index.root / rel).resolve().is_relative_to(index.dir):
        raise OutsideRoot(f"{rel or '.'} is not a source file of the repository")


def _read_lines(path: Path, rel: str, start: int, end: int | None) -> ReadAnswer:
    last = start + MAX_READ_LINES - 1 if end is None else min(end, start + MAX_READ_LINES - 1)
    lines: list[str] = []
    total = 0
    try:
        with open(path, "rb") as handle:
            if b"\0" in handle.read(8192):
                raise RequestError(f"{rel} is a binary file")
            handle.seek(0)
            for total, raw in enumerate(handle, start=1):
                if start <= total <= last:
                    lines.append(raw.decode("utf-8", errors="replace"))
    except IsADirectoryError:
        raise RequestError(f"{rel} is a folder, not a file") from None
    except FileNotFoundError:
        raise RequestError(f"{rel} does not exist") from None
    except OSError as exc:
        raise RequestError(f"{rel} cannot be read ({exc.strerror or exc})") from None
    if start > max(total, 1):
        raise RequestError(f"{rel} has {total} lines; start_line {start} is past its end")
    wanted_end = total if end is None else min(end, total)
    returned_end = start - 1 + len(lines)
    return ReadAnswer(path=rel, start_line=start, end_line=returned_end, total_lines=total,
                      text="".join(lines), truncated=returned_end < wanted_end)
