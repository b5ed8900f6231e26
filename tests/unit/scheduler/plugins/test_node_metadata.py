"""NodeMetadata (scheduler-plugins): transcribed from SP ``pkg/nodemetadata/node_metadata_test.go``
(TestCalculateScore, TestValidateArgs, TestNormalizeScore, TestNewDefaultsTimestampFormat) and
``apis/config/validation/validation_plugingargs_test.go`` (TestValidateNodeMetadataArgs); Go's
``time.Parse`` layouts and ``strconv.ParseFloat`` syntax where the plugin relies on them."""

from __future__ import annotations

import datetime
from typing import Any

import numpy as np
import pytest

from corral.scheduler.config.errors import ValidationError
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.types import NodeInfo, Resources
from corral.scheduler.plugins import node_metadata
from corral.scheduler.plugins.helper import golayout
from corral.testing.builders import pod_info
from corral.testing.framework import FakeHandle

NOW = 1_800_000_000.0
RFC3339 = "2006-01-02T15:04:05Z07:00"


def _ago(hours: float) -> str:
    t = datetime.datetime.fromtimestamp(NOW - hours * 3600, datetime.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _node(
    name: str, labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None
) -> NodeInfo:
    return NodeInfo(
        name,
        labels or {},
        (),
        False,
        Resources(),
        Resources(),
        0,
        0,
        0,
        annotations=annotations or {},
    )


def _plugin(key: str, source: str, kind: str, strategy: str, fmt: str | None = None) -> Any:
    args: dict[str, Any] = {
        "metadataKey": key,
        "metadataSource": source,
        "metadataType": kind,
        "scoringStrategy": strategy,
    }
    if fmt is not None:
        args["timestampFormat"] = fmt
    plugin = node_metadata.new(args, FakeHandle())
    plugin.clock = lambda: NOW
    return plugin


@pytest.mark.parametrize(
    ("plugin", "node", "check"),
    [
        pytest.param(
            _plugin("priority", "Label", "Number", "Highest"),
            _node("node1", {"priority": "100"}),
            lambda s: s == 100,
            id="numeric label - highest strategy",
        ),
        pytest.param(
            _plugin("cost", "Label", "Number", "Lowest"),
            _node("node1", {"cost": "50"}),
            lambda s: s == -50,
            id="numeric label - lowest strategy",
        ),
        pytest.param(
            _plugin("last-update", "Annotation", "Timestamp", "Newest", RFC3339),
            _node("node1", annotations={"last-update": _ago(1)}),
            lambda s: s == -3600,
            id="timestamp annotation - newest strategy",
        ),
        pytest.param(
            _plugin("nonexistent", "Label", "Number", "Highest"),
            _node("node1", {"other": "10"}),
            lambda s: s == node_metadata.INVALID_SCORE,
            id="missing metadata key",
        ),
        pytest.param(
            _plugin("priority", "Label", "Number", "Highest"),
            _node("node1", {"priority": "not-a-number"}),
            lambda s: s == node_metadata.INVALID_SCORE,
            id="invalid numeric value",
        ),
        pytest.param(
            _plugin("timestamp", "Annotation", "Timestamp", "Newest", RFC3339),
            _node("node1", annotations={"timestamp": "not-a-timestamp"}),
            lambda s: s == node_metadata.INVALID_SCORE,
            id="invalid timestamp format",
        ),
        # Corral: Go's float-to-int conversion on amd64 turns these into MinInt64 (invalid).
        pytest.param(
            _plugin("p", "Label", "Number", "Highest"),
            _node("n", {"p": "NaN"}),
            lambda s: s == node_metadata.INVALID_SCORE,
            id="NaN is invalid",
        ),
        pytest.param(
            _plugin("p", "Label", "Number", "Lowest"),
            _node("n", {"p": "1e30"}),
            lambda s: s == node_metadata.INVALID_SCORE,
            id="beyond int64 is invalid",
        ),
        pytest.param(
            _plugin("p", "Label", "Number", "Highest"),
            _node("n", {"p": "-7.9"}),
            lambda s: s == -7,
            id="truncated toward zero",
        ),
    ],
)
def test_node_metadata_raw_scores(plugin: Any, node: NodeInfo, check: Any) -> None:
    score, status = plugin.score(CycleState(), pod_info("p"), node)
    assert status is None
    assert check(score), score


@pytest.mark.parametrize(
    ("plugin", "nodes", "order", "all_equal"),
    [
        pytest.param(
            _plugin("priority", "Label", "Number", "Highest"),
            [
                _node("node-low", {"priority": "10"}),
                _node("node-high", {"priority": "100"}),
                _node("node-medium", {"priority": "50"}),
            ],
            ["node-high", "node-medium", "node-low"],
            None,
            id="numeric labels - highest strategy with three nodes",
        ),
        pytest.param(
            _plugin("cost", "Label", "Number", "Lowest"),
            [
                _node("node-expensive", {"cost": "100"}),
                _node("node-cheap", {"cost": "10"}),
                _node("node-medium", {"cost": "50"}),
            ],
            ["node-cheap", "node-medium", "node-expensive"],
            None,
            id="numeric labels - lowest strategy with three nodes",
        ),
        pytest.param(
            _plugin("last-update", "Annotation", "Timestamp", "Newest", RFC3339),
            [
                _node("node-old", annotations={"last-update": _ago(72)}),
                _node("node-newest", annotations={"last-update": _ago(1)}),
                _node("node-medium", annotations={"last-update": _ago(24)}),
            ],
            ["node-newest", "node-medium", "node-old"],
            None,
            id="timestamp annotations - newest strategy",
        ),
        pytest.param(
            _plugin("created-at", "Annotation", "Timestamp", "Oldest", RFC3339),
            [
                _node("node-newest", annotations={"created-at": _ago(1)}),
                _node("node-oldest", annotations={"created-at": _ago(72)}),
                _node("node-medium", annotations={"created-at": _ago(24)}),
            ],
            ["node-oldest", "node-medium", "node-newest"],
            None,
            id="timestamp annotations - oldest strategy",
        ),
        pytest.param(
            _plugin("tier", "Label", "Number", "Highest"),
            [
                _node("node-no-metadata-1"),
                _node("node-with-metadata", {"tier": "100"}),
                _node("node-no-metadata-2"),
            ],
            ["node-with-metadata", "node-no-metadata-1", "node-no-metadata-2"],
            None,
            id="highest strategy with one valid node and missing metadata nodes",
        ),
        pytest.param(
            _plugin("priority", "Label", "Number", "Highest"),
            [_node("node1", {"other": "value"}), _node("node2", {"other": "value"})],
            None,
            0,
            id="all nodes missing metadata",
        ),
        pytest.param(
            _plugin("priority", "Label", "Number", "Highest"),
            [
                _node("node1", {"priority": "50"}),
                _node("node2", {"priority": "50"}),
                _node("node3", {"priority": "50"}),
            ],
            None,
            1,
            id="all nodes with same value",
        ),
        pytest.param(
            _plugin("weight", "Annotation", "Number", "Lowest"),
            [
                _node("node-valid-high", annotations={"weight": "200"}),
                _node("node-valid-low", annotations={"weight": "100"}),
                _node("node-valid-medium", annotations={"weight": "150"}),
                _node("node-missing"),
            ],
            ["node-valid-low", "node-valid-medium", "node-valid-high", "node-missing"],
            None,
            id="mixed - some with metadata, some without",
        ),
    ],
)
def test_node_metadata_normalize_score(
    plugin: Any, nodes: list[NodeInfo], order: list[str] | None, all_equal: int | None
) -> None:
    state, p = CycleState(), pod_info("p")
    raw = [plugin.score(state, p, n)[0] for n in nodes]
    scores = np.array(raw, dtype=np.int64)
    assert plugin.normalize_score(state, p, scores) is None
    got = scores.tolist()
    if all_equal is not None:
        assert got == [all_equal] * len(nodes)
        return
    ranked = [n.name for _, n in sorted(zip(got, nodes, strict=True), key=lambda t: -t[0])]
    assert ranked == order
    valid = [s for r, s in zip(raw, got, strict=True) if r != node_metadata.INVALID_SCORE]
    invalid = [s for r, s in zip(raw, got, strict=True) if r == node_metadata.INVALID_SCORE]
    valid_raw = [r for r in raw if r != node_metadata.INVALID_SCORE]
    if min(valid_raw) != max(valid_raw):
        assert max(got) == 100
    assert min(valid) == 1  # MinNodeScore is reserved for the invalid nodes
    assert invalid == [0] * len(invalid)


_OK = {
    "metadataKey": "priority",
    "metadataSource": "Label",
    "metadataType": "Number",
    "scoringStrategy": "Highest",
}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(_OK, None, id="correct config with label source and numeric type"),
        pytest.param(
            {
                "metadataKey": "lastUpdate",
                "metadataSource": "Annotation",
                "metadataType": "Timestamp",
                "scoringStrategy": "Newest",
            },
            None,
            id="correct config with annotation source and timestamp type",
        ),
        pytest.param(
            {**_OK, "metadataKey": ""},
            'metadataKey: "": metadataKey cannot be empty',
            id="missing MetadataKey",
        ),
        pytest.param(
            {**_OK, "metadataSource": "InvalidSource"},
            'metadataSource: "InvalidSource": metadataSource must be either "Label" or '
            '"Annotation"',
            id="invalid MetadataSource",
        ),
        pytest.param(
            {**_OK, "metadataType": "InvalidType"},
            'metadataType: "InvalidType": metadataType must be either "Number" or "Timestamp"',
            id="invalid MetadataType",
        ),
        pytest.param(
            {**_OK, "scoringStrategy": "InvalidStrategy"},
            'scoringStrategy: "InvalidStrategy": scoringStrategy must be one of "Highest", '
            '"Lowest", "Newest", or "Oldest"',
            id="invalid ScoringStrategy",
        ),
        pytest.param(
            {**_OK, "scoringStrategy": "Newest"},
            'scoringStrategy: "Newest": scoringStrategy "Newest" and "Oldest" are only valid for '
            'metadataType "Timestamp"',
            id="numeric type with Newest strategy (mismatch)",
        ),
        pytest.param(
            {**_OK, "metadataType": "Timestamp"},
            'scoringStrategy: "Highest": scoringStrategy "Highest" and "Lowest" are only valid for '
            'metadataType "Number"',
            id="timestamp type with Highest strategy (mismatch)",
        ),
        pytest.param(
            {
                "metadataKey": "cost",
                "metadataSource": "Annotation",
                "metadataType": "Number",
                "scoringStrategy": "Lowest",
            },
            None,
            id="all valid combinations - Lowest with Number",
        ),
        pytest.param(
            {
                "metadataKey": "provisionedAt",
                "metadataSource": "Label",
                "metadataType": "Timestamp",
                "scoringStrategy": "Oldest",
            },
            None,
            id="all valid combinations - Oldest with Timestamp",
        ),
    ],
)
def test_node_metadata_args_validation(args: dict[str, Any], message: str | None) -> None:
    if message is None:
        node_metadata.new(args, FakeHandle())
        return
    with pytest.raises(ValidationError) as err:
        node_metadata.new(args, FakeHandle())
    assert message in [str(e) for e in err.value.errors]


