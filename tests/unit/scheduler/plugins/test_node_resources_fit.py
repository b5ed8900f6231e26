"""NodeResourcesFit: upstream's shortage reasons, status codes, scoring arithmetic and args."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cluster_events import QueueingHint
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.status import Code, Status
from corral.scheduler.framework.types import NodeRecord, PodInfo
from corral.scheduler.plugins import node_resources_fit
from corral.scheduler.plugins.helper import resource_scoring
from corral.testing.builders import container, node, pod, pod_info, snapshot_of
from corral.testing.framework import FakeHandle
from support.hints import SKIP, Q, hint_node

UUR = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def _filter(
    node_json: Any, pod_json: Any, running: tuple[Any, ...] = (), args: Any = None
) -> Status | None:
    snapshot = snapshot_of([node_json], running)
    plugin = node_resources_fit.new(args, FakeHandle())
    return plugin.filter(CycleState(), pod_from_json(pod_json), snapshot.node_info(0))


@pytest.mark.parametrize(
    ("node_json", "pod_json", "running", "want"),
    [
        pytest.param(node("n", cpu="2"), pod("p", cpu="1"), (), None, id="fits"),
        pytest.param(
            node("n", cpu="1"),
            pod("p", cpu="2"),
            (),
            Status(UUR, ("Insufficient cpu",)),
            id="more than the whole node is unresolvable",
        ),
        pytest.param(
            node("n", cpu="2"),
            pod("p", cpu="1"),
            (pod("r", cpu="1500m", node_name="n"),),
            Status(Code.UNSCHEDULABLE, ("Insufficient cpu",)),
            id="not enough left",
        ),
        pytest.param(
            node("n", cpu="1", memory="1Gi"),
            pod("p", cpu="2", memory="2Gi"),
            (),
            Status(UUR, ("Insufficient cpu", "Insufficient memory")),
            id="every shortage is kept",
        ),
        pytest.param(
            node("n", pods="1"),
            pod("p"),
            (pod("r", node_name="n"),),
            Status(Code.UNSCHEDULABLE, ("Too many pods",)),
            id="pod count applies to best-effort pods",
        ),
        pytest.param(
            node("n", cpu="1"),
            pod("p"),
            (pod("r", cpu="1", node_name="n"),),
            None,
            id="best-effort pod ignores cpu",
        ),
        pytest.param(
            node("n"),
            pod("p", containers=[container(**{"example.com/gpu": "1"})]),
            (),
            Status(UUR, ("Insufficient example.com/gpu",)),
            id="scalar resource the node lacks",
        ),
        pytest.param(
            node("n", cpu="2"),
            pod("p", cpu="1", init_containers=[container("init", cpu="3")]),
            (),
            Status(UUR, ("Insufficient cpu",)),
            id="init container needs more than the app",
        ),
        pytest.param(
            node("n", cpu="2"),
            pod(
                "p",
                cpu="1",
                init_containers=[
                    {**container("side", cpu="600m"), "restartPolicy": "Always"},
                    container("init", cpu="1"),
                ],
            ),
            (),
            None,
            id="sidecar adds to the app (1.6 <= 2)",
        ),
        pytest.param(
            node("n", cpu="2"),
            pod(
                "p",
                cpu="1500m",
                init_containers=[{**container("side", cpu="600m"), "restartPolicy": "Always"}],
            ),
            (),
            Status(UUR, ("Insufficient cpu",)),
            id="sidecar plus app exceeds (2.1 > 2)",
        ),
        pytest.param(
            node("n", cpu="2"),
            pod("p", cpu="1800m", overhead={"cpu": "250m"}),
            (),
            Status(UUR, ("Insufficient cpu",)),
            id="pod overhead counts",
        ),
    ],
)
def test_filter(
    node_json: Any, pod_json: Any, running: tuple[Any, ...], want: Status | None
) -> None:
    assert _filter(node_json, pod_json, running) == want


@pytest.mark.parametrize(
    "args",
    [
        pytest.param({"ignoredResources": ["example.com/gpu"]}, id="by name"),
        pytest.param({"ignoredResourceGroups": ["example.com"]}, id="by group"),
    ],
)
def test_ignored_extended_resources(args: dict[str, Any]) -> None:
    gpu_pod = pod("p", containers=[container(**{"example.com/gpu": "1"})])
    assert _filter(node("n"), gpu_pod, args=args) is None


def test_filter_message_counts_reasons_of_every_node() -> None:
    snapshot = snapshot_of([node("a", cpu="1"), node("b", cpu="1", memory="1Gi")])
    plugin = node_resources_fit.new(None, FakeHandle())
    verdict = plugin.filter_batch(
        CycleState(), pod_from_json(pod("p", cpu="2", memory="2Gi")), snapshot
    )
    assert not verdict.passed[:2].any()
    assert verdict.reasons is not None
    assert verdict.describe(int(verdict.reasons[0])).reasons == ("Insufficient cpu",)
    assert verdict.describe(int(verdict.reasons[1])).reasons == (
        "Insufficient cpu",
        "Insufficient memory",
    )


# Scores from upstream's least/most_allocated_test.go and requested_to_capacity_ratio_test.go:
# pod 3000m / 5000 bytes on nodes of 4000m/10000 and 6000m/10000.
TWO_NODES = [node("n1", cpu="4", memory="10000"), node("n2", cpu="6", memory="10000")]
POD_3CPU = pod("p", cpu="3", memory="5000")


@pytest.mark.parametrize(
    ("args", "want"),
    [
        pytest.param(None, [37, 50], id="LeastAllocated"),
        pytest.param({"scoringStrategy": {"type": "MostAllocated"}}, [62, 50], id="MostAllocated"),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
                    },
                }
            },
            [38, 50],  # round(37.5) = 38, as Go's math.Round
            id="RequestedToCapacityRatio",
        ),
    ],
)
def test_score(args: Any, want: list[int]) -> None:
    snapshot = snapshot_of(TWO_NODES)
    plugin = node_resources_fit.new(args, FakeHandle())
    state, p = CycleState(), pod_from_json(POD_3CPU)
    plugin.pre_score(state, p, snapshot, snapshot.order)
    scores, _ = plugin.score_batch(state, p, snapshot, snapshot.order)
    assert scores.tolist() == want


def test_score_uses_non_zero_defaults_for_missing_requests() -> None:
    # 100m of 1000m and 200Mi of 1000Mi are requested: (90 + 80) / 2 = 85.
    snapshot = snapshot_of([node("n", cpu="1", memory="1000Mi")])
    plugin = node_resources_fit.new(None, FakeHandle())
    state, p = CycleState(), pod_from_json(pod("p"))
    plugin.pre_score(state, p, snapshot, snapshot.order)
    assert plugin.score(state, p, snapshot.node_info(0)) == (85, None)


@pytest.mark.parametrize(
    ("shape", "utilization", "want"),
    [
        pytest.param([(0, 100), (30, 0)], 7, 77, id="truncates toward zero like Go (not 76)"),
        pytest.param([(0, 0), (100, 100)], 50, 50, id="linear"),
        pytest.param([(10, 20), (50, 60)], 5, 20, id="below the first point"),
        pytest.param([(10, 20), (50, 60)], 80, 60, id="beyond the last point"),
    ],
)
def test_broken_linear(shape: list[tuple[int, int]], utilization: int, want: int) -> None:
    assert resource_scoring.broken_linear(shape, utilization) == want
    vec = resource_scoring.broken_linear_vec(shape, np.array([utilization], dtype=np.int64))
    assert vec.tolist() == [want]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        # The messages of corral.scheduler.config, which checks every plugin's args once.
        pytest.param(
            {"scoringStrategy": {"type": "Bogus"}},
            'scoringStrategy.type: unsupported value "Bogus"',
            id="strategy type",
        ),
        pytest.param(
            # Upstream defaults the type only when scoringStrategy is absent.
            {"scoringStrategy": {"resources": [{"name": "cpu"}]}},
            'scoringStrategy.type: unsupported value "None"',
            id="strategy without type",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "cpu", "weight": 101}],
                }
            },
            "scoringStrategy.resources[0].weight: 101: resource weight of cpu not in valid range",
            id="resource weight",
        ),
        pytest.param(
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
            "scoringStrategy.requestedToCapacityRatio: must be specified",
            id="no shape",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 50, "score": 1}, {"utilization": 40, "score": 2}]
                    },
                }
            },
            "shape[1].utilization: 40: values must be sorted in increasing order",
            id="shape order",
        ),
        pytest.param(
            {"ignoredResourceGroups": ["a/b"]},
            "ignoredResourceGroups[0]: \"a/b\": resource group name can't contain '/'",
            id="group with slash",
        ),
    ],
)
def test_invalid_args(args: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError, match=re.escape(fragment)):
        node_resources_fit.new(args, FakeHandle())


EXT_A, EXT_B = "example.com/aaa", "example.com/bbb"


def _requesting(**requests: str) -> PodInfo:
    return pod_info("p", containers=[container(**requests)])


def _fit() -> node_resources_fit.NodeResourcesFit:
    return node_resources_fit.new(None, FakeHandle())


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(
            pod_info("d", cpu="1", node_name="fake"), Q, id="backoff-on-deleted-assigned-pod"
        ),
        pytest.param(pod_info("d"), SKIP, id="skip-queue-on-unscheduled-pod-deleted"),
    ],
)
def test_fit_after_assigned_pod_delete(deleted: PodInfo, want: QueueingHint) -> None:
    assert _fit().hint_assigned_pod_delete(pod_info("p", cpu="1"), deleted, None) is want


def test_fit_after_nominated_pod_delete() -> None:
    raw = dict(pod_info("d", cpu="2").raw)
    raw["status"] = {"nominatedNodeName": "fake"}
    deleted = pod_from_json(raw)
    assert _fit().hint_assigned_pod_delete(pod_info("p", cpu="1"), deleted, None) is Q


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            pod_info("p", cpu="1"),
            pod_info("o", cpu="2"),
            pod_info("o", cpu="1"),
            SKIP,
            id="skip-queue-on-unscheduled-pod",
        ),
        pytest.param(
            pod_info("p", cpu="1"),
            pod_info("o", memory="2", node_name="fake"),
            pod_info("o", memory="1", node_name="fake"),
            SKIP,
            id="skip-queue-on-non-relevant-resource-scale-down",
        ),
        pytest.param(
            pod_info("p", pod_requests={"cpu": "1"}),
            pod_info("o", pod_requests={"memory": "2"}, node_name="fake"),
            pod_info("o", pod_requests={"memory": "1"}, node_name="fake"),
            SKIP,
            id="skip-queue-on-non-relevant-pod-level-resource-scale-down",
        ),
        pytest.param(
            pod_info("p", cpu="1"),
            pod_info("o", cpu="2", node_name="fake"),
            pod_info("o", cpu="1", node_name="fake"),
            Q,
            id="queue-on-relevant-resource-scale-down",
        ),
        pytest.param(
            pod_info("p", pod_requests={"cpu": "1"}),
            pod_info("o", pod_requests={"cpu": "2"}, node_name="fake"),
            pod_info("o", pod_requests={"cpu": "1"}, node_name="fake"),
            Q,
            id="queue-on-relevant-pod-level-resource-scale-down",
        ),
    ],
)
def test_fit_after_assigned_pod_scale_down(
    pod: PodInfo, old: PodInfo, new: PodInfo, want: QueueingHint
) -> None:
    assert _fit().hint_assigned_pod_scale_down(pod, old, new) is want


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            _requesting(memory="2"),
            None,
            hint_node({"memory": "1"}),
            SKIP,
            id="skip-queue-on-node-add-without-sufficient-resources",
        ),
        pytest.param(
            _requesting(**{EXT_A: "1"}),
            None,
            hint_node({EXT_B: "1"}),
            SKIP,
            id="skip-queue-on-node-add-without-required-resource-type",
        ),
        pytest.param(
            _requesting(memory="2", **{EXT_A: "1"}),
            None,
            hint_node({"memory": "4", EXT_A: "2"}),
            Q,
            id="queue-on-node-add-with-sufficient-resources",
        ),
        pytest.param(
            _requesting(memory="2", **{EXT_A: "1"}),
            hint_node({"memory": "2", EXT_A: "2"}),
            hint_node({"memory": "2", EXT_A: "1", EXT_B: "2"}),
            SKIP,
            id="skip-queue-on-node-unrelated-changes",
        ),
        pytest.param(
            _requesting(memory="2", **{EXT_A: "1"}),
            hint_node({"memory": "2", EXT_A: "1"}),
            hint_node({"memory": "2", EXT_A: "2"}),
            Q,
            id="queue-on-pod-requested-resources-increase",
        ),
        pytest.param(
            _requesting(memory="2", **{EXT_A: "1"}),
            hint_node({"memory": "4", EXT_A: "2"}),
            hint_node({"memory": "1", EXT_A: "2"}),
            SKIP,
            id="skip-queue-on-node-changes-from-suitable-to-unsuitable",
        ),
        pytest.param(
            _requesting(memory="2", **{EXT_A: "1"}),
            hint_node({"memory": "1", EXT_A: "2"}),
            hint_node({"memory": "4", EXT_A: "2"}),
            Q,
            id="queue-on-node-changes-from-unsuitable-to-suitable",
        ),
        pytest.param(
            _requesting(),
            hint_node({"memory": "1"}, labels={"a": "b"}),
            hint_node({"memory": "1"}),
            SKIP,
            id="corral: a label change adds no capacity",
        ),
    ],
)
def test_fit_after_node_change(
    pod: PodInfo, old: NodeRecord | None, new: NodeRecord, want: QueueingHint
) -> None:
    assert _fit().hint_node_change(pod, old, new) is want


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(None, "not-a-node", id="backoff-wrong-new-object"),
        pytest.param("not-a-node", hint_node(), id="backoff-wrong-old-object"),
    ],
)
def test_fit_refuses_objects_that_are_not_nodes(old: object, new: object) -> None:
    with pytest.raises(TypeError, match="expected NodeRecord, got str"):
        _fit().hint_node_change(pod_info("p"), old, new)
