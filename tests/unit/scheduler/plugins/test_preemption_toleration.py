"""PreemptionToleration (scheduler-plugins): transcribed from SP
``pkg/preemptiontoleration/preemption_toleration_policy_test.go``
(TestParsePreemptionTolerationPolicyToleration), ``preemption_toleration_test.go``
(TestExemptedFromPreemption*) and, through the real runtime, rows of
``test/integration/preemption_toleration_test.go``."""

from __future__ import annotations

import dataclasses
import datetime
import random
import re
import time
from collections.abc import Sequence
from typing import Any

import pytest

from corral.scheduler.backend.objects import ObjectStore
from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.config.errors import ValidationError
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.framework.runtime.schedule_one import scheduling_cycle
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.status import Code, Status, StatusError
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import preemption_toleration as pt
from corral.scheduler.plugins.registry import default_profile, in_tree_registry
from corral.testing.builders import build_cache, node, pod
from corral.testing.framework import FakeHandle

CLASS = "dummy"
NOW = 1_800_000_000.0
MIN_KEY, SECONDS_KEY = pt.MINIMUM_PREEMPTABLE_PRIORITY, pt.TOLERATION_SECONDS


def priority_class(value: int, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": CLASS}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": meta,
            "value": value}  # fmt: skip


def _stamp(at: float) -> str:
    return datetime.datetime.fromtimestamp(at, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def victim(
    priority: int, scheduled: float | None = None, class_name: str = CLASS, **kw: Any
) -> dict[str, Any]:
    obj = pod("victim", priority=priority, **kw)
    if class_name:
        obj["spec"]["priorityClassName"] = class_name
    if scheduled is not None:
        obj["status"] = {"conditions": [{"type": "PodScheduled", "status": "True",
                                         "lastTransitionTime": _stamp(scheduled)}]}  # fmt: skip
    return obj


def preemptor(priority: int, policy: str = "PreemptLowerPriority", **kw: Any) -> dict[str, Any]:
    obj = pod("p", priority=priority, **kw)
    obj["spec"]["preemptionPolicy"] = policy
    return obj


@pytest.mark.parametrize(
    ("pc", "want", "error"),
    [
        pytest.param(
            priority_class(1),
            (2, 0),
            None,
            id="PriorityClass with default values both on MinimumPreemptablePriority and "
            "TolerationSeconds",
        ),
        pytest.param(
            priority_class(1, {MIN_KEY: "100", SECONDS_KEY: "10"}),
            (100, 10),
            None,
            id="PriorityClass with both values does return PriorityTolerationPolicy",
        ),
        pytest.param(
            priority_class(1, {MIN_KEY: "a"}),
            None,
            'strconv.ParseInt: parsing "a": invalid syntax',
            id="PriorityClass with unparsable MinimumPreemptablePriority does raise error",
        ),
        pytest.param(
            priority_class(1, {SECONDS_KEY: "a"}),
            None,
            'strconv.ParseInt: parsing "a": invalid syntax',
            id="PriorityClass with unparsable TolerationSeconds does raise error",
        ),
        pytest.param(
            priority_class(1, {MIN_KEY: "100", SECONDS_KEY: "-1"}),
            (100, -1),
            None,
            id="PriorityClass with negative TolerationSeconds does not raise error (But this will "
            "be able to tolerate forever)",
        ),
        # Corral: Go's ParseInt(s, 10, 32) refusals Python's int() would accept or widen.
        pytest.param(
            priority_class(1, {MIN_KEY: "2147483648"}),
            None,
            'strconv.ParseInt: parsing "2147483648": value out of range',
            id="minimum beyond int32",
        ),
        pytest.param(
            priority_class(1, {SECONDS_KEY: "1_0"}),
            None,
            'strconv.ParseInt: parsing "1_0": invalid syntax',
            id="underscores",
        ),
        pytest.param(
            priority_class(1, {SECONDS_KEY: " 1"}),
            None,
            'strconv.ParseInt: parsing " 1": invalid syntax',
            id="space",
        ),
    ],
)
def test_parse_policy(pc: dict[str, Any], want: tuple[int, int] | None, error: str | None) -> None:
    if error is None:
        assert pt.parse_policy(pc) == want
    else:
        with pytest.raises(ValueError, match=f"^{re.escape(error)}$"):
            pt.parse_policy(pc)


@pytest.mark.parametrize(
    ("pc", "candidate", "incoming", "want"),
    [
        # TestExemptedFromPreemptionWithUnparsalbePolicy (SP gives both rows one name).
        pytest.param(
            priority_class(1, {MIN_KEY: "a"}),
            victim(3),
            preemptor(2),
            False,
            id="when MinimumPreemptablePriority not parsable, it should return false",
        ),
        pytest.param(
            priority_class(1, {MIN_KEY: "10", SECONDS_KEY: "a"}),
            victim(3),
            preemptor(2),
            False,
            id="when MinimumPreemptablePriority not parsable, it should return false (2)",
        ),
        # TestExemptedFromPreemptionWithoutPolicy
        pytest.param(
            priority_class(1),
            victim(1),
            preemptor(2, "Never"),
            True,
            id="when preemptor's PreemptionPolicy is PreemptNever, it should return true",
        ),
        pytest.param(
            priority_class(1),
            victim(1),
            preemptor(2),
            False,
            id="when preemptor's PreemptionPolicy is PreemptLowerPriority, it should return false "
            "when victimCandidate's priority is lower than preemptor's one",
        ),
        pytest.param(
            priority_class(3),
            victim(3),
            preemptor(2),
            True,
            id="when preemptor's PreemptionPolicy is PreemptLowerPriority, it should return true "
            "when victimCandidate's priority is not lower than preemptor's one",
        ),
        # ...WhenPreemptorPriorityHigherOrEqualMinimumPreemptablePriority
        pytest.param(
            priority_class(100, {MIN_KEY: "200"}),
            victim(100, scheduled=NOW),
            preemptor(201),
            False,
            id="when preemptor's priority is higher than MinimumPreemptablePriorityClass, it "
            "should return false",
        ),
        pytest.param(
            priority_class(100, {MIN_KEY: "200"}),
            victim(100, scheduled=NOW),
            preemptor(200),
            False,
            id="when preemptor's priority is equal to MinimumPreemptablePriorityClass, it should "
            "return false",
        ),
        # ...WhenPreemptorPriorityLowerThanMinimumPreemptablePriority
        pytest.param(
            priority_class(100, {MIN_KEY: "200", SECONDS_KEY: "0"}),
            victim(100, scheduled=NOW),
            preemptor(199),
            False,
            id="when TolerationSeconds is 0, it should return false (no toleration)",
        ),
        pytest.param(
            priority_class(100, {MIN_KEY: "200", SECONDS_KEY: "-1"}),
            victim(100, scheduled=-62135596800.0),  # Go's zero Time: long ago
            preemptor(199),
            True,
            id="when TolerationSeconds is negative, it should return true (can tolerate forever)",
        ),
        pytest.param(
            priority_class(100, {MIN_KEY: "200", SECONDS_KEY: "100"}),
            victim(100, scheduled=NOW - 101),
            preemptor(199),
            False,
            id="when TolerationSeconds is positive and victimCandidate has elapsed "
            "TolerationSeconds from being scheduled, it should return false (the toleratation "
            "expired)",
        ),
        pytest.param(
            priority_class(100, {MIN_KEY: "200", SECONDS_KEY: "100"}),
            victim(100, scheduled=NOW - 10),
            preemptor(199),
            True,
            id="when TolerationSeconds is positive and victimCandidate has been scheduled within "
            "TolerationSeconds, it should return true (the toleration hasn't expired)",
        ),
        # Corral's rows: SP's code paths its tables do not cover.
        pytest.param(
            priority_class(100, {MIN_KEY: "200", SECONDS_KEY: "100"}),
            victim(100),
            preemptor(199),
            True,
            id="not scheduled yet: tolerates",
        ),
        pytest.param(
            priority_class(100, {MIN_KEY: "200"}),
            victim(100, class_name=""),
            preemptor(199),
            False,
            id="no priorityClassName: never tolerates",
        ),
        # 10^10 s is beyond time.Duration: Go's product wraps negative, so it has expired.
        pytest.param(
            priority_class(100, {MIN_KEY: "200", SECONDS_KEY: "10000000000"}),
            victim(100, scheduled=NOW - 10),
            preemptor(199),
            False,
            id="toleration beyond Duration wraps like Go",
        ),
    ],
)
def test_exempted_from_preemption(
    pc: dict[str, Any], candidate: dict[str, Any], incoming: dict[str, Any], want: bool
) -> None:
    got = pt.exempted(
        pod_from_json(candidate),
        pod_from_json(incoming),
        lambda name: pc if name == CLASS else None,
        NOW,
    )
    assert got is want


def test_exempted_from_preemption_with_non_existing_priority_class() -> None:
    # "when priority class does not exist, it should return error"
    with pytest.raises(StatusError) as err:
        pt.exempted(pod_from_json(victim(3)), pod_from_json(preemptor(2)), lambda _: None, NOW)
    assert err.value.status.code is Code.ERROR
    assert err.value.status.message == f'priorityclass.scheduling.k8s.io "{CLASS}" not found'


def test_preemption_toleration_args_are_default_preemption_args() -> None:
    plugin = pt.new(None, FakeHandle())
    assert plugin.evaluator.min_candidates == (10, 100)
    with pytest.raises(ValidationError) as err:
        pt.new({"minCandidateNodesPercentage": 101}, FakeHandle())
    assert [str(e) for e in err.value.errors] == [
        "minCandidateNodesPercentage: 101: not in valid range [0, 100]"
    ]


# --- through the runtime: a profile whose PostFilter is PreemptionToleration ------------------


class Executor:
    def __init__(self) -> None:
        self.preempted: list[tuple[str, list[str]]] = []

    def preempt(
        self,
        preemptor: PodInfo,
        node_name: str,
        victims: Sequence[PodInfo],
        lower_priority_nominated: Sequence[PodInfo],
    ) -> Status | None:
        self.preempted.append((node_name, [v.name for v in victims]))
        return None

    def clear_nominated_node_name(self, pods: Sequence[PodInfo]) -> None:
        pass

    def is_running_preemption(self, uid: str) -> bool:
        return False

    def may_evict(self, pod: PodInfo) -> bool:
        return True


def _schedule(
    pc: dict[str, Any], incoming: dict[str, Any], scheduled: float
) -> tuple[Any, Executor]:
    cache = build_cache(
        [node("a", cpu="1")],
        [victim(10, scheduled=scheduled, cpu="1", node_name="a")],
    )
    objects = ObjectStore()
    objects.apply("PriorityClass", "ADDED", pc)
    executor = Executor()
    profile = dataclasses.replace(
        default_profile(percentage_of_nodes_to_score=100), post_filter=(pt.NAME,)
    )
    fwk = Framework(
        profile,
        in_tree_registry(),
        pod_binder=lambda _p, _n: None,
        objects=objects,
        preemption_executor=executor,
    )
    scheduler = PodScheduler(fwk, rng=random.Random(0))
    outcome = scheduling_cycle(
        scheduler, CycleState(), pod_from_json(incoming), cache.snapshot(), cache
    )
    return outcome, executor


# test/integration/preemption_toleration_test.go, with testPriority = 10; the victim was
# scheduled a second ago by the real clock (the integration test creates it right before the
# preemptor).
@pytest.mark.parametrize(
    ("annotations", "priority", "policy", "preempted"),
    [
        pytest.param(
            {MIN_KEY: "20"},
            20,
            "PreemptLowerPriority",
            True,
            id="when preemptor's priority >= MinimumPreemptablePriority(=testPriority+10), it can "
            "NOT tolerate the preemption",
        ),
        pytest.param(
            {MIN_KEY: "20", SECONDS_KEY: "30"},
            20,
            "PreemptLowerPriority",
            True,
            id="when preemptor's priority >= MinimumPreemptablePriority(=testPriority+10), "
            "TolerationSeconds has no effect (it can NOT tolerate the preemption)",
        ),
        pytest.param(
            {MIN_KEY: "20"},
            19,
            "PreemptLowerPriority",
            True,
            id="when preemptor's priority < MinimumPreemptablePriority(=testPriority+10), it can "
            "not tolerate at all if no TolerationSeconds (defaut is 0)",
        ),
        pytest.param(
            {MIN_KEY: "20", SECONDS_KEY: "-1"},
            19,
            "PreemptLowerPriority",
            False,
            id="when preemptor's priority < MinimumPreemptablePriority(=testPriority+10), it can "
            "tolerate forever if tolerationSeconds = -1",
        ),
        pytest.param(
            {MIN_KEY: "20", SECONDS_KEY: "30"},
            15,
            "PreemptLowerPriority",
            False,
            id="when preemptor's priority < MinimumPreemptablePriority(=testPriority+10), it can "
            "tolerate the preemption if victimCandidate is scheduled within TolerationSeconds",
        ),
        pytest.param(
            {MIN_KEY: "a"},
            11,
            "PreemptLowerPriority",
            True,
            id="when unparsable preemption toleration policy, victim should be preempted if "
            "preemptor's preemption policy is PreemptLowerPriority",
        ),
        pytest.param(
            {MIN_KEY: "a"},
            11,
            "Never",
            False,
            id="when unparsable preemption toleration policy, victim should not be preempted if "
            "preemptor's preemption policy is PreemptNone",
        ),
    ],
)
def test_preemption_toleration_through_the_runtime(
    annotations: dict[str, str], priority: int, policy: str, preempted: bool
) -> None:
    outcome, executor = _schedule(
        priority_class(10, annotations), preemptor(priority, policy, cpu="1"), time.time() - 1
    )
    if preempted:
        assert executor.preempted == [("a", ["victim"])]
        assert outcome.nominated_node_name == "a"
    else:
        assert executor.preempted == []
        assert not outcome.nominated_node_name


def test_preemption_toleration_expires_after_toleration_seconds() -> None:
    # "... it can NOT tolerate the preemption after TolerationSeconds elapsed from
    # victimCandidate being scheduled" (5 s; SP's test waits them out, here they are past).
    _, executor = _schedule(
        priority_class(10, {MIN_KEY: "20", SECONDS_KEY: "5"}),
        preemptor(15, cpu="1"),
        time.time() - 3600,
    )
    assert executor.preempted == [("a", ["victim"])]


def test_a_tolerating_node_reads_sps_message() -> None:
    outcome, _ = _schedule(
        priority_class(10, {MIN_KEY: "20", SECONDS_KEY: "-1"}),
        preemptor(15, cpu="1"),
        time.time() - 1,
    )
    assert outcome.status is not None
    assert "1 No victims found on node a for preemptor pod p" in outcome.status.message