def test_node_metadata_timestamp_format_defaults_to_rfc3339() -> None:
    plugin = node_metadata.new(
        {
            "metadataKey": "last-update",
            "metadataSource": "Annotation",
            "metadataType": "Timestamp",
            "scoringStrategy": "Newest",
        },
        FakeHandle(),
    )
    assert plugin.layout == RFC3339


@pytest.mark.parametrize(
    ("layout", "value", "want"),
    [
        pytest.param(RFC3339, "2026-01-02T03:04:05Z", "2026-01-02T03:04:05+00:00", id="RFC3339 Z"),
        pytest.param(
            RFC3339, "2026-01-02T03:04:05+02:00", "2026-01-02T01:04:05+00:00", id="RFC3339 offset"
        ),
        pytest.param(
            RFC3339,
            "2026-01-02T03:04:05.25Z",
            "2026-01-02T03:04:05.250000+00:00",
            id="fraction the layout does not name",
        ),
        pytest.param("2006-01-02", "2025-12-31", "2025-12-31T00:00:00+00:00", id="date only"),
        pytest.param(
            "2006-01-02 15:04:05", "2025-12-31 23:59:59", "2025-12-31T23:59:59+00:00", id="custom"
        ),
        pytest.param(
            "Mon Jan _2 15:04:05 2006",
            "Tue Feb  3 04:05:06 2026",
            "2026-02-03T04:05:06+00:00",
            id="ANSIC",
        ),
        pytest.param(
            "02 Jan 06 15:04 MST", "02 Jan 26 15:04 UTC", "2026-01-02T15:04:00+00:00", id="RFC822"
        ),
        pytest.param(
            "2006-01-02T15:04:05.000Z0700",
            "2026-01-02T03:04:05.123-0130",
            "2026-01-02T04:34:05.123000+00:00",
            id="millis and a numeric zone",
        ),
    ],
)
def test_go_layouts(layout: str, value: str, want: str) -> None:
    got = datetime.datetime.fromtimestamp(golayout.parse(layout, value), datetime.UTC)
    assert got.isoformat() == want


