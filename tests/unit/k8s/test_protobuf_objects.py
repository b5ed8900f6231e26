"""The protobuf object decoder's JSON rules, envelopes and failures, over a small schema written
here (the shipped Pod schema against the real API server is ``tests/e2e/test_protobuf_watch.py``).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral.k8s import protobuf_objects as po
from corral.k8s.protobuf import MAGIC

# Root's fields cover every rule of the module docstring; Item is a small nested struct.
SCHEMA = po.load_schema(
    json.dumps(
        {
            "source": "test",
            "kinds": {"Thing": "t.Root"},
            "types": {
                "t.Root": [
                    {"number": 1, "json": "name", "kind": "string"},
                    {"number": 2, "json": "note", "omitempty": True, "kind": "string"},
                    {"number": 3, "json": "count", "omitempty": True, "kind": "int"},
                    {"number": 4, "json": "replicas", "omitempty": True, "pointer": True,
                     "kind": "int"},
                    {"number": 5, "json": "enabled", "kind": "bool"},
                    {"number": 6, "json": "tags", "omitempty": True, "repeated": True,
                     "kind": "string"},
                    {"number": 7, "json": "items", "repeated": True, "kind": "message",
                     "type": "t.Item"},
                    {"number": 8, "json": "labels", "omitempty": True, "map": True,
                     "kind": "string"},
                    {"number": 9, "json": "limits", "omitempty": True, "map": True,
                     "kind": "quantity"},
                    {"number": 10, "json": "created", "omitempty": True, "kind": "time"},
                    {"number": 11, "json": "seen", "omitempty": True, "pointer": True,
                     "kind": "microtime"},
                    {"number": 12, "json": "port", "kind": "intorstring"},
                    {"number": 13, "json": "fields", "omitempty": True, "pointer": True,
                     "kind": "fieldsv1"},
                    {"number": 14, "inline": True, "kind": "message", "type": "t.Item"},
                    {"number": 15, "json": "child", "omitempty": True, "pointer": True,
                     "kind": "message", "type": "t.Item"},
                    {"number": 16, "json": "spec", "omitempty": True, "kind": "message",
                     "type": "t.Item"},
                    {"number": 17, "json": "when", "omitempty": True, "omitzero": True,
                     "kind": "time"},
                    {"number": 18, "json": "ids", "omitempty": True, "repeated": True,
                     "kind": "int"},
                    {"number": 19, "json": "data", "omitempty": True, "kind": "bytes"},
                    {"number": 20, "json": "size", "kind": "quantity"},
                ],
                "t.Item": [
                    {"number": 1, "json": "key", "omitempty": True, "kind": "string"},
                    {"number": 2, "json": "value", "kind": "int"},
                ],
            },
        }
    )
)  # fmt: skip

# What an empty Root gives: the zero values JSON writes, nothing omitempty drops.
EMPTY: dict[str, Any] = {
    "name": "", "enabled": False, "items": None, "created": None, "port": 0, "value": 0,
    "spec": {"value": 0}, "size": "0",
}  # fmt: skip


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def length(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def number(field: int, value: int) -> bytes:
    return varint(field << 3) + varint(value)


def text(field: int, value: str) -> bytes:
    return length(field, value.encode())


def thing(message: bytes, kind: str = "Thing") -> bytes:
    type_meta = text(1, "test/v1") + text(2, kind)
    return MAGIC + length(1, type_meta) + length(2, message)


def decode(message: bytes) -> dict[str, Any]:
    out = po.decode_object(thing(message), SCHEMA)
    assert out.pop("kind") == "Thing"
    assert out.pop("apiVersion") == "test/v1"
    return out


def timestamp(seconds: int, nanos: int = 0) -> bytes:
    return (number(1, seconds) if seconds else b"") + (number(2, nanos) if nanos else b"")


CASES = [
    pytest.param(b"", {}, id="empty"),
    pytest.param(text(1, "") + text(2, "") + number(3, 0), {},
                 id="zeros-travel-json-drops-omitempty"),
    pytest.param(text(1, "a") + text(2, "b") + number(3, 7), {"name": "a", "note": "b", "count": 7},
                 id="scalars"),
    pytest.param(number(3, -5), {"count": -5}, id="negative-int-ten-bytes"),
    pytest.param(number(4, 0), {"replicas": 0}, id="pointer-zero-kept"),
    pytest.param(number(5, 1), {"enabled": True}, id="bool"),
    pytest.param(text(6, "x") + text(6, "y"), {"tags": ["x", "y"]}, id="repeated-strings"),
    pytest.param(length(7, b"") + length(7, text(1, "k")),
                 {"items": [{"value": 0}, {"key": "k", "value": 0}]}, id="repeated-messages"),
    pytest.param(length(8, text(1, "b") + text(2, "2")) + length(8, text(1, "a")),
                 {"labels": {"b": "2", "a": ""}}, id="map-strings-value-zero"),
    pytest.param(length(9, text(1, "cpu") + length(2, text(1, "100m"))),
                 {"limits": {"cpu": "100m"}}, id="map-quantity"),
    pytest.param(length(10, timestamp(1764300000)), {"created": "2025-11-28T03:20:00Z"},
                 id="time-seconds"),
    pytest.param(length(10, timestamp(1764300000, 999_999_999)),
                 {"created": "2025-11-28T03:20:00Z"}, id="time-drops-nanos"),
    pytest.param(length(10, b""), {}, id="time-zero-null"),
    pytest.param(length(10, timestamp(-62135596800)), {"created": "0001-01-01T00:00:00Z"},
                 id="time-year-one-padded"),
    pytest.param(length(11, timestamp(1764300000, 123_456_789)),
                 {"seen": "2025-11-28T03:20:00.123456Z"}, id="microtime"),
    pytest.param(length(12, number(1, 0) + number(2, 8080)), {"port": 8080}, id="intorstring-int"),
    pytest.param(length(12, number(1, 1) + text(3, "http")), {"port": "http"},
                 id="intorstring-string"),
    pytest.param(length(13, text(1, '{"f:a":{}}')), {"fields": {"f:a": {}}}, id="fieldsv1"),
    pytest.param(length(14, text(1, "in") + number(2, 3)), {"key": "in", "value": 3},
                 id="inline-joins-parent"),
    pytest.param(length(15, b""), {"child": {"value": 0}}, id="pointer-struct-present"),
    pytest.param(length(16, number(2, 4)), {"spec": {"value": 4}}, id="struct"),
    pytest.param(length(17, timestamp(60)), {"when": "1970-01-01T00:01:00Z"}, id="omitzero-set"),
    pytest.param(length(17, b""), {}, id="omitzero-zero-dropped"),
    pytest.param(length(18, varint(1) + varint(300)) + number(18, 2), {"ids": [1, 300, 2]},
                 id="packed-and-unpacked-ints"),
    pytest.param(length(19, b"\x00\xff"), {"data": "AP8="}, id="bytes-base64"),
    pytest.param(length(20, text(1, "1Gi")), {"size": "1Gi"}, id="quantity"),
]  # fmt: skip


@pytest.mark.parametrize(("message", "changes"), CASES)
def test_json_rules(message: bytes, changes: dict[str, Any]) -> None:
    assert decode(message) == {**EMPTY, **changes}


def test_last_value_of_a_scalar_wins() -> None:
    assert decode(text(1, "a") + text(1, "b"))["name"] == "b"


FAILURES = [
    pytest.param(thing(text(99, "x")), "unknown field number 99", id="unknown-field"),
    pytest.param(thing(number(1, 3)), "unexpected wire type 0", id="wire-type-mismatch"),
    pytest.param(thing(text(1, "abc"))[:-1], "truncated", id="truncated"),
    pytest.param(thing(length(1, b"\xff\xfe")), "invalid UTF-8", id="bad-utf8"),
    pytest.param(thing(b"", kind="Other"), "no protobuf schema for kind 'Other'", id="no-schema"),
    pytest.param(b"{}", "no k8s", id="not-protobuf"),
    pytest.param(thing(length(13, text(1, "{"))), "FieldsV1 is not JSON", id="bad-fieldsv1"),
    pytest.param(thing(b"\x80"), "malformed varint", id="truncated-tag"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "message"), FAILURES)
def test_failures_name_the_problem(data: bytes, message: str) -> None:
    with pytest.raises(po.WireSchemaError, match=message):
        po.decode_object(data, SCHEMA)


def watch_event(kind: str, obj: bytes) -> bytes:
    return text(1, kind) + length(2, length(1, obj))


def test_watch_event() -> None:
    event = po.decode_watch_event(watch_event("MODIFIED", thing(text(1, "a"))), SCHEMA)
    assert event["type"] == "MODIFIED"
    assert event["object"]["name"] == "a"
    assert event["object"]["kind"] == "Thing"


def test_watch_error_event_is_a_status() -> None:
    status = text(2, "Failure") + text(3, "too old") + text(4, "Expired") + number(6, 410)
    type_meta = text(1, "v1") + text(2, "Status")
    obj = MAGIC + length(1, type_meta) + length(2, status)
    event = po.decode_watch_event(watch_event("ERROR", obj), SCHEMA)
    assert event == {
        "type": "ERROR",
        "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                   "message": "too old", "reason": "Expired", "code": 410},
    }  # fmt: skip


def test_shipped_schema_covers_pod() -> None:
    shipped = po.schema()
    assert shipped.source.startswith("k8s.io/api@")
    assert "Pod" in shipped.kinds


def test_schema_with_an_unknown_kind_is_refused() -> None:
    table = {"source": "x", "kinds": {}, "types": {"t.A": [{"number": 1, "json": "a",
                                                            "kind": "float"}]}}  # fmt: skip
    with pytest.raises(ValueError, match="field kind 'float' not supported"):
        po.load_schema(json.dumps(table))


SAMPLE = thing(
    text(1, "n") + number(3, 2) + length(7, text(1, "k")) + length(8, text(1, "a") + text(2, "b"))
    + length(10, timestamp(1764300000)) + length(12, number(1, 1) + text(3, "p"))
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_raise_only_wire_schema_errors(data: bytes) -> None:
    for candidate in (data, MAGIC + data, SAMPLE[: len(data) % len(SAMPLE)] + data):
        with contextlib.suppress(po.WireSchemaError):
            po.decode_object(candidate, SCHEMA)
        with contextlib.suppress(po.WireSchemaError):
            po.decode_watch_event(candidate, SCHEMA)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(SAMPLE) - 1), st.integers(0, 255))
def test_corrupted_sample_decodes_or_raises_wire_schema_error(at: int, byte: int) -> None:
    corrupted = SAMPLE[:at] + bytes([byte]) + SAMPLE[at + 1 :]
    try:
        out = po.decode_object(corrupted, SCHEMA)
    except po.WireSchemaError:
        return
    assert isinstance(out, dict)


# A pod as the pinned API server wrote it, both ways (GET with Accept: protobuf, and JSON), for
# the shipped schema without a cluster; the e2e test covers the whole schema live.
DATA = Path(__file__).parent / "data"
POD_PROTOBUF = (DATA / "pod.pb").read_bytes()


def test_shipped_schema_decodes_a_real_pod() -> None:
    assert po.decode_object(POD_PROTOBUF) == json.loads((DATA / "pod.json").read_text())


@settings(max_examples=500, deadline=None)
@given(st.integers(0, len(POD_PROTOBUF) - 1), st.integers(0, 255), st.booleans())
def test_corrupted_real_pod_decodes_or_raises_wire_schema_error(
    at: int, byte: int, truncate: bool
) -> None:
    corrupted = (
        POD_PROTOBUF[:at]
        if truncate
        else POD_PROTOBUF[:at] + bytes([byte]) + POD_PROTOBUF[at + 1 :]
    )
    try:
        out = po.decode_object(corrupted)
    except po.WireSchemaError:
        return
    assert out["kind"] == "Pod"
