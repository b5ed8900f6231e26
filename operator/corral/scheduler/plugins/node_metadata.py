"""NodeMetadata (Score, NormalizeScore) — scheduler-plugins' semantics (SP
``pkg/nodemetadata/node_metadata.go``, KEP 942).

Scores a node by a number or a timestamp in one of its labels or annotations (``metadataKey``,
``metadataSource``):

- ``Number``: the value read as Go's ``strconv.ParseFloat`` would, truncated to an integer;
  ``Highest`` keeps it, ``Lowest`` negates it.
- ``Timestamp``: the value read with the Go layout ``timestampFormat`` (RFC3339 by default);
  its age in whole seconds, negated for ``Newest``, kept for ``Oldest``.
- A node without the key, or whose value does not parse, gets the "invalid" raw score
  (MinInt64); so does a number that is not finite or beyond int64, as Go's float-to-int
  conversion gives MinInt64 there on amd64.

NormalizeScore keeps 0 for invalid nodes and spreads the valid ones over 1..100 (the lowest
valid raw score gets 1, the highest 100; all equal: 1); with no valid node every node gets 0.
Its arithmetic is Go's int64 arithmetic, wrapping included: raw scores so far apart that
``(score - min) * 99`` overflows give what SP gives (a score out of 0..100, which the framework
then refuses as SP's framework does). An age is a Go ``time.Duration``, saturated at about
292 years either way.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from typing import Final

from corral.scheduler.config import plugin_args
from corral.scheduler.config.args import NodeMetadataArgs
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, Handle, Scores
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names
from corral.scheduler.plugins.helper import golayout

NAME: Final = names.NODE_METADATA
EXTENSION_POINTS: Final = ("score",)
INVALID_SCORE: Final = -(2**63)

# strconv.ParseFloat's accepted syntax: decimal with optional exponent, hexadecimal with a
# binary exponent, inf/infinity/nan; an optional sign; underscores only between digits of a
# prefixed (0x) literal.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEX = re.compile(r"[+-]?0[xX](?:_?[0-9a-fA-F])*\.?(?:[0-9a-fA-F]_?)*[pP][+-]?[0-9]+")
_SPECIAL = re.compile(r"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)


def parse_go_float(text: str) -> float:
    """``strconv.ParseFloat(text, 64)``; raises ValueError on what Go refuses."""
    if _DECIMAL.fullmatch(text) or _SPECIAL.fullmatch(text):
        return float(text)
    if _HEX.fullmatch(text):
        return float.fromhex(text.replace("_", ""))
    raise ValueError(f'strconv.ParseFloat: parsing "{text}": invalid syntax')


def _wrap64(value: int) -> int:
    """``value`` as Go's int64 arithmetic leaves it (two's complement wrap-around)."""
    return (value + 2**63) % 2**64 - 2**63


def _go_div(numerator: int, denominator: int) -> int:
    """Go's int64 ``/``: truncated toward zero."""
    q = abs(numerator) // abs(denominator)
    return q if (numerator < 0) == (denominator < 0) else -q


def _age_seconds(now: float, then: float) -> int:
    """``int64(time.Since(then).Seconds())``: the Duration saturates at ±(2**63 - 1) ns."""
    nanos = max(-(2**63), min(2**63 - 1, round((now - then) * 1e9)))
    return int(nanos / 1e9)


def _to_int64(value: float) -> int:
    """Go's ``int64(f)`` on amd64: truncation, MinInt64 for NaN, ±Inf and out of range."""
    if not math.isfinite(value) or not -(2.0**63) <= value < 2.0**63:
        return INVALID_SCORE
    return int(value)


class NodeMetadata:
    name: str = NAME

    def __init__(self, args: NodeMetadataArgs, *, clock: Callable[[], float] = time.time) -> None:
        self.key = args.metadata_key or ""
        self.from_labels = args.metadata_source == "Label"
        self.timestamp = args.metadata_type == "Timestamp"
        self.strategy = args.scoring_strategy
        self.layout = args.timestamp_format or ""
        self.clock = clock

    def raw_score(self, node: NodeInfo) -> int:
        """The node's raw score, :data:`INVALID_SCORE` when its metadata is missing or bad."""
        source = node.labels if self.from_labels else node.annotations
        value = source.get(self.key)
        if value is None:
            return INVALID_SCORE
        try:
            if self.timestamp:
                age = _age_seconds(self.clock(), golayout.parse(self.layout, value))
                return -age if self.strategy == "Newest" else age
            score = _to_int64(parse_go_float(value))
        except ValueError:
            return INVALID_SCORE
        if score == INVALID_SCORE:
            return score
        return -score if self.strategy == "Lowest" else score

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        return self.raw_score(node), None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: Scores) -> Status | None:
        values = [int(v) for v in scores.tolist()]
        valid = [v for v in values if v != INVALID_SCORE]
        if not valid:
            scores[:] = MIN_NODE_SCORE
            return None
        low, high = min(valid), max(valid)
        bottom = MIN_NODE_SCORE + 1  # MIN_NODE_SCORE is kept for invalid nodes
        out = []
        for v in values:
            if v == INVALID_SCORE:
                out.append(MIN_NODE_SCORE)
            elif high == low:
                out.append(bottom)
            else:
                spread = _wrap64(_wrap64(v - low) * (MAX_NODE_SCORE - bottom))
                out.append(_wrap64(_go_div(spread, _wrap64(high - low)) + bottom))
        scores[:] = out
        return None


def new(args: object, handle: Handle) -> NodeMetadata:
    return NodeMetadata(plugin_args(NAME, args))
