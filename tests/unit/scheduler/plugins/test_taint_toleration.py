"""TaintToleration: toleration matching, the filter's reason, PreferNoSchedule scoring."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.taints import Taint, Toleration
from corral.scheduler.framework.types import NodeRecord
from corral.scheduler.plugins import taint_toleration
from corral.testing.builders import node, pod, pod_info, snapshot_of
from corral.testing.framework import FakeHandle
from support.hints import SKIP, Q, hint_node


@pytest.mark.parametrize(
    ("toleration", "taint", "want"),
    [
        pytest.param(
            Toleration("k", "Equal", "v", "NoSchedule"),
            Taint("k", "v", "NoSchedule"),
            True,
            id="equal",
        ),
        pytest.param(
            Toleration("k", "", "v"),
            Taint("k", "v", "NoExecute"),
            True,
            id="empty operator and effect",
        ),
        pytest.param(
            Toleration("k", "Equal", "w"), Taint("k", "v", "NoSchedule"), False, id="other value"
        ),
        pytest.param(
            Toleration("k", "Exists"), Taint("k", "anything", "NoSchedule"), True, id="exists"
        ),
        pytest.param(
            Toleration("", "Exists"), Taint("x", "y", "NoExecute"), True, id="empty key exists"
        ),
        pytest.param(
            Toleration("k", "Exists", effect="NoSchedule"),
            Taint("k", "", "NoExecute"),
            False,
            id="other effect",
        ),
        pytest.param(
            Toleration("k", "Bogus"), Taint("k", "", "NoSchedule"), False, id="unknown operator"
        ),
    ],
)
def test_tolerates(toleration: Toleration, taint: Taint, want: bool) -> None:
    assert toleration.tolerates(taint) is want


def _node(*taints: dict[str, str]) -> Any:
    return node("n", taints=taints)


@pytest.mark.parametrize(
    ("taints", "tolerations", "want"),
    [
        pytest.param((), (), None, id="no taints"),
        pytest.param(
            (
                {"key": "a", "value": "1", "effect": "PreferNoSchedule"},
                {"key": "b", "value": "2", "effect": "NoSchedule"},
            ),
            (),
            "node(s) had untolerated taint(s)",
            id="PreferNoSchedule is not filtered",
        ),
        pytest.param(
            (
                {"key": "a", "value": "", "effect": "NoExecute"},
                {"key": "b", "value": "2", "effect": "NoSchedule"},
            ),
            ({"key": "b", "operator": "Exists"},),
            "node(s) had untolerated taint(s)",
            id="first untolerated in node order",
        ),
        pytest.param(
            ({"key": "b", "value": "2", "effect": "NoSchedule"},),
            ({"key": "b", "operator": "Exists"},),
            None,
            id="tolerated",
        ),
    ],
)
def test_filter(taints: tuple[Any, ...], tolerations: tuple[Any, ...], want: str | None) -> None:
    snapshot = snapshot_of([_node(*taints)])
    plugin = taint_toleration.new(None, FakeHandle())
    got = plugin.filter(
        CycleState(), pod_from_json(pod("p", tolerations=tolerations)), snapshot.node_info(0)
    )
    assert got == (None if want is None else Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, want))


def test_score_counts_untolerated_prefer_no_schedule_and_normalizes_reversed() -> None:
    soft = [{"key": f"s{i}", "value": "", "effect": "PreferNoSchedule"} for i in range(2)]
    nodes = [node("a"), node("b", taints=soft[:1]), node("c", taints=soft)]
    snapshot = snapshot_of(nodes)
    plugin = taint_toleration.new(None, FakeHandle())
    # A NoSchedule toleration does not count for scoring; the PreferNoSchedule one does.
    p = pod_from_json(
        pod(
            "p",
            tolerations=(
                {"key": "s0", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "s1", "operator": "Exists", "effect": "PreferNoSchedule"},
            ),
        )
    )
    state = CycleState()
    plugin.pre_score(state, p, snapshot, snapshot.order)
    scores, _ = plugin.score_batch(state, p, snapshot, snapshot.order)
    assert scores.tolist() == [0, 1, 1]
    plugin.normalize_score(state, p, scores)
    assert scores.tolist() == [100, 0, 0]


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param([0, 1, 2], [100, 50, 0], id="scaled by the max, reversed"),
        pytest.param([0, 0], [100, 100], id="all zero"),
        pytest.param([3, 1, 2], [0, 67, 34], id="integer division before reversing"),
    ],
)
def test_normalize(raw: list[int], want: list[int]) -> None:
    scores = np.array(raw, dtype=np.int64)
    plugin = taint_toleration.new(None, FakeHandle())
    plugin.normalize_score(CycleState(), pod_from_json(pod("p")), scores)
    assert scores.tolist() == want


_TAINT = {"key": "foo", "value": "bar", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("tolerations", "old", "new", "want"),
    [
        pytest.param(
            [],
            None,
            hint_node(taints=[_TAINT]),
            SKIP,
            id="skip-queue-on-untoleratedtaint-node-added",
        ),
        pytest.param([], None, hint_node(), Q, id="corral: queue-on-node-added-without-taints"),
        pytest.param(
            [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}],
            None,
            hint_node(taints=[_TAINT]),
            Q,
            id="queue-on-toleratedtaint-node-added",
        ),
        pytest.param([], hint_node(taints=[_TAINT]), hint_node(), Q, id="queue-on-taint-change"),
        pytest.param(
            [], hint_node(), hint_node(labels={"a": "b"}), SKIP, id="skip-unrelated-change"
        ),
        pytest.param(
            [],
            hint_node(taints=[_TAINT]),
            hint_node(taints=[_TAINT, {"key": "x", "effect": "NoExecute"}]),
            SKIP,
            id="corral: skip-still-untolerated",
        ),
    ],
)
def test_taint_toleration_after_node_change(
    tolerations: list[dict[str, str]],
    old: NodeRecord | None,
    new: NodeRecord,
    want: QueueingHint,
) -> None:
    plugin = taint_toleration.new(None, FakeHandle())
    pod = pod_info("p", tolerations=tolerations)
    assert plugin.hint_node_change(pod, old, new) is want
