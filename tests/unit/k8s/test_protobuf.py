"""The protobuf codec's wire format, fallbacks and Status reading (the API server's round trip is
in ``tests/e2e/test_protobuf_writes.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from corral.k8s import protobuf
from corral.k8s.client import api_error

BINDING = {
    "apiVersion": "v1",
    "kind": "Binding",
    "metadata": {"name": "p", "namespace": "ns", "uid": "u1"},
    "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
}


def _envelope(api_version: bytes, kind: bytes, raw: bytes) -> bytes:
    type_meta = b"\x0a" + bytes([len(api_version)]) + api_version
    type_meta += b"\x12" + bytes([len(kind)]) + kind
    return (
        protobuf.MAGIC
        + b"\x0a" + bytes([len(type_meta)]) + type_meta
        + b"\x12" + bytes([len(raw)]) + raw
    )  # fmt: skip


def test_binding_bytes() -> None:
    # Hand-assembled from generated.proto: Binding{metadata=1{name=1, namespace=3, uid=5},
    # target=2{kind=1, name=3, apiVersion=5}}; tags are (number << 3 | 2).
    meta = b"\x0a\x01p" + b"\x1a\x02ns" + b"\x2a\x02u1"
    target = b"\x0a\x04Node" + b"\x1a\x02n1" + b"\x2a\x02v1"
    raw = b"\x0a" + bytes([len(meta)]) + meta + b"\x12" + bytes([len(target)]) + target
    assert protobuf.encode(BINDING) == _envelope(b"v1", b"Binding", raw)


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        pytest.param(0, b"\x00", id="zero"),
        pytest.param(1, b"\x01", id="one byte"),
        pytest.param(300, b"\xac\x02", id="two bytes (the protobuf docs' example)"),
        pytest.param(-1, b"\xff" * 9 + b"\x01", id="negative: ten bytes"),
    ],
)
def test_int_field_varints(value: int, wire: bytes) -> None:
    out = bytearray()
    protobuf._encode_field(out, protobuf.Field(1, "int"), value)
    assert bytes(out) == b"\x08" + wire


@pytest.mark.parametrize(
    ("text", "wire"),
    [
        pytest.param("1970-01-01T00:00:01Z", b"\x08\x01", id="whole seconds"),
        pytest.param("1970-01-01T00:00:00.000002Z", b"\x10\xd0\x0f", id="microseconds as nanos"),
        pytest.param("2026-11-25T04:18:48.123456Z",
                     b"\x08" + bytes.fromhex("a8c399d806") + b"\x10" + bytes.fromhex("8094ef3a"),
                     id="a MicroTime as the engine writes it"),
        pytest.param("2026-11-25T05:18:48.123456+01:00",
                     b"\x08" + bytes.fromhex("a8c399d806") + b"\x10" + bytes.fromhex("8094ef3a"),
                     id="an offset is converted"),
    ],
)  # fmt: skip
def test_times(text: str, wire: bytes) -> None:
    assert protobuf._time(text) == wire


def test_map_entries_are_sorted_by_key() -> None:
    out = bytearray()
    protobuf._encode_field(out, protobuf.Field(11, "map"), {"b": "2", "a": "1"})
    entry = b"\x0a\x01a\x12\x011", b"\x0a\x01b\x12\x012"
    assert bytes(out) == b"".join(b"\x5a\x06" + e for e in entry)


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param({**BINDING, "kind": "Pod"}, id="a kind without a schema"),
        pytest.param({**BINDING, "apiVersion": "v2"}, id="another version"),
        pytest.param({**BINDING, "status": {}}, id="a top-level field the schema lacks"),
        pytest.param({**BINDING, "metadata": {"name": "p", "ownerReferences": []}},
                     id="a nested field the schema lacks"),
        pytest.param({**BINDING, "metadata": {"name": 3}}, id="a number where a string goes"),
        pytest.param({**BINDING, "metadata": {"labels": {"a": 1}}}, id="a map of non-strings"),
        pytest.param({**BINDING, "target": "n1"}, id="a string where a message goes"),
        pytest.param({"apiVersion": "events.k8s.io/v1", "kind": "Event", "eventTime": "soon"},
                     id="a time that does not parse"),
        pytest.param({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                      "eventTime": "2026-11-25T04:18:48"}, id="a time without a zone"),
        pytest.param({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                      "series": {"count": True}}, id="a bool where an int goes"),
    ],
)  # fmt: skip
def test_what_the_schema_cannot_carry_goes_as_json(obj: dict[str, Any]) -> None:
    assert protobuf.encode(obj) is None


def test_absent_and_null_fields_are_omitted() -> None:
    assert protobuf.encode({**BINDING, "target": None}) == protobuf.encode(
        {k: v for k, v in BINDING.items() if k != "target"}
    )


def _status(fields: bytes) -> bytes:
    return _envelope(b"v1", b"Status", fields)


def _ld(number: int, data: bytes) -> bytes:
    """A short length-delimited field, assembled by hand."""
    assert len(data) < 128
    return bytes([number << 3 | 2, len(data)]) + data


NOT_FOUND = (
    _ld(2, b"Failure") + _ld(3, b'pods "p" not found') + _ld(4, b"NotFound")
    + _ld(5, _ld(1, b"p") + _ld(3, b"pods")) + b"\x30\x94\x03"  # code 404 (field 6, varint)
)  # fmt: skip


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(_status(NOT_FOUND),
                     {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                      "message": 'pods "p" not found', "reason": "NotFound", "code": 404,
                      "details": {"name": "p", "kind": "pods"}}, id="NotFound"),
        pytest.param(_status(b"\x22\x07Invalid\x2a\x0d\x22\x0b\x0a\x01r\x1a\x06f.name"),
                     {"kind": "Status", "apiVersion": "v1", "reason": "Invalid",
                      "details": {"causes": [{"reason": "r", "field": "f.name"}]}},
                     id="causes"),
        pytest.param(_status(b"\x2a\x02\x28\x05" + b"\x31" + b"\x00" * 8),
                     {"kind": "Status", "apiVersion": "v1",
                      "details": {"retryAfterSeconds": 5}}, id="a fixed64 field is skipped"),
        pytest.param(_status(_ld(2, b"") + b"\x30\x00" + _ld(5, _ld(1, b""))),
                     {"kind": "Status", "apiVersion": "v1", "details": {}},
                     id="empty strings and zeros are omitted, as in JSON"),
        pytest.param(_envelope(b"v1", b"Pod", b""), None, id="not a Status"),
        pytest.param(b'{"kind":"Status"}', None, id="JSON"),
        pytest.param(_status(b"\x1a\x10short"), None, id="a length past the end"),
        pytest.param(_status(b"\x30\xff"), None, id="a varint cut short"),
        pytest.param(_status(b"\x1b"), None, id="an unknown wire type"),
        pytest.param(_status(b"\x1a\x02\xff\xfe"), None, id="not UTF-8"),
        pytest.param(protobuf.MAGIC + b"\x12\x03abc", None, id="no type meta"),
    ],
)  # fmt: skip
def test_decode_status(data: bytes, expected: dict[str, Any] | None) -> None:
    assert protobuf.decode_status(data) == expected


def test_api_error_reads_a_protobuf_status() -> None:
    err = api_error(404, "Not Found", _status(NOT_FOUND))
    assert (err.status, err.reason, err.message) == (404, "NotFound", 'pods "p" not found')
    assert err.body["details"] == {"name": "p", "kind": "pods"}


@given(st.binary(max_size=200))
def test_decode_status_never_raises(data: bytes) -> None:
    for candidate in (data, protobuf.MAGIC + data):
        status = protobuf.decode_status(candidate)
        assert status is None or status["kind"] == "Status"


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                    max_size=4),
        max_leaves=12,
    )
)  # fmt: skip
def test_encode_never_raises(value: Any) -> None:
    for kind in (("v1", "Binding"), ("events.k8s.io/v1", "Event")):
        obj = {"apiVersion": kind[0], "kind": kind[1]}
        if isinstance(value, dict):
            obj.update(value)
        else:
            obj["metadata"] = value
        result = protobuf.encode(obj)
        assert result is None or result.startswith(protobuf.MAGIC)
