"""Strict decoding of JSON-shaped data into dataclasses, and encoding back.

Contract:
- A dataclass field ``foo_bar`` is the JSON key ``fooBar`` unless ``metadata={"json": ...}`` says
  otherwise. Keys not declared are errors that list what is allowed; fields without a default are
  required.
- Types are checked exactly as Go's decoder would for these configs: ``bool`` is not an integer,
  an integer is accepted where a float is expected; ``null`` leaves a field with a default at
  its default (Go leaves it at its zero value) and is refused for a required field.
- ``metadata={"duration": True}`` marks a string holding a Go duration (``"15s"``, ``"1m30s"``).
- Decoding never raises: it returns the value (possibly partial) and appends to ``errors``.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from corral.scheduler.config.errors import (
    FieldError,
    FieldPath,
    field_error,
    number_text,
    quote,
    suggest,
)

T = TypeVar("T")

_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0}
_DURATION_UNITS.update({"m": 60.0, "h": 3600.0})
# Unambiguous (one way to match any text), so matching is linear: "1.5", "1." and ".5" as Go.
_NUMBER = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_DURATION_RE = re.compile(rf"({_NUMBER})(ns|us|µs|μs|ms|s|m|h)")
_DURATION_WHOLE_RE = re.compile(rf"[-+]?(?:{_NUMBER}(?:ns|us|µs|μs|ms|s|m|h))+|[-+]?0")
# Go durations are int64 nanoseconds: about 2562047h47m.
MAX_DURATION_SECONDS = (2**63 - 1) / 1e9
MAX_DURATION_TEXT = 64

MAX_INT32 = 2**31 - 1
MIN_INT32 = -(2**31)
MAX_FLOAT32 = 3.4028234663852886e38


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string (``time.ParseDuration`` syntax). Raises ``ValueError``."""
    if not isinstance(text, str):
        raise ValueError(f"invalid duration {quote(text)}; use a number with a unit, e.g. 15s")
    if len(text) > MAX_DURATION_TEXT or not _DURATION_WHOLE_RE.fullmatch(text):
        shown = text[:MAX_DURATION_TEXT] + "..." if len(text) > MAX_DURATION_TEXT else text
        raise ValueError(f"invalid duration {quote(shown)}; use a number with a unit, e.g. 15s")
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("+-")
    if body == "0":
        return 0.0
    seconds = sum(float(n) * _DURATION_UNITS[u] for n, u in _DURATION_RE.findall(body))
    if seconds > MAX_DURATION_SECONDS:
        raise ValueError(f"duration {quote(text)} is out of range (at most 2562047h)")
    return sign * seconds


def json_name(f: dataclasses.Field[Any]) -> str:
    explicit = f.metadata.get("json")
    if isinstance(explicit, str):
        return explicit
    head, *rest = f.name.rstrip("_").split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def _expected_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if tp is bool:
        return "a boolean"
    if tp is int:
        return "an integer"
    if tp is float:
        return "a number"
    if tp is str:
        return "a string"
    if origin is list:
        return "a list"
    if origin is dict or dataclasses.is_dataclass(tp):
        return "an object"
    if origin is typing.Literal:
        return "one of " + ", ".join(quote(a) for a in typing.get_args(tp))
    return str(tp)


def decode(cls: type[T], data: object, path: FieldPath, errors: list[FieldError]) -> T | None:
    """Decode ``data`` into dataclass ``cls``; ``None`` when it is not even an object."""
    value = _decode_value(cls, data, path, errors, {})
    return typing.cast("T | None", value)


def _decode_value(
    tp: Any, data: object, path: FieldPath, errors: list[FieldError], meta: Mapping[str, Any]
) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(tp) if a is not type(None)]
        if data is None:
            return None
        return _decode_value(members[0], data, path, errors, meta)
    if tp is Any or tp is object:
        return data
    if origin is typing.Literal:
        allowed = typing.get_args(tp)
        if data not in allowed or not isinstance(data, str):
            errors.append(field_error(path, _unsupported(data, allowed)))
            return None
        return data
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _decode_dataclass(tp, data, path, errors)
    if origin is list:
        if not isinstance(data, list):
            errors.append(_type_error(path, tp, data))
            return []
        (item,) = typing.get_args(tp)
        return [_decode_value(item, v, path.index(i), errors, meta) for i, v in enumerate(data)]
    if origin is dict:
        if not isinstance(data, Mapping):
            errors.append(_type_error(path, tp, data))
            return {}
        _, item = typing.get_args(tp)
        out: dict[str, Any] = {}
        for k, v in data.items():
            if not isinstance(k, str):
                errors.append(field_error(path, f"keys must be strings, got {type_name(k)}"))
                continue
            out[k] = _decode_value(item, v, path.key(k), errors, meta)
        return out
    return _decode_scalar(tp, data, path, errors, meta)


