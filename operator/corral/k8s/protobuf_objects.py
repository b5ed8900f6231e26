"""Watched objects read from Kubernetes' protobuf, as the dicts their JSON would have given.

Why: the API server encodes a pod for a protobuf watch at about half the CPU of JSON, and at
5,000 nodes its core is what paces the engine (``docs/benchmarks/findings.md``, "The API
server's cost per pod"). The engine's plugins read pods as JSON dicts (``PodInfo.raw``), so the
protobuf form must decode to exactly that dict (equal as a dict: keys may come in another order
than JSON's struct order, which only a re-serialized document shows, e.g. a pod sent to an HTTP
extender).

The schema (``wire_schema.json``) is generated from the pinned ``k8s.io/api`` Go types by
``hack/gen-wire-schema``: per struct field its protobuf number, and its JSON name and omission
rule from the Go ``json`` tag. Go's ``encoding/json`` (what the API server writes JSON with)
and gogo-protobuf (what it writes protobuf with) differ in what they leave out, and this module
reproduces the JSON side:

- a non-pointer scalar travels even when zero; JSON drops it only under ``omitempty`` /
  ``omitzero``, and writes the zero value ("" / 0 / false) otherwise;
- an absent pointer, list or map is JSON ``null``, or dropped under ``omitempty``/``omitzero``
  (an empty list or map is absent on the wire: the server's own object holds ``nil``);
- a non-pointer struct is always written (``omitempty`` never drops a struct); ``omitzero``
  drops it when zero; an embedded struct's fields join its parent's object (``inline``);
- the types with their own JSON form: ``metav1.Time`` (RFC 3339, seconds; ``null`` when zero),
  ``MicroTime`` (microseconds), ``resource.Quantity`` (its canonical string), ``IntOrString``
  (a number or a string), ``FieldsV1`` (the raw JSON it holds).

Contract: :func:`decode_object` and :func:`decode_watch_event` raise :class:`WireSchemaError`
for anything the schema does not describe (a kind without a schema, a field number it does not
know, a wire type that does not match): a newer server may send fields this release's schema
lacks, and the caller then reads that stream as JSON instead, so nothing is ever dropped.
Malformed bytes raise :class:`WireSchemaError` too, never another exception.
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Any, Final

import orjson

from corral.k8s.protobuf import LENGTH, MAGIC, VARINT, MalformedError, decode_status
from corral.k8s.protobuf import read_varint as _varint

ACCEPT_PROTOBUF_WATCH: Final = "application/vnd.kubernetes.protobuf;stream=watch"
SCHEMA_FILE: Final = "wire_schema.json"

_SCALARS: Final = frozenset({"string", "bool", "int", "bytes"})
_SPECIAL: Final = frozenset({"time", "microtime", "quantity", "intorstring", "fieldsv1"})
_ZERO: Final[Mapping[str, Any]] = {"string": "", "bool": False, "int": 0}
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


class WireSchemaError(ValueError):
    """The bytes are not an object this schema describes (see the module's contract)."""


# How a field's value is read off the wire (see _decode).
_STRING, _INT, _BOOL, _MESSAGE, _BYTES, _SPECIAL_VALUE, _MAP_ENTRY = range(7)
_HOW: Final[Mapping[str, int]] = {
    "string": _STRING, "int": _INT, "bool": _BOOL, "message": _MESSAGE, "bytes": _BYTES,
}  # fmt: skip
_KEEP: Final = object()  # a present value that is always written


@dataclass(slots=True)
class _Field:
    number: int
    json: str  # "" for an inline (embedded) struct
    kind: str
    message: _Message | None
    pointer: bool
    repeated: bool
    map: bool
    omit_empty: bool
    omit_zero: bool


@dataclass(slots=True)
class _Message:
    name: str
    fields: list[_Field] = field(default_factory=list)  # Go struct (and JSON) order
    # Compiled by _compile once every message exists:
    # expected tag (number << 3 | wire type) -> (field index, how to read it, the field)
    by_tag: dict[int, tuple[int, int, _Field]] = field(default_factory=dict)
    # field index -> (JSON name, the present value JSON leaves out, or _KEEP)
    present: list[tuple[str, Any]] = field(default_factory=list)
    # fields JSON writes even when they did not travel: (index, name, zero value maker)
    absent: list[tuple[int, str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Schema:
    source: str  # the k8s.io/api version it was generated from
    kinds: Mapping[str, _Message]  # kind -> root message


def load_schema(text: str) -> Schema:
    """Compile the JSON table ``hack/gen-wire-schema`` writes. Raises :class:`ValueError` on
    a field kind this decoder does not read (a newer generator)."""
    raw = json.loads(text)
    messages = {name: _Message(name) for name in raw["types"]}
    for name, fields in raw["types"].items():
        for spec in fields:
            kind = spec["kind"]
            if kind not in _SCALARS and kind not in _SPECIAL and kind != "message":
                raise ValueError(f"{name}.{spec.get('json')}: field kind {kind!r} not supported")
            messages[name].fields.append(
                _Field(
                    number=spec["number"],
                    json=spec.get("json", ""),
                    kind=kind,
                    message=messages[spec["type"]] if kind == "message" else None,
                    pointer=spec.get("pointer", False),
                    repeated=spec.get("repeated", False),
                    map=spec.get("map", False),
                    omit_empty=spec.get("omitempty", False),
                    omit_zero=spec.get("omitzero", False),
                )
            )
    for message in messages.values():
        _compile(message)
    return Schema(raw["source"], {kind: messages[root] for kind, root in raw["kinds"].items()})


def _compile(message: _Message) -> None:
    for index, spec in enumerate(message.fields):
        how = _MAP_ENTRY if spec.map else _HOW.get(spec.kind, _SPECIAL_VALUE)
        wire = VARINT if how in (_INT, _BOOL) else LENGTH
        message.by_tag[spec.number << 3 | wire] = (index, how, spec)
        # Present values: lists, maps and pointers are written as they are; a plain scalar
        # is dropped when zero under omitempty; omitzero drops the type's zero value.
        drop: Any = _KEEP
        if not (spec.repeated or spec.map or spec.pointer):
            if spec.omit_empty and spec.kind in _ZERO:
                drop = _ZERO[spec.kind]
            elif spec.omit_zero:
                drop = _zero_of(spec)
        message.present.append((spec.json, drop))
        # Absent values: nil lists, maps, pointers and bytes are null unless omitted; other
        # fields are their zero value unless omitempty (scalars) or omitzero drops it.
        if spec.repeated or spec.map or spec.pointer or spec.kind == "bytes":
            if not (spec.omit_empty or spec.omit_zero):
                message.absent.append((index, spec.json, None))
        elif not ((spec.omit_empty and spec.kind in _ZERO) or spec.omit_zero):
            message.absent.append((index, spec.json, spec))


def _zero_of(spec: _Field) -> Any:
    """The JSON of a non-pointer field's zero value."""
    if spec.kind in _ZERO:
        return _ZERO[spec.kind]
    if spec.kind == "message":
        assert spec.message is not None
        return _to_json({}, spec.message)
    if spec.kind == "bytes":
        return None
    return _special(b"", 0, 0, spec.kind)


@functools.cache
def schema() -> Schema:
    """The schema shipped with this release (generated from its pinned ``k8s.io/api``)."""
    return load_schema(resources.files("corral.k8s").joinpath(SCHEMA_FILE).read_text())


# --- envelopes ----------------------------------------------------------------------------------


def decode_object(data: bytes, wire: Schema | None = None) -> dict[str, Any]:
    """A ``k8s\\0``-prefixed protobuf object (a GET answer, a watch event's object) as JSON."""
    return _guarded(_object, data, 0, len(data), wire or schema())


def decode_watch_event(frame: bytes, wire: Schema | None = None) -> dict[str, Any]:
    """One frame of a protobuf watch (``metav1.WatchEvent``: type 1, object 2 holding ``raw``
    1) as the JSON event ``{"type": ..., "object": ...}``. An ``ERROR`` event's object is the
    ``metav1.Status`` JSON."""
    return _guarded(_event, frame, 0, len(frame), wire or schema())


def _guarded(decode: Any, data: bytes, start: int, end: int, wire: Schema) -> dict[str, Any]:
    try:
        out: dict[str, Any] = decode(data, start, end, wire)
        return out
    except IndexError:
        raise WireSchemaError("truncated message") from None
    except UnicodeDecodeError as exc:
        raise WireSchemaError(f"invalid UTF-8: {exc}") from None
    except MalformedError as exc:  # from the varint reader shared with corral.k8s.protobuf
        raise WireSchemaError(str(exc)) from None


def _event(data: bytes, start: int, end: int, wire: Schema) -> dict[str, Any]:
    event = _envelope(data, start, end)
    kind = _text(data, event.get(1))
    inner_start, inner_end = _envelope(data, *event.get(2, (0, 0))).get(1, (0, 0))
    if kind == "ERROR":
        status = decode_status(data[inner_start:inner_end])
        if status is None:
            raise WireSchemaError("malformed ERROR event")
        return {"type": kind, "object": status}
    return {"type": kind, "object": _object(data, inner_start, inner_end, wire)}


def _object(data: bytes, start: int, end: int, wire: Schema) -> dict[str, Any]:
    if data[start : start + len(MAGIC)] != MAGIC:
        raise WireSchemaError("not a Kubernetes protobuf object (no k8s\\0 prefix)")
    unknown = _envelope(data, start + len(MAGIC), end)
    type_meta = _envelope(data, *unknown.get(1, (0, 0)))
    api_version = _text(data, type_meta.get(1))
    kind = _text(data, type_meta.get(2))
    message = wire.kinds.get(kind)
    if message is None:
        raise WireSchemaError(f"no protobuf schema for kind {kind!r}")
    out: dict[str, Any] = {"kind": kind, "apiVersion": api_version}
    out.update(_decode(data, *unknown.get(2, (0, 0)), message))
    return out


def _envelope(data: bytes, start: int, end: int) -> dict[int, tuple[int, int]]:
    """The length-delimited fields of an envelope message: number -> (start, end)."""
    out: dict[int, tuple[int, int]] = {}
    at = start
    while at < end:
        tag, at = _varint(data, at, end)
        if tag & 7 != LENGTH:
            raise WireSchemaError(f"unexpected wire type {tag & 7} in an envelope")
        size, at = _varint(data, at, end)
        if at + size > end:
            raise WireSchemaError("truncated message")
        out[tag >> 3] = (at, at + size)
        at += size
    return out


def _text(data: bytes, span: tuple[int, int] | None) -> str:
    return data[span[0] : span[1]].decode() if span else ""


# --- messages -----------------------------------------------------------------------------------


def _signed(value: int) -> int:
    """int32 and int64 travel as 64-bit two's complement."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _decode(data: bytes, start: int, end: int, message: _Message) -> dict[str, Any]:
    """One message's fields as JSON. The hot loop: one-byte tags and sizes are read inline;
    an ``IndexError`` or ``UnicodeDecodeError`` from truncated or malformed bytes is turned into
    :class:`WireSchemaError` by the public entry points."""
    values: dict[int, Any] = {}
    by_tag = message.by_tag
    at = start
    while at < end:
        tag = data[at]
        at += 1
        if tag >= 0x80:
            tag, at = _varint(data, at - 1, end)
        found = by_tag.get(tag)
        if found is None:
            at = _unexpected(data, (at, end), message, tag, values)
            continue
        index, how, spec = found
        value: Any
        if how in (_INT, _BOOL):
            raw = data[at]
            at += 1
            if raw >= 0x80:
                raw, at = _varint(data, at - 1, end)
            value = (raw if raw < 1 << 63 else raw - (1 << 64)) if how == _INT else raw != 0
        else:
            size = data[at]
            at += 1
            if size >= 0x80:
                size, at = _varint(data, at - 1, end)
            stop = at + size
            if stop > end:
                raise WireSchemaError(f"{message.name}.{spec.json}: truncated field")
            if how == _STRING:
                value = data[at:stop].decode()
            elif how == _MESSAGE:
                assert spec.message is not None
                value = _decode(data, at, stop, spec.message)
            elif how == _MAP_ENTRY:
                value = _entry(data, at, stop, spec)
            else:
                value = _length_value(data, at, stop, spec)
            at = stop
        if spec.repeated:
            values.setdefault(index, []).append(value)
        elif how == _MAP_ENTRY:
            values.setdefault(index, {})[value[0]] = value[1]
        else:
            values[index] = value
    return _to_json(values, message)


def _unexpected(
    data: bytes, span: tuple[int, int], message: _Message, tag: int, values: dict[int, Any]
) -> int:
    """A tag the fast path does not expect (it starts ``span``): packed repeated scalars, or a
    schema mismatch. Returns where the next field starts."""
    at, end = span
    number, wire = tag >> 3, tag & 7
    for index, how, spec in message.by_tag.values():
        if spec.number != number:
            continue
        if not (spec.repeated and how in (_INT, _BOOL) and wire == LENGTH):
            raise WireSchemaError(f"{message.name}.{spec.json}: unexpected wire type {wire}")
        size, at = _varint(data, at, end)
        stop = at + size
        if stop > end:
            raise WireSchemaError(f"{message.name}.{spec.json}: truncated field")
        items = values.setdefault(index, [])
        while at < stop:
            raw, at = _varint(data, at, stop)
            items.append(_signed(raw) if how == _INT else raw != 0)
        return at
    raise WireSchemaError(f"{message.name}: unknown field number {number}")


def _entry(data: bytes, start: int, end: int, spec: _Field) -> tuple[str, Any]:
    """A map entry: key 1 (always a string in Kubernetes' types), value 2."""
    key, found = "", False
    value: Any = None
    at = start
    while at < end:
        tag, at = _varint(data, at, end)
        if tag == (2 << 3 | VARINT) and spec.kind in ("int", "bool"):
            raw, at = _varint(data, at, end)
            value, found = (_signed(raw) if spec.kind == "int" else raw != 0), True
            continue
        if tag & 7 != LENGTH or tag >> 3 not in (1, 2):
            raise WireSchemaError(f"{spec.json}: malformed map entry")
        size, at = _varint(data, at, end)
        stop = at + size
        if stop > end:
            raise WireSchemaError(f"{spec.json}: truncated map entry")
        if tag >> 3 == 1:
            key = data[at:stop].decode()
        else:
            value, found = _length_value(data, at, stop, spec), True
        at = stop
    return key, value if found else _zero_of(spec)


def _length_value(data: bytes, start: int, end: int, spec: _Field) -> Any:
    """A length-delimited value of ``spec``'s kind (``_decode`` reads strings and messages
    inline; map values and the rarer kinds come here)."""
    kind = spec.kind
    if kind == "string":
        return data[start:end].decode()
    if kind == "message":
        assert spec.message is not None
        return _decode(data, start, end, spec.message)
    if kind == "bytes":
        return base64.b64encode(data[start:end]).decode()
    if kind in _SPECIAL:
        return _special(data, start, end, kind)
    raise WireSchemaError(f"{spec.json}: length-delimited value for a {kind}")


def _special(data: bytes, start: int, end: int, kind: str) -> Any:
    """The JSON form of a type that marshals itself (see the module docstring)."""
    numbers: dict[int, int] = {}
    spans: dict[int, tuple[int, int]] = {}
    at = start
    while at < end:
        tag, at = _varint(data, at, end)
        if tag & 7 == VARINT:
            numbers[tag >> 3], at = _varint(data, at, end)
        elif tag & 7 == LENGTH:
            size, at = _varint(data, at, end)
            if at + size > end:
                raise WireSchemaError(f"truncated {kind}")
            spans[tag >> 3] = (at, at + size)
            at += size
        else:
            raise WireSchemaError(f"malformed {kind}")
    if kind in ("time", "microtime"):
        if start == end:
            return None  # Go's zero time: JSON null
        seconds = _rfc3339(_signed(numbers.get(1, 0)))
        if kind == "time":  # metav1.Time keeps whole seconds only
            return seconds + "Z"
        return f"{seconds}.{_signed(numbers.get(2, 0)) // 1000:06d}Z"
    span = spans.get(1 if kind in ("quantity", "fieldsv1") else 3, (0, 0))
    if kind == "quantity":
        return data[span[0] : span[1]].decode() or "0"
    if kind == "intorstring":
        if numbers.get(1, 0) == 1:
            return data[span[0] : span[1]].decode()
        return _signed(numbers.get(2, 0))
    # fieldsv1: the JSON document it carries
    if span[0] == span[1]:
        return None
    try:
        return orjson.loads(data[span[0] : span[1]])
    except orjson.JSONDecodeError as exc:
        raise WireSchemaError(f"FieldsV1 is not JSON: {exc}") from None


@functools.lru_cache(maxsize=4096)  # objects made close together share their seconds
def _rfc3339(seconds: int) -> str:
    """``seconds`` since the epoch as RFC 3339 in UTC, without the zone."""
    try:
        at = _EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        raise WireSchemaError(f"time {seconds} out of range") from None
    # Not strftime: its %Y does not pad years before 1000, Go's RFC 3339 does.
    return (
        f"{at.year:04d}-{at.month:02d}-{at.day:02d}T{at.hour:02d}:{at.minute:02d}:{at.second:02d}"
    )


def _to_json(values: dict[int, Any], message: _Message) -> dict[str, Any]:
    out: dict[str, Any] = {}
    present = message.present
    for index, value in values.items():
        name, drop = present[index]
        if drop is not _KEEP and value == drop:
            continue
        if name:
            out[name] = value
        else:  # inline: the embedded struct's fields join this object
            out.update(value)
    for index, name, maker in message.absent:
        if index in values:
            continue
        value = _zero_of(maker) if isinstance(maker, _Field) else maker
        if name:
            out[name] = value
        else:
            out.update(value)
    return out