@pytest.mark.parametrize(
    ("layout", "value", "message"),
    [
        pytest.param("2006-01-02", "not-a-date", 'cannot parse "not-a-date" as "2006"', id="text"),
        pytest.param("2006-01-02", "2025-13-01", "month out of range", id="month"),
        pytest.param("2006-01-02", "2025-02-30", "day out of range", id="day"),
        pytest.param("2006-01-02", "2025-02-03 x", 'extra text: " x"', id="extra"),
        pytest.param(RFC3339, "2026-01-02T03:04:05", 'cannot parse "" as "Z07:00"', id="no zone"),
    ],
)
def test_go_layout_refusals(layout: str, value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        golayout.parse(layout, value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("100", 100.0, id="int"),
        pytest.param("-1.5e3", -1500.0, id="exponent"),
        pytest.param(".5", 0.5, id="leading dot"),
        pytest.param("0x1p-2", 0.25, id="hex"),
        pytest.param("+Inf", float("inf"), id="inf"),
        pytest.param("1_000", None, id="underscore without prefix"),
        pytest.param(" 1", None, id="space"),
        pytest.param("1e", None, id="dangling exponent"),
    ],
)
def test_go_parse_float(text: str, value: float | None) -> None:
    if value is None:
        with pytest.raises(ValueError, match="invalid syntax"):
            node_metadata.parse_go_float(text)
    else:
        assert node_metadata.parse_go_float(text) == value


