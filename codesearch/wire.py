"""The JSON contract's records: frozen dataclasses turned into plain dicts and back, with checks.

Every message that crosses a process (socket, HTTP, MCP, LSP, `--json` output) is a `Record`:
`to_dict` writes it as the contract spells it, `from_dict` reads one from untrusted JSON and
says in one sentence what is wrong (`RequestError`) instead of failing somewhere deeper.
Light on purpose: the CLI imports it to talk to a daemon without loading any search machinery.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, Union

from .text import text_problem

R = TypeVar("R", bound="Record")


# Unicode's White_Space, as a regular expression's character class: what a blank field holds. Named
# one by one because `\s` differs between Python (which counts \x1c-\x1f) and the ECMAScript and
# Rust engines that read a published pattern; `is_blank` and the patterns use this one set.
BLANKS = r"\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
NOT_BLANK_PATTERN = f"[^{BLANKS}]"
_BLANK = re.compile(f"[{BLANKS}]*")


def is_blank(text: str) -> bool:
    """Whether `text` holds nothing but blanks (as NOT_BLANK_PATTERN, published, says)."""
    return _BLANK.fullmatch(text) is not None


class RequestError(ValueError):
    """A request that cannot be answered as asked (a missing field, a bad type or value)."""


class NotFound(RequestError):
    """A well-formed request for something that is not there (a file, a chunk id): HTTP's 404."""


class Record:
    """Base of the frozen dataclasses of the contract.

    Fields named in `OMIT_WHEN_NONE` are optional in the contract: left out of `to_dict` while
    None. Fields whose metadata says `wire=False` stay in process (ablation switches). A record
    that documents its fields (`DOCS`) is a request, filled in by a client: `check` refuses text
    in it that is not valid UTF-8 or holds a NUL, for every front-end at once.
    """

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset()
    # what a field means, for the JSON Schema that HTTP's OpenAPI and MCP's tools publish
    DOCS: ClassVar[dict[str, str]] = {}
    # inclusive bounds of numeric fields: checked by `check`, published in the schema
    RANGES: ClassVar[dict[str, tuple[float, float]]] = {}
    # more JSON Schema for a field than its type says (an enum of allowed words, a pattern)
    SCHEMA: ClassVar[dict[str, dict[str, Any]]] = {}
    # string fields that must hold more than blanks when given (checked by `check`, published as a pattern)
    NOT_BLANK: ClassVar[frozenset[str]] = frozenset()
    # more JSON Schema for the whole object: a rule between fields that the record's __post_init__
    # checks (a path or a chunk id), so that the schema accepts what the check accepts
    OBJECT_SCHEMA: ClassVar[dict[str, Any]] = {}

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Refuse bad text in a request, a blank NOT_BLANK field or a number outside its RANGES."""
        if self.DOCS:
            for name in _plan(type(self)).texts:
                _check_text(name, getattr(self, name))
        for name in self.NOT_BLANK:
            value = getattr(self, name)
            if value is not None and is_blank(value):
                raise RequestError(f"the {name} is empty")
        for name, (low, high) in self.RANGES.items():
            value = getattr(self, name)
            if value is not None and not low <= value <= high:
                raise RequestError(f"{name} must be between {_number(low)} and {_number(high)}, not {value}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, omit_when_none, write in _plan(type(self)).writers:
            value = getattr(self, name)
            if value is None:
                if not omit_when_none:
                    out[name] = None
            else:
                out[name] = write(value) if write is not None else value
        return out

    @classmethod
    def from_dict(cls: type[R], data: Any, where: str = "") -> R:
        """Build from JSON-like data; unknown keys, missing required keys and wrong types are
        refused with a RequestError that names the field."""
        try:
            return _plan(cls).read(data)
        except _Bad as bad:
            raise RequestError(bad.message(where)) from None


def _check_text(name: str, value: Any) -> None:
    """A text field's value (a string, or strings in a tuple) through `text_problem`."""
    texts = [(f"the {name}", value)] if isinstance(value, str) else \
        [(f"{name}[{i}]", text) for i, text in enumerate(value or ())]
    for label, text in texts:
        problem = text_problem(text)
        if problem:
            raise RequestError(f"{label} {problem}")


# --- how each record class is written and read, worked out once per class ----------------------
# A grep answer holds up to 100,000 matches: walking the type hints for every value made reading
# and writing them cost seconds; these per-class plans do the same checks in a fraction.

_Writer = Callable[[Any], Any]  # a field's value (never None) -> its JSON form
_Reader = Callable[[Any], Any]  # JSON -> the field's value; raises _Bad


