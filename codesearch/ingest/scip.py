"""A SCIP index (scip.proto: what scip-typescript, scip-python and other type-aware indexers write)
read from the protobuf wire format by hand, no generated code and no dependency: for each
document, its occurrences (where a symbol stands, and whether that is its definition), and the
names a symbol's descriptors spell. Precise call edges are made from them (store/scip_edges.py).

A file that is not a SCIP index, or one cut short, raises ScipError with one line that says so:
a bad index is never half read."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

CONVENTIONAL_NAME = "index.scip"  # where scip-typescript and scip-python write by default
SCIP_SUFFIX = ".scip"
_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5
DEFINITION_ROLE = 1  # SymbolRole.Definition
# Index: metadata = 1, documents = 2, external_symbols = 3; each a message (length-delimited)
_INDEX_FIELDS = {1: _BYTES, 2: _BYTES, 3: _BYTES}
# Metadata: version = 1, tool_info = 2, project_root = 3 (a URI), text_document_encoding = 4
_METADATA_FIELDS = {1: _VARINT, 2: _BYTES, 3: _BYTES, 4: _VARINT}
# Document: relative_path = 1, occurrences = 2, symbols = 3, language = 4, text = 5, position_encoding = 6
_DOCUMENT_FIELDS = {1: _BYTES, 2: _BYTES, 3: _BYTES, 4: _BYTES, 5: _BYTES, 6: _VARINT}


class ScipError(ValueError):
    """The file is not a SCIP index, or it is cut short or damaged."""


@dataclass(frozen=True)
class Occurrence:
    line: int  # 0-based
    start: int  # 0-based character (UTF-16 units, as scip-typescript writes them)
    end: int
    end_line: int
    symbol: str
    definition: bool


@dataclass
class ScipIndex:
    """Relative path (to the indexed project) -> its occurrences, in the order the index gives."""

    documents: dict[str, list[Occurrence]] = field(default_factory=dict)
    project_root: str = ""  # the folder the paths are relative to, where the index was made ("": not said)
    _definitions: dict[str, list[tuple[str, int, int]]] | None = field(default=None, repr=False)

    def definitions(self) -> dict[str, list[tuple[str, int, int]]]:
        """Symbol (a local one as `symbol_key` names it) -> the (path, 0-based line, 0-based
        character) of each of its definition occurrences in these documents (an overloaded
        method has several): a symbol with none is defined outside them (a library, the
        standard library)."""
        if self._definitions is None:
            self._definitions = {}
            for path, occurrences in self.documents.items():
                for occurrence in occurrences:
                    if occurrence.definition:
                        places = self._definitions.setdefault(symbol_key(path, occurrence.symbol), [])
                        if (path, occurrence.line, occurrence.start) not in places:
                            places.append((path, occurrence.line, occurrence.start))
        return self._definitions


def read_index(path: Path) -> ScipIndex:
    """The SCIP index in this file (ScipError when it cannot be read or is no SCIP index)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ScipError(f"cannot read the SCIP index {path}: {exc.strerror or exc}") from None
    try:
        return parse_index(data)
    except ScipError as exc:
        raise ScipError(f"{path} is not a usable SCIP index ({exc})") from None


def parse_index(data: bytes) -> ScipIndex:
    """The documents of an index.scip's bytes (ScipError: cut short, or not a SCIP index)."""
    index = ScipIndex()
    try:
        for number, _, value in _fields(data, _INDEX_FIELDS, "Index"):
            assert isinstance(value, bytes)
            if number == 1:
                index.project_root = _project_root(value)
            elif number == 2:
                path, occurrences = _document(value)
                index.documents.setdefault(path, []).extend(occurrences)
    except (IndexError, UnicodeDecodeError) as exc:
        raise ScipError(f"cut short or damaged: {type(exc).__name__}") from None
    return index


def _project_root(data: bytes) -> str:
    """The metadata's project root as a path ("" unless it is a file: URI)."""
    for number, _, value in _fields(data, _METADATA_FIELDS, "Metadata"):
        if number == 3 and isinstance(value, bytes):
            uri = value.decode("utf-8")
            return unquote(urlsplit(uri).path) if uri.startswith("file:") else ""
    return ""


def rebased(index: ScipIndex, root: Path) -> ScipIndex:
    """The index with its paths relative to `root` (where codesearch indexes), not to the
    project it was made in: scip-typescript works where tsconfig.json is, which may lie above or
    below the root. Documents outside the root are left out. An index made on another machine
    (its project root is not here) is taken as made in `root`."""
    project = Path(index.project_root) if index.project_root else None
    if project is None or project == root or not project.is_dir():
        return index
    if root.is_relative_to(project):
        inner = root.relative_to(project).as_posix() + "/"
        documents = {p[len(inner):]: o for p, o in index.documents.items() if p.startswith(inner)}
    elif project.is_relative_to(root):
        outer = project.relative_to(root).as_posix()
        documents = {f"{outer}/{p}": o for p, o in index.documents.items()}
    else:
        return index
    return ScipIndex(documents, str(root))


