"""The status patch of a failed attempt: the PodScheduled condition and the nominated node, each
written only when the pod does not already say it."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.engine.podstatus import condition_patch
from corral.scheduler.framework.api_types import PodCondition, PodStatus

MESSAGE = "0/3 nodes are available: 3 Insufficient cpu."
SAID: PodCondition = {
    "type": "PodScheduled",
    "status": "False",
    "reason": "Unschedulable",
    "message": MESSAGE,
    "lastTransitionTime": "2026-11-25T00:00:00Z",
}


@pytest.mark.parametrize(
    ("status", "nominated", "want"),
    [
        pytest.param({"conditions": [SAID]}, None, None, id="already said: nothing to write"),
        pytest.param({"conditions": [SAID]}, "", None,
                     id="clearing a nomination the pod does not have: nothing to write"),
        pytest.param({"conditions": [SAID], "nominatedNodeName": "n1"}, "",
                     {"nominatedNodeName": ""}, id="a failed binding clears the nomination"),
        pytest.param({"conditions": [SAID], "nominatedNodeName": "n1"}, None, None,
                     id="None leaves the nomination"),
        pytest.param({"conditions": [SAID], "nominatedNodeName": "n1"}, "n2",
                     {"nominatedNodeName": "n2"}, id="preemption nominates another node"),
        pytest.param({"conditions": [SAID], "nominatedNodeName": "n2"}, "n2", None,
                     id="the same nomination again: nothing to write"),
    ],
)  # fmt: skip
def test_nomination_in_the_failure_patch(
    status: PodStatus, nominated: str | None, want: dict[str, Any] | None
) -> None:
    patch = condition_patch(status, "Unschedulable", MESSAGE, nominated)
    assert patch == (None if want is None else {"status": want})


def test_a_new_message_keeps_the_transition_time_and_writes_the_condition() -> None:
    patch = condition_patch({"conditions": [SAID]}, "Unschedulable", "other", "")
    assert patch is not None
    (condition,) = patch["status"]["conditions"]
    assert condition["message"] == "other"
    assert condition["lastTransitionTime"] == SAID["lastTransitionTime"]
    assert "nominatedNodeName" not in patch["status"]