class _Bad(Exception):
    """A value that does not fit, found somewhere below the record being read: the path to it
    (innermost first) is collected on the way out, so the label is only built when needed."""

    def __init__(self, what: str, colon: bool = False):
        super().__init__(what)
        self.what, self.colon = what, colon
        self.parts: list[str] = []

    def message(self, where: str) -> str:
        label = where
        for part in reversed(self.parts):
            label = label + part if part.startswith("[") or not label else f"{label}.{part}"
        return f"{label or 'params'}{':' if self.colon else ''} {self.what}"


class _Plan:
    def __init__(self, cls: type[Record]):
        fields = _wire_fields(cls)
        hints = typing.get_type_hints(cls)
        self.cls = cls
        self.names = frozenset(f.name for f in fields)
        self.writers = [(f.name, f.name in cls.OMIT_WHEN_NONE, _writer(hints[f.name])) for f in fields]
        self.readers = [(f.name, _reader(hints[f.name]), f.default is dataclasses.MISSING
                         and f.default_factory is dataclasses.MISSING) for f in fields]
        self.known = ", ".join(f.name for f in fields)
        self.texts = tuple(f.name for f in fields if _holds_text(hints[f.name]))

    def read(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise _Bad(f"must be an object, not {_json_type(data)}")
        if not data.keys() <= self.names:
            raise _Bad(f"unknown field {sorted(set(data) - self.names)[0]!r}; known: {self.known}", colon=True)
        values = {}
        for name, read, required in self.readers:
            if name not in data:
                if required:
                    raise _Bad(f"{name!r} is required", colon=True)
                continue
            try:
                values[name] = read(data[name])
            except _Bad as bad:
                bad.parts.append(name)
                raise
        return self.cls(**values)


_PLANS: dict[type, _Plan] = {}
_FIELDS: dict[type, tuple[dataclasses.Field, ...]] = {}


def _plan(cls: type[Record]) -> _Plan:
    found = _PLANS.get(cls)
    if found is None:
        found = _PLANS[cls] = _Plan(cls)
    return found


def _wire_fields(cls: type) -> tuple[dataclasses.Field, ...]:
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = tuple(f for f in dataclasses.fields(cls) if f.metadata.get("wire", True))
    return found


def _holds_text(hint: Any) -> bool:
    """A field of type `hint` holds client text directly: str, optional or in a tuple or list."""
    if hint is str:
        return True
    origin = typing.get_origin(hint)
    return origin in (Union, types.UnionType, tuple, list) and any(_holds_text(h) for h in typing.get_args(hint))


def _plain(value: Any) -> Any:
    """The JSON form of a value whose type says nothing (`Any`)."""
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _writer(hint: Any) -> _Writer | None:
    """How a value of type `hint` is written (None: as it is)."""
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [_writer(o) for o in typing.get_args(hint) if o is not type(None)]
        if len(options) == 1:
            return options[0]  # None itself never reaches a writer
        return _plain if any(options) else None
    if origin in (tuple, list):
        item = _writer(typing.get_args(hint)[0])
        return list if item is None else (lambda v: [item(x) for x in v])
    if origin is dict:
        value_writer = _writer(typing.get_args(hint)[1])
        return dict if value_writer is None else (lambda v: {k: value_writer(x) for k, x in v.items()})
    if isinstance(hint, type) and issubclass(hint, Record):
        return hint.to_dict
    if hint is Any:
        return _plain
    return None


def _reader(hint: Any) -> _Reader:
    """How a value of type `hint` is checked and read from JSON (the subset of types the contract uses)."""
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        nullable = type(None) in typing.get_args(hint)
        options = [_reader(o) for o in typing.get_args(hint) if o is not type(None)]

        def read_union(value: Any) -> Any:
            if value is None and nullable:
                return None
            errors = []
            for option in options:
                try:
                    return option(value)
                except _Bad as bad:
                    errors.append(bad)
            raise errors[0]
        return read_union
    if origin is typing.Literal:
        allowed = typing.get_args(hint)

        def read_literal(value: Any) -> Any:
            if value not in allowed:
                raise _Bad(f"must be one of {', '.join(map(str, allowed))}, not {value!r}")
            return value
        return read_literal
    if origin in (tuple, list):
        item = _reader(typing.get_args(hint)[0])
        as_tuple = origin is tuple

        def read_array(value: Any) -> Any:
            if not isinstance(value, list):
                raise _Bad(f"must be an array, not {_json_type(value)}")
            items = []
            for i, v in enumerate(value):
                try:
                    items.append(item(v))
                except _Bad as bad:
                    bad.parts.append(f"[{i}]")
                    raise
            return tuple(items) if as_tuple else items
        return read_array
    if origin is dict:
        item = _reader(typing.get_args(hint)[1])

        def read_object(value: Any) -> Any:
            if not isinstance(value, dict):
                raise _Bad(f"must be an object, not {_json_type(value)}")
            out = {}
            for k, v in value.items():
                try:
                    out[str(k)] = item(v)
                except _Bad as bad:
                    bad.parts.append(str(k))
                    raise
            return out
        return read_object
    if isinstance(hint, type) and issubclass(hint, Record):
        return lambda value: _plan(hint).read(value)
    if hint is Any:
        return lambda value: value
    simple = _SIMPLE_READERS.get(hint)
    if simple is None:
        raise TypeError(f"no wire conversion for {hint!r}")
    return simple


def _read_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Bad(f"must be true or false, not {_json_type(value)}")
    return value


def _read_int(value: Any) -> int:
    """An integer, also as JSON Schema counts one: 509.0 is 509."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Bad(f"must be an integer, not {_json_type(value)}")
    return value


def _read_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Bad(f"must be a number, not {_json_type(value)}")
    return float(value)


def _read_str(value: Any) -> str:
    if not isinstance(value, str):
        raise _Bad(f"must be a string, not {_json_type(value)}")
    return value


_SIMPLE_READERS: dict[Any, _Reader] = {bool: _read_bool, int: _read_int, float: _read_float, str: _read_str}


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def json_depth(value: Any, limit: int) -> int:
    """How deeply `value` nests (iteratively: no recursion on hostile input), up to limit + 1."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if deepest > limit:
                return deepest
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def json_schema(cls: type[Record], *, omit: frozenset[str] = frozenset(),
                between_fields: bool = True) -> dict[str, Any]:
    """The JSON Schema (2020-12 subset) of a record as `from_dict` reads it and `to_dict` writes
    it: every wire field with its type, description and bounds; fields without a default are
    required; with `between_fields`, the record's OBJECT_SCHEMA (some tool-calling APIs refuse
    anyOf and oneOf at a schema's top). Nested records are written inline (the contract's
    records are small)."""
    hints = typing.get_type_hints(cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for f in _wire_fields(cls):
        if f.name in omit:
            continue
        schema = _type_schema(hints[f.name])
        if f.name in cls.DOCS:
            schema["description"] = cls.DOCS[f.name]
        if cls.DOCS:  # a request: its text is checked by `_check_text`
            _pattern_strings(schema, _NOT_BLANK_TEXT if f.name in cls.NOT_BLANK else _TEXT)
        schema.update(cls.SCHEMA.get(f.name, {}))
        if f.name in cls.RANGES:
            low, high = cls.RANGES[f.name]
            schema["minimum"], schema["maximum"] = low, high
        if f.default is not dataclasses.MISSING and isinstance(f.default, (str, int, float, bool)):
            schema["default"] = f.default
        properties[f.name] = schema
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = required
    if between_fields:
        out.update(cls.OBJECT_SCHEMA)
    if cls.__doc__ and not cls.__doc__.startswith(cls.__name__ + "("):  # not dataclass's generated one
        out["description"] = " ".join(cls.__doc__.split())
    return out


# what `text_problem` lets through, as a pattern: no NUL (a lone surrogate is no Unicode text, so a
# schema has no need to, and the Rust regex engines of schema validators cannot, name one); and
# with more than blanks
_TEXT = r"^[^\u0000]*$"
_NOT_BLANK_TEXT = rf"^[^\u0000]*[^\u0000{BLANKS}][^\u0000]*$"


def _pattern_strings(schema: dict[str, Any], pattern: str) -> None:
    """Give every string in a field's schema (itself, an option of it, its items) the pattern."""
    if schema.get("type") == "string":
        schema["pattern"] = pattern
    for option in schema.get("anyOf", ()):
        _pattern_strings(option, pattern)
    if schema.get("type") == "array":
        _pattern_strings(schema["items"], pattern)


def _type_schema(hint: Any) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [_type_schema(o) for o in typing.get_args(hint)]
        return options[0] if len(options) == 1 else {"anyOf": options}
    if origin is typing.Literal:
        return {"enum": list(typing.get_args(hint))}
    if origin in (tuple, list):
        return {"type": "array", "items": _type_schema(typing.get_args(hint)[0])}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(typing.get_args(hint)[1])}
    if isinstance(hint, type) and issubclass(hint, Record):
        return json_schema(hint)
    simple = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}
    if hint is Any:
        return {}
    if hint in simple:
        return {"type": simple[hint]}
    raise TypeError(f"no JSON Schema for {hint!r}")
