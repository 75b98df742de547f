"""Just enough of a SCIP index (scip.proto, read from the protobuf wire format by hand: no
generated code, no dependency) for the call-graph benchmark: each document's occurrences
(range, symbol, whether it is the definition)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5
DEFINITION_ROLE = 1  # SymbolRole.Definition


@dataclass(frozen=True)
class Occurrence:
    line: int  # 0-based
    start: int  # 0-based character (UTF-16 units, as scip-typescript writes them)
    end: int
    end_line: int
    symbol: str
    definition: bool


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def _fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of a message's fields."""
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, at = _varint(data, at)
            yield number, wire, value
        elif wire == _BYTES:
            length, at = _varint(data, at)
            yield number, wire, data[at:at + length]
            at += length
        elif wire == _FIXED64:
            yield number, wire, data[at:at + 8]
            at += 8
        elif wire == _FIXED32:
            yield number, wire, data[at:at + 4]
            at += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def _packed(data: bytes) -> list[int]:
    out, at = [], 0
    while at < len(data):
        value, at = _varint(data, at)
        out.append(value)
    return out


def _occurrence(data: bytes) -> Occurrence:
    span: list[int] = []
    symbol, roles = "", 0
    for number, _, value in _fields(data):
        if number == 1:  # range: [line, start, end] or [line, start, end_line, end]
            span += _packed(value) if isinstance(value, bytes) else [int(value)]
        elif number == 2 and isinstance(value, bytes):
            symbol = value.decode("utf-8", "replace")
        elif number == 3 and isinstance(value, int):
            roles = value
    line, start = span[0], span[1]
    end_line, end = (line, span[2]) if len(span) == 3 else (span[2], span[3])
    return Occurrence(line, start, end, end_line, symbol, bool(roles & DEFINITION_ROLE))


def documents(data: bytes) -> dict[str, list[Occurrence]]:
    """Relative path (to the indexed project) -> its occurrences, from an index.scip's bytes."""
    out: dict[str, list[Occurrence]] = {}
    for number, _, value in _fields(data):
        if number != 2 or not isinstance(value, bytes):  # Index.documents
            continue
        path, occurrences = "", []
        for field, _, part in _fields(value):
            if field == 1 and isinstance(part, bytes):  # Document.relative_path
                path = part.decode("utf-8", "replace")
            elif field == 2 and isinstance(part, bytes):  # Document.occurrences
                occurrences.append(_occurrence(part))
        out[path] = occurrences
    return out
