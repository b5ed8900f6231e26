"""When a profile's engine pods cannot start: permanent waiting reasons at once, back-offs only
after the Deployment's progress deadline; the message says which pod and why."""

from __future__ import annotations

from typing import Any

import pytest

from corral.controller.podhealth import stuck


def pod(name: str, reason: str | None, message: str = "") -> dict[str, Any]:
    state: dict[str, Any] = (
        {"running": {}} if reason is None else {"waiting": {"reason": reason, "message": message}}
    )
    return {"metadata": {"name": name}, "status": {"containerStatuses": [
        {"name": "scheduler", "state": state}
    ]}}  # fmt: skip


DEADLINE = {"conditions": [{"type": "Progressing", "status": "False",
                            "reason": "ProgressDeadlineExceeded",
                            "message": 'ReplicaSet "x" has timed out progressing.'}]}  # fmt: skip
PROGRESSING = {"conditions": [{"type": "Progressing", "status": "True",
                               "reason": "ReplicaSetUpdated"}]}  # fmt: skip
NEVER = 'Container image "nope:1" is not present with pull policy of Never'


@pytest.mark.parametrize(
    ("deployment", "pods", "expected"),
    [
        pytest.param(PROGRESSING, [pod("a", None)], None, id="running"),
        pytest.param(PROGRESSING, [], None, id="no pods yet"),
        pytest.param(
            PROGRESSING, [pod("a", "ErrImageNeverPull", NEVER)],
            ("PodsCannotStart",
             f"engine pods cannot start: pod a container scheduler: ErrImageNeverPull: {NEVER}"),
            id="image absent with pull policy Never",
        ),
        pytest.param(
            PROGRESSING, [pod("a", "InvalidImageName", "bad")],
            ("PodsCannotStart",
             "engine pods cannot start: pod a container scheduler: InvalidImageName: bad"),
            id="invalid image name",
        ),
        pytest.param(
            PROGRESSING, [pod("a", "ImagePullBackOff", "Back-off pulling image")], None,
            id="back-off before the deadline",
        ),
        pytest.param(
            DEADLINE, [pod("a", "CrashLoopBackOff", "back-off 5m0s restarting")],
            ("ProgressDeadlineExceeded",
             "the engine rollout missed its progress deadline: pod a container scheduler: "
             "CrashLoopBackOff: back-off 5m0s restarting"),
            id="crash loop past the deadline",
        ),
        pytest.param(
            DEADLINE, [pod("a", None)],
            ("ProgressDeadlineExceeded",
             'the engine rollout missed its progress deadline: ReplicaSet "x" has timed out '
             "progressing."),
            id="deadline without a waiting container",
        ),
    ],
)  # fmt: skip
def test_stuck(
    deployment: dict[str, Any], pods: list[dict[str, Any]], expected: tuple[str, str] | None
) -> None:
    assert stuck(deployment, pods) == expected