_NUMBER = {"metadataSource": "Label", "metadataType": "Number"}
_STAMP = {"metadataSource": "Annotation", "metadataType": "Timestamp"}


@pytest.mark.parametrize(
    ("args", "fails"),
    [
        pytest.param(
            {**_NUMBER, "metadataKey": "priority", "scoringStrategy": "Highest"},
            False,
            id="valid numeric args",
        ),
        pytest.param(
            {
                **_STAMP,
                "metadataKey": "timestamp",
                "scoringStrategy": "Newest",
                "timestampFormat": RFC3339,
            },
            False,
            id="valid timestamp args",
        ),
        pytest.param({**_NUMBER, "scoringStrategy": "Highest"}, True, id="missing metadata key"),
        pytest.param(
            {
                **_NUMBER,
                "metadataKey": "key",
                "metadataSource": "Invalid",
                "scoringStrategy": "Highest",
            },
            True,
            id="invalid metadata source",
        ),
        pytest.param(
            {
                **_NUMBER,
                "metadataKey": "key",
                "metadataType": "Invalid",
                "scoringStrategy": "Highest",
            },
            True,
            id="invalid metadata type",
        ),
        pytest.param(
            {**_STAMP, "metadataKey": "timestamp", "scoringStrategy": "Newest"},
            False,
            id="timestamp without format uses default validation path",
        ),
        pytest.param(
            {**_NUMBER, "metadataKey": "priority", "scoringStrategy": "Newest"},
            True,
            id="numeric with timestamp strategy",
        ),
    ],
)
def test_node_metadata_validate_args(args: dict[str, Any], fails: bool) -> None:
    # SP node_metadata_test.go TestValidateArgs: whether New refuses the args at all.
    if fails:
        with pytest.raises(ValidationError):
            node_metadata.new(args, FakeHandle())
    else:
        node_metadata.new(args, FakeHandle())


# Go's own figures (go1.x, `((s-min)*99)/(max-min) + 1` on int64 and `int64(time.Since(t)
# .Seconds())`; the program is in /work/notes/sp.md): the wrap-around and the saturation that
# SP's NormalizeScore and Score inherit from Go's arithmetic.
@pytest.mark.parametrize(
    ("values", "want"),
    [
        pytest.param(["9e18", "-9e18"], [17, 1], id="range itself wraps"),
        pytest.param(["4e18", "-1e18"], [1, 1], id="product wraps"),
        pytest.param(["9.2e18", "0"], [1, 1], id="product wraps near MaxInt64"),
    ],
)
def test_node_metadata_normalize_uses_go_int64_arithmetic(
    values: list[str], want: list[int]
) -> None:
    plugin = _plugin("p", "Label", "Number", "Highest")
    state, p = CycleState(), pod_info("p")
    scores = np.array(
        [plugin.score(state, p, _node(f"n{i}", {"p": v}))[0] for i, v in enumerate(values)],
        dtype=np.int64,
    )
    plugin.normalize_score(state, p, scores)
    assert scores.tolist() == want


@pytest.mark.parametrize(
    ("stamp", "strategy", "want"),
    [
        pytest.param("0001-01-01T00:00:00Z", "Oldest", 9223372036, id="older than 292 years"),
        pytest.param("9999-01-01T00:00:00Z", "Oldest", -9223372036, id="far future"),
        pytest.param("0001-01-01T00:00:00Z", "Newest", -9223372036, id="newest negates"),
    ],
)
def test_node_metadata_age_saturates_like_go_duration(stamp: str, strategy: str, want: int) -> None:
    plugin = _plugin("t", "Annotation", "Timestamp", strategy)
    node = _node("n", annotations={"t": stamp})
    assert plugin.score(CycleState(), pod_info("p"), node)[0] == want
