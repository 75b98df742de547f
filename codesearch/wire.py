"""The JSON contract's records: frozen dataclasses turned into plain dicts and back, with checks.

Every message that crosses a process (socket, HTTP, MCP, LSP, `--json` output) is a `Record`:
`to_dict` writes it as the contract spells it, `from_dict` reads one from untrusted JSON and
says in one sentence what is wrong (`RequestError`) instead of failing somewhere deeper.
Light on purpose: the CLI imports it to talk to a daemon without loading any search machinery.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, ClassVar, TypeVar, Union

R = TypeVar("R", bound="Record")


class RequestError(ValueError):
    """A request that cannot be answered as asked (a missing field, a bad type or value)."""


class Record:
    """Base of the frozen dataclasses of the contract.

    Fields named in `OMIT_WHEN_NONE` are optional in the contract: left out of `to_dict` while
    None. Fields whose metadata says `wire=False` stay in process (ablation switches).
    """

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset()
    # what a field means, for the JSON Schema that HTTP's OpenAPI and MCP's tools publish
    DOCS: ClassVar[dict[str, str]] = {}
    # inclusive bounds of numeric fields: checked by `check`, published in the schema
    RANGES: ClassVar[dict[str, tuple[float, float]]] = {}
    # more JSON Schema for a field than its type says (an enum of allowed words, a pattern)
    SCHEMA: ClassVar[dict[str, dict[str, Any]]] = {}
    # string fields that must hold more than blanks (checked by `check`, published as a pattern)
    NOT_BLANK: ClassVar[frozenset[str]] = frozenset()

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Refuse a blank NOT_BLANK field or a number outside its RANGES."""
        for name in self.NOT_BLANK:
            if not getattr(self, name).strip():
                raise RequestError(f"the {name} is empty")
        for name, (low, high) in self.RANGES.items():
            value = getattr(self, name)
            if value is not None and not low <= value <= high:
                raise RequestError(f"{name} must be between {_number(low)} and {_number(high)}, not {value}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in _wire_fields(type(self)):
            value = getattr(self, f.name)
            if value is None and f.name in self.OMIT_WHEN_NONE:
                continue
            out[f.name] = _plain(value)
        return out

    @classmethod
    def from_dict(cls: type[R], data: Any, where: str = "") -> R:
        """Build from JSON-like data; unknown keys, missing required keys and wrong types are
        refused with a RequestError that names the field."""
        label = where or "params"
        if not isinstance(data, dict):
            raise RequestError(f"{label} must be an object, not {_json_type(data)}")
        known = {f.name: f for f in _wire_fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise RequestError(f"{label}: unknown field {unknown[0]!r}; known: {', '.join(known)}")
        hints = _hints(cls)
        values = {}
        for name, f in known.items():
            if name not in data:
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise RequestError(f"{label}: {name!r} is required")
                continue
            values[name] = _convert(data[name], hints[name], f"{label}.{name}" if where else name)
        return cls(**values)


_FIELDS: dict[type, tuple[dataclasses.Field, ...]] = {}
_HINTS: dict[type, dict[str, Any]] = {}


def _wire_fields(cls: type) -> tuple[dataclasses.Field, ...]:
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = tuple(f for f in dataclasses.fields(cls) if f.metadata.get("wire", True))
    return found


def _hints(cls: type) -> dict[str, Any]:
    found = _HINTS.get(cls)
    if found is None:
        found = _HINTS[cls] = typing.get_type_hints(cls)
    return found


def _plain(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _convert(value: Any, hint: Any, label: str) -> Any:
    """Check `value` against the type `hint` (the subset of types the contract uses)."""
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _convert(value, option, label)
            except RequestError as exc:
                errors.append(exc)
        raise errors[0]
    if origin is typing.Literal:
        allowed = typing.get_args(hint)
        if value not in allowed:
            raise RequestError(f"{label} must be one of {', '.join(map(str, allowed))}, not {value!r}")
        return value
    if origin in (tuple, list):
        if not isinstance(value, list):
            raise RequestError(f"{label} must be an array, not {_json_type(value)}")
        item = typing.get_args(hint)[0]
        items = [_convert(v, item, f"{label}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(value, dict):
            raise RequestError(f"{label} must be an object, not {_json_type(value)}")
        item = typing.get_args(hint)[1]
        return {str(k): _convert(v, item, f"{label}.{k}") for k, v in value.items()}
    if isinstance(hint, type) and issubclass(hint, Record):
        return hint.from_dict(value, label)
    if hint is Any:
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise RequestError(f"{label} must be true or false, not {_json_type(value)}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise RequestError(f"{label} must be an integer, not {_json_type(value)}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise RequestError(f"{label} must be a number, not {_json_type(value)}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise RequestError(f"{label} must be a string, not {_json_type(value)}")
        return value
    raise TypeError(f"no wire conversion for {hint!r} ({label})")


def json_schema(cls: type[Record], *, omit: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The JSON Schema (2020-12 subset) of a record as `from_dict` reads it and `to_dict` writes
    it: every wire field with its type, description and bounds; fields without a default are
    required. Nested records are written inline (the contract's records are small)."""
    hints = _hints(cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for f in _wire_fields(cls):
        if f.name in omit:
            continue
        schema = _type_schema(hints[f.name])
        if f.name in cls.DOCS:
            schema["description"] = cls.DOCS[f.name]
        if f.name in cls.NOT_BLANK:
            schema["pattern"] = r"\S"
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
    if cls.__doc__ and not cls.__doc__.startswith(cls.__name__ + "("):  # not dataclass's generated one
        out["description"] = " ".join(cls.__doc__.split())
    return out


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
