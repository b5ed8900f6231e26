"""Kubernetes' protobuf wire format for the few objects the scheduler writes on its hot path.

Upstream kube-scheduler talks protobuf (``clientConnection.contentType``); the API server decodes
a protobuf body and encodes a protobuf answer several times cheaper than JSON, and at 5,000 nodes
its core is what bounds both schedulers' throughput. The engine writes two objects per scheduled
pod, a Binding and an Event, so only those get schemas here (field numbers from
``k8s.io/api`` and ``k8s.io/apimachinery``'s ``generated.proto``); everything else stays JSON.

Contract:

- :func:`encode` returns the body for ``Content-Type: application/vnd.kubernetes.protobuf``: the
  4-byte magic ``k8s\\0`` and a ``runtime.Unknown`` whose ``typeMeta`` names the object and whose
  ``raw`` is the message. It returns ``None`` for a kind without a schema and for an object
  holding any field, or any value type, its schema does not carry: the caller then sends JSON,
  so nothing is ever dropped on the way.
- :func:`decode_status` reads a ``metav1.Status`` answer (the API's errors, when the client
  accepted protobuf) into the dict JSON would have given; ``None`` for anything else or for
  malformed bytes, never an exception.

Why not the ``protobuf`` package: it needs descriptors compiled from the ``.proto`` files (and
``protoc`` to compile them); Kubernetes' ``core/v1`` alone pulls in thousands of generated lines
to send two small messages. The wire format they need is varints and length-prefixed fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal

CONTENT_PROTOBUF: Final = "application/vnd.kubernetes.protobuf"
MAGIC: Final = b"k8s\x00"

# Wire types (the low three bits of a field's tag).
VARINT: Final = 0
FIXED64: Final = 1
LENGTH: Final = 2
FIXED32: Final = 5

Kind = Literal["string", "int", "map", "time", "message"]


@dataclass(frozen=True, slots=True)
class Field:
    number: int
    kind: Kind
    message: Schema | None = None  # for kind "message"


Schema = Mapping[str, Field]  # JSON field name -> how it is written


def _message(number: int, schema: Schema) -> Field:
    return Field(number, "message", schema)


# --- schemas (a subset of each message: the fields the engine's objects carry) ---------------

OBJECT_META: Final[Schema] = {
    "name": Field(1, "string"),
    "generateName": Field(2, "string"),
    "namespace": Field(3, "string"),
    "uid": Field(5, "string"),
    "resourceVersion": Field(6, "string"),
    "labels": Field(11, "map"),
    "annotations": Field(12, "map"),
}
OBJECT_REFERENCE: Final[Schema] = {
    "kind": Field(1, "string"),
    "namespace": Field(2, "string"),
    "name": Field(3, "string"),
    "uid": Field(4, "string"),
    "apiVersion": Field(5, "string"),
    "resourceVersion": Field(6, "string"),
    "fieldPath": Field(7, "string"),
}
BINDING: Final[Schema] = {
    "metadata": _message(1, OBJECT_META),
    "target": _message(2, OBJECT_REFERENCE),
}
EVENT_SERIES: Final[Schema] = {  # events.k8s.io/v1
    "count": Field(1, "int"),
    "lastObservedTime": Field(2, "time"),
}
EVENT: Final[Schema] = {  # events.k8s.io/v1
    "metadata": _message(1, OBJECT_META),
    "eventTime": Field(2, "time"),
    "series": _message(3, EVENT_SERIES),
    "reportingController": Field(4, "string"),
    "reportingInstance": Field(5, "string"),
    "action": Field(6, "string"),
    "reason": Field(7, "string"),
    "regarding": _message(8, OBJECT_REFERENCE),
    "related": _message(9, OBJECT_REFERENCE),
    "note": Field(10, "string"),
    "type": Field(11, "string"),
}
KINDS: Final[Mapping[tuple[str, str], Schema]] = {
    ("v1", "Binding"): BINDING,
    ("events.k8s.io/v1", "Event"): EVENT,
}


class _UnencodableError(Exception):
    """The object holds something its schema does not carry."""


# --- encoding ---------------------------------------------------------------------------------


def encode(obj: Mapping[str, Any]) -> bytes | None:
    """The protobuf body for ``obj``, or ``None`` when it must go as JSON (see the contract)."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    schema = KINDS.get((api_version, kind))
    if schema is None:
        return None
    message = bytearray()
    try:
        _encode_message(message, {k: v for k, v in obj.items() if k not in _TYPE_META}, schema)
    except _UnencodableError:
        return None
    type_meta = bytearray()
    _put_bytes(type_meta, 1, api_version.encode())
    _put_bytes(type_meta, 2, kind.encode())
    unknown = bytearray()
    _put_bytes(unknown, 1, type_meta)
    _put_bytes(unknown, 2, message)
    return MAGIC + unknown


_TYPE_META: Final = frozenset({"apiVersion", "kind"})


def _encode_message(out: bytearray, obj: Any, schema: Schema) -> None:
    if not isinstance(obj, Mapping):
        raise _UnencodableError
    unknown = obj.keys() - schema.keys()
    if unknown:
        raise _UnencodableError
    # Field-number order, as Go's marshallers write (decoders accept any order).
    for name, field in sorted(schema.items(), key=lambda item: item[1].number):
        value = obj.get(name)
        if value is None:
            continue
        _encode_field(out, field, value)