def _decode_scalar(
    tp: Any, data: object, path: FieldPath, errors: list[FieldError], meta: Mapping[str, Any]
) -> Any:
    if tp is bool:
        if isinstance(data, bool):
            return data
    elif tp is int:
        if isinstance(data, int) and not isinstance(data, bool):
            bits = meta.get("bits", 32)
            if bits == 32 and not MIN_INT32 <= data <= MAX_INT32:
                errors.append(
                    field_error(path, f"{number_text(data)} does not fit in a 32-bit integer")
                )
                return None
            if not -(2**63) <= data < 2**63:
                errors.append(
                    field_error(path, f"{number_text(data)} does not fit in a 64-bit integer")
                )
                return None
            return data
    elif tp is float:
        if isinstance(data, int | float) and not isinstance(data, bool):
            # Go's float32 and float64: a number past their range is a decoding error there.
            limit = MAX_FLOAT32 if meta.get("bits") == 32 else sys.float_info.max
            bits = 32 if meta.get("bits") == 32 else 64
            finite = isinstance(data, int) or math.isfinite(data)
            if not finite or abs(data) > limit:
                errors.append(
                    field_error(path, f"{number_text(data)} does not fit in a {bits}-bit float")
                )
                return None
            return float(data)
    elif tp is str:
        if isinstance(data, str):
            if meta.get("duration"):
                try:
                    parse_duration(data)
                except ValueError as exc:
                    errors.append(field_error(path, str(exc)))
                    return None
            return data
    else:  # pragma: no cover - a programming error in a dataclass declaration
        raise TypeError(f"unsupported field type {tp!r} at {path}")
    errors.append(_type_error(path, tp, data))
    return None


def _decode_dataclass(
    cls: type[Any], data: object, path: FieldPath, errors: list[FieldError]
) -> Any:
    if not isinstance(data, Mapping):
        errors.append(_type_error(path, cls, data))
        return None
    hints, fields = _schema(cls)
    for key in data:
        if key not in fields:
            hint = suggest(str(key), fields)
            allowed = hint or "; allowed fields: " + (", ".join(sorted(fields)) or "none")
            errors.append(field_error(path.child(str(key)), f"unknown field{allowed}"))
    kwargs: dict[str, Any] = {}
    for key, f in fields.items():
        if key in data and data[key] is None and not _is_required(f):
            continue  # Go's decoder: null leaves a field at its zero value, here its default
        if key in data:
            value = _decode_value(hints[f.name], data[key], path.child(key), errors, f.metadata)
            if value is None and _is_required(f):
                continue
            kwargs[f.name] = value
        elif _is_required(f):
            errors.append(field_error(path.child(key), "required field is missing"))
    try:
        return cls(**kwargs)
    except TypeError:
        return None


_Schema = tuple[dict[str, Any], dict[str, dataclasses.Field[Any]]]
_SCHEMAS: dict[type[Any], _Schema] = {}


def _schema(cls: type[Any]) -> _Schema:
    """A dataclass's resolved field types and its fields by JSON name, read once per class:
    resolving the string annotations was most of a decode's time (every profile the operator
    reconciles, every config the engine loads). Callers must not change what it returns; two
    threads may both compute it once, with the same result."""
    found = _SCHEMAS.get(cls)
    if found is None:
        fields = {json_name(f): f for f in dataclasses.fields(cls) if f.init}
        found = _SCHEMAS[cls] = (typing.get_type_hints(cls), fields)
    return found


def _is_required(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _type_error(path: FieldPath, tp: Any, data: object) -> FieldError:
    return field_error(path, f"must be {_expected_name(tp)}, got {type_name(data)}")


def _unsupported(value: object, allowed: tuple[object, ...]) -> str:
    return f"unsupported value {quote(value)}; allowed: " + ", ".join(quote(a) for a in allowed)


def encode(obj: object) -> Any:
    """The JSON form of a decoded dataclass tree: ``None`` fields are left out."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if value is None:
                continue
            encoded = encode(value)
            if f.metadata.get("omitempty") and encoded in ([], {}):
                continue
            out[json_name(f)] = encoded
        return out
    if isinstance(obj, list | tuple):
        return [encode(v) for v in obj]
    if isinstance(obj, Mapping):
        return {k: encode(v) for k, v in obj.items()}
    return obj
