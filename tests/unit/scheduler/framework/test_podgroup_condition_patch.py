"""The PodGroup condition's status patch as upstream's util.PatchPodGroupStatus builds it: the
two-way strategic merge of the status as the scheduler's record shows it and that status with
the condition set (facts from apimachinery's CreateTwoWayMergePatch: a changed element of a
merge list carries its merge key and only its changed fields, with ``$setElementOrder``; a
list the original lacks is added whole)."""

from __future__ import annotations

from typing import Any, Final

import pytest

from corral.scheduler.framework.podgroup import condition_patch

TYPE: Final = "PodGroupInitiallyScheduled"
T0: Final = "2026-12-02T00:00:00Z"
T1: Final = "2026-12-02T00:00:05Z"
FALSE_EARLIER: Final = {
    "type": TYPE, "status": "False", "reason": "Unschedulable", "message": "earlier",
    "observedGeneration": 1, "lastTransitionTime": T0,
}  # fmt: skip
TRUE_EMPTY: Final = {**FALSE_EARLIER, "status": "True", "reason": "Scheduled", "message": ""}
ORDER: Final = {"$setElementOrder/conditions": [{"type": TYPE}]}


def _group(*conditions: dict[str, Any]) -> dict[str, Any]:
    raw: dict[str, Any] = {"metadata": {"name": "g", "namespace": "ns"}}
    if conditions:
        raw["status"] = {"conditions": list(conditions)}
    return raw


def _new(status: str, reason: str, message: str) -> dict[str, Any]:
    return {
        "type": TYPE, "status": status, "reason": reason, "message": message,
        "observedGeneration": 1, "lastTransitionTime": T1,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("record", "condition", "want"),
    [
        pytest.param(
            _group(), _new("True", "Scheduled", ""),
            {"status": {"conditions": [_new("True", "Scheduled", "")]}},
            id="no condition in the record: the whole condition, no order directive",
        ),
        pytest.param(
            _group(FALSE_EARLIER), _new("True", "Scheduled", ""),
            {"status": {**ORDER, "conditions": [{
                "type": TYPE, "status": "True", "reason": "Scheduled", "message": "",
                "lastTransitionTime": T1,
            }]}},
            id="False to True: status, reason, message, a new lastTransitionTime",
        ),
        pytest.param(
            _group(FALSE_EARLIER), _new("False", "Unschedulable", "later"),
            {"status": {**ORDER, "conditions": [{"type": TYPE, "message": "later"}]}},
            id="False to False: the message only, lastTransitionTime kept",
        ),
        pytest.param(
            _group(FALSE_EARLIER), _new("False", "Unschedulable", "earlier"), None,
            id="the same condition: nothing",
        ),
        pytest.param(
            _group(TRUE_EMPTY), _new("True", "Scheduled", ""), None,
            id="True again: nothing",
        ),
        pytest.param(
            _group({"type": "Other", "status": "True", "reason": "R", "message": "",
                    "lastTransitionTime": T0}),
            _new("False", "SchedulerError", "boom"),
            {"status": {
                "$setElementOrder/conditions": [{"type": "Other"}, {"type": TYPE}],
                "conditions": [_new("False", "SchedulerError", "boom")],
            }},
            id="another condition only: this one added whole, the order of both",
        ),
        pytest.param(
            _group({**FALSE_EARLIER, "observedGeneration": 1}),
            {**_new("False", "Unschedulable", "earlier"), "observedGeneration": 2},
            {"status": {**ORDER, "conditions": [{"type": TYPE, "observedGeneration": 2}]}},
            id="a new generation only",
        ),
    ],
)  # fmt: skip
def test_condition_patch(
    record: dict[str, Any], condition: dict[str, Any], want: dict[str, Any] | None
) -> None:
    assert condition_patch(record, condition) == want