def _encode_field(out: bytearray, field: Field, value: Any) -> None:
    if field.kind == "string":
        if not isinstance(value, str):
            raise _UnencodableError
        _put_bytes(out, field.number, value.encode())
    elif field.kind == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            raise _UnencodableError
        _put_varint(out, field.number << 3 | VARINT)
        _put_varint(out, value & 0xFFFF_FFFF_FFFF_FFFF)  # negatives: two's complement, 10 bytes
    elif field.kind == "time":
        _put_bytes(out, field.number, _time(value))
    elif field.kind == "map":
        if not isinstance(value, Mapping):
            raise _UnencodableError
        for key in sorted(value):  # Go's marshallers sort map keys
            if not isinstance(key, str) or not isinstance(value[key], str):
                raise _UnencodableError
            entry = bytearray()
            _put_bytes(entry, 1, key.encode())
            _put_bytes(entry, 2, value[key].encode())
            _put_bytes(out, field.number, entry)
    else:
        assert field.message is not None
        nested = bytearray()
        _encode_message(nested, value, field.message)
        _put_bytes(out, field.number, nested)


def _time(value: Any) -> bytes:
    """A ``metav1.Time``/``MicroTime`` (seconds 1, nanos 2) from its RFC 3339 string."""
    if not isinstance(value, str):
        raise _UnencodableError
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise _UnencodableError from None
    if moment.tzinfo is None:
        raise _UnencodableError
    seconds = int(moment.timestamp() // 1)
    out = bytearray()
    if seconds:
        _put_varint(out, 1 << 3 | VARINT)
        _put_varint(out, seconds & 0xFFFF_FFFF_FFFF_FFFF)
    if moment.microsecond:
        _put_varint(out, 2 << 3 | VARINT)
        _put_varint(out, moment.microsecond * 1000)
    return bytes(out)


def _put_varint(out: bytearray, value: int) -> None:
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)


def _put_bytes(out: bytearray, number: int, data: bytes | bytearray) -> None:
    _put_varint(out, number << 3 | LENGTH)
    _put_varint(out, len(data))
    out += data


# --- decoding a Status ------------------------------------------------------------------------


class MalformedError(ValueError):
    """The bytes are not a well-formed message."""


def decode_status(data: bytes) -> dict[str, Any] | None:
    """A protobuf ``metav1.Status`` as its JSON form (only the fields present); ``None`` when
    ``data`` is not one (another kind, not protobuf, or malformed)."""
    if not data.startswith(MAGIC):
        return None
    try:
        unknown = _fields(memoryview(data)[len(MAGIC) :])
        type_meta = _fields(_one(unknown, 1, b""))
        if bytes(_one(type_meta, 2, b"")) != b"Status":
            return None
        status = _fields(_one(unknown, 2, b""))
        out: dict[str, Any] = {"kind": "Status", "apiVersion": "v1"}
        _strings(out, status, {2: "status", 3: "message", 4: "reason"})
        _int(out, status, 6, "code")
        if 5 in status:
            out["details"] = _details(_fields(_one(status, 5, b"")))
        return out
    except (MalformedError, UnicodeDecodeError):
        return None


def _details(fields: dict[int, list[Any]]) -> dict[str, Any]:
    details: dict[str, Any] = {}
    _strings(details, fields, {1: "name", 2: "group", 3: "kind", 6: "uid"})
    _int(details, fields, 5, "retryAfterSeconds")
    causes = []
    for raw in fields.get(4, []):
        cause: dict[str, Any] = {}
        _strings(cause, _fields(_bytes(raw)), {1: "reason", 2: "message", 3: "field"})
        causes.append(cause)
    if causes:
        details["causes"] = causes
    return details


# Go writes empty strings and zeros in protobuf; JSON omits them (``omitempty``), and so do these.


def _strings(out: dict[str, Any], fields: dict[int, list[Any]], names: Mapping[int, str]) -> None:
    for number, name in names.items():
        if number in fields:
            text = bytes(_bytes(fields[number][-1])).decode()
            if text:
                out[name] = text


def _int(out: dict[str, Any], fields: dict[int, list[Any]], number: int, name: str) -> None:
    if number in fields:
        value = _int32(fields[number][-1])
        if value:
            out[name] = value


def _one(fields: dict[int, list[Any]], number: int, default: bytes) -> memoryview:
    values = fields.get(number)
    return _bytes(values[-1]) if values else memoryview(default)


def _bytes(value: Any) -> memoryview:
    if not isinstance(value, memoryview):
        raise MalformedError
    return value


def _int32(value: Any) -> int:
    if not isinstance(value, int):
        raise MalformedError
    low: int = value & 0xFFFF_FFFF
    return low - (1 << 32) if low >= 1 << 31 else low


def _fields(data: memoryview) -> dict[int, list[Any]]:
    """Every field of one message by number: ints for varints, views for length-delimited
    fields; fixed-width fields are skipped."""
    fields: dict[int, list[Any]] = {}
    at = 0
    while at < len(data):
        tag, at = read_varint(data, at, len(data))
        number, wire = tag >> 3, tag & 7
        value: Any
        if wire == VARINT:
            value, at = read_varint(data, at, len(data))
        elif wire == LENGTH:
            size, at = read_varint(data, at, len(data))
            if at + size > len(data):
                raise MalformedError
            value, at = data[at : at + size], at + size
        elif wire in (FIXED64, FIXED32):
            at += 8 if wire == FIXED64 else 4
            if at > len(data):
                raise MalformedError
            continue
        else:
            raise MalformedError
        if number == 0:
            raise MalformedError
        fields.setdefault(number, []).append(value)
    return fields


def read_varint(data: bytes | memoryview, at: int, end: int) -> tuple[int, int]:
    """The varint starting at ``at`` (read no further than ``end``) and where the next field
    starts; :class:`MalformedError` when it runs past ``end`` or beyond 64 bits."""
    value = shift = 0
    while True:
        if at >= end or shift > 63:
            raise MalformedError("malformed varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