def _document(data: bytes) -> tuple[str, list[Occurrence]]:
    path, occurrences = "", []
    for number, _, value in _fields(data, _DOCUMENT_FIELDS, "Document"):
        if number == 1:
            assert isinstance(value, bytes)
            path = value.decode("utf-8")
        elif number == 2:
            assert isinstance(value, bytes)
            occurrences.append(_occurrence(value))
    if not path or path.startswith("/") or ".." in path.split("/"):
        raise ScipError(f"a document's path {path!r} is not relative to the project")
    return path, occurrences


def _occurrence(data: bytes) -> Occurrence:
    span: list[int] = []
    symbol, roles = "", 0
    for number, wire, value in _fields(data, {}, "Occurrence"):
        if number == 1:  # range: [line, start, end] or [line, start, end_line, end], packed or not
            span += _packed(value) if isinstance(value, bytes) else [int(value)] if wire == _VARINT else []
        elif number == 2 and isinstance(value, bytes):
            symbol = value.decode("utf-8")
        elif number == 3 and isinstance(value, int):
            roles = value
    if len(span) not in (3, 4):
        raise ScipError(f"an occurrence's range has {len(span)} numbers, not 3 or 4")
    line, start = span[0], span[1]
    end_line, end = (line, span[2]) if len(span) == 3 else (span[2], span[3])
    return Occurrence(line, start, end, end_line, symbol, bool(roles & DEFINITION_ROLE))


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise ScipError("a number longer than 64 bits")


def _fields(data: bytes, expected: dict[int, int], message: str) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of a message's fields. `expected`: the wire type each
    known field must have (another one means the bytes are no such message)."""
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if number == 0 or (number in expected and expected[number] != wire):
            raise ScipError(f"field {number} of {message} has wire type {wire}")
        if wire == _VARINT:
            value, at = _varint(data, at)
            yield number, wire, value
        elif wire == _BYTES:
            length, at = _varint(data, at)
            if at + length > len(data):
                raise ScipError(f"a field of {message} runs past its end")
            yield number, wire, data[at:at + length]
            at += length
        elif wire in (_FIXED64, _FIXED32):
            size = 8 if wire == _FIXED64 else 4
            if at + size > len(data):
                raise ScipError(f"a field of {message} runs past its end")
            yield number, wire, data[at:at + size]
            at += size
        else:
            raise ScipError(f"protobuf wire type {wire} in {message}")


def _packed(data: bytes) -> list[int]:
    out, at = [], 0
    while at < len(data):
        value, at = _varint(data, at)
        out.append(value)
    return out


# --- symbols ------------------------------------------------------------------------------------
# `<scheme> <manager> <package> <version> <descriptors>` (a space inside a part is doubled), or
# `local <id>`; a descriptor is a name (plain, or in backticks with `` for a backtick) followed by
# what it is: `/` namespace, `#` type, `.` term, `(disambiguator).` method, `:` meta, `!` macro;
# or `(name)` a parameter, `[name]` a type parameter
_DESCRIPTOR = re.compile(r"(`(?:[^`]|``)*`|[\w$+\-]+)(/|#|\.|\([^)]*\)\.|:|!)|\(([^)]*)\)|\[([^\]]*)\]")
_ACCESSOR = re.compile(r"^<[gs]et>")  # scip-typescript names a getter `<get>size`: the chunk is `size`
NAMESPACE, TYPE, TERM, METHOD, META, MACRO, PARAMETER, TYPE_PARAMETER = "/", "#", ".", "()", ":", "!", "(", "["


@dataclass(frozen=True)
class Descriptor:
    name: str
    suffix: str  # NAMESPACE, TYPE, TERM, METHOD, META, MACRO, PARAMETER or TYPE_PARAMETER
    symbol: str  # the symbol that ends with this descriptor


def is_local(symbol: str) -> bool:
    return symbol.startswith("local ")


def symbol_key(path: str, symbol: str) -> str:
    """A symbol as `definitions` keys it: a local one (`local 3`) means something only inside
    its document."""
    return f"{symbol} in {path}" if is_local(symbol) else symbol


def descriptors(symbol: str) -> list[Descriptor]:
    """The descriptors of a global symbol, outermost first, each with the symbol it ends; [] for
    a local symbol or one that does not parse."""
    if is_local(symbol):
        return []
    parts, at = 0, 0
    while parts < 4:  # scheme, manager, package, version
        space = symbol.find(" ", at)
        while space != -1 and symbol.startswith("  ", space):
            space = symbol.find(" ", space + 2)
        if space == -1:
            return []
        at, parts = space + 1, parts + 1
    out = []
    for match in _DESCRIPTOR.finditer(symbol, at):
        name, suffix = match.group(1), match.group(2)
        if name is None:
            parameter = match.group(3) is not None
            name, suffix = (match.group(3), PARAMETER) if parameter else (match.group(4), TYPE_PARAMETER)
        if name.startswith("`"):
            name = name[1:-1].replace("``", "`")
        name = _ACCESSOR.sub("", name)
        kind = METHOD if suffix.startswith("(") and suffix != PARAMETER else suffix
        out.append(Descriptor(name, kind, symbol[:match.end()]))
    return out
