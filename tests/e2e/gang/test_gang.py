"""Gang scheduling end to end on the real control plane (GenericWorkload): a Corral engine
places a gang whole or not at all, a basic group pod by pod, and writes the PodGroup's
``PodGroupInitiallyScheduled`` condition as upstream does."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from corral.k8s import CONTENT_STRATEGIC_MERGE_PATCH, Client
from corral.scheduler.framework.podgroup import condition_patch
from support.engine_process import EngineProcess, create_all, wait_until
from support.gang import bound, condition, member, pod_group

pytestmark = pytest.mark.e2e


def test_a_gang_that_fits_is_placed_whole(
    gang_kube: Client,
    gang_namespace: str,
    gang_nodes: Callable[..., list[str]],
    gang_scheduler: tuple[str, EngineProcess],
) -> None:
    scheduler, _ = gang_scheduler
    gang_nodes(2, cpu="2")
    gang_kube.create(pod_group("g", gang_namespace, min_count=4))
    create_all(gang_kube, [member(f"g-{i}", gang_namespace, scheduler, "g") for i in range(4)])
    wait_until("all 4 bound", lambda: len(bound(gang_kube, gang_namespace)) == 4)
    wait_until("the condition", lambda: condition(gang_kube, gang_namespace, "g") is not None)
    cond = condition(gang_kube, gang_namespace, "g")
    assert cond is not None
    group = gang_kube.get("scheduling.k8s.io/v1beta1", "PodGroup", "g", gang_namespace)
    generation = group["metadata"].get("generation")
    assert (cond["status"], cond["reason"], cond.get("observedGeneration")) == (
        "True", "Scheduled", generation,
    )  # fmt: skip


def test_a_gang_that_cannot_fit_binds_nothing_until_a_node_comes(
    gang_kube: Client,
    gang_namespace: str,
    gang_nodes: Callable[..., list[str]],
    gang_scheduler: tuple[str, EngineProcess],
) -> None:
    scheduler, _ = gang_scheduler
    gang_nodes(1, cpu="2")
    gang_kube.create(pod_group("g", gang_namespace, min_count=3))
    create_all(gang_kube, [member(f"g-{i}", gang_namespace, scheduler, "g") for i in range(3)])

    def unschedulable() -> bool:
        cond = condition(gang_kube, gang_namespace, "g")
        return cond is not None and cond["reason"] == "Unschedulable"

    wait_until("the group's Unschedulable condition", unschedulable)
    cond = condition(gang_kube, gang_namespace, "g")
    assert cond is not None
    assert cond["status"] == "False"
    want = "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"
    assert cond["message"].startswith(want)
    assert bound(gang_kube, gang_namespace) == {}
    gang_nodes(1, cpu="2")
    wait_until(
        "all 3 bound once a node is added",
        lambda: len(bound(gang_kube, gang_namespace)) == 3,
        timeout=120,
    )


def test_a_basic_group_places_what_fits(
    gang_kube: Client,
    gang_namespace: str,
    gang_nodes: Callable[..., list[str]],
    gang_scheduler: tuple[str, EngineProcess],
) -> None:
    scheduler, _ = gang_scheduler
    gang_nodes(1, cpu="2")
    gang_kube.create(pod_group("b", gang_namespace))
    create_all(gang_kube, [member(f"b-{i}", gang_namespace, scheduler, "b") for i in range(3)])
    wait_until("2 bound", lambda: len(bound(gang_kube, gang_namespace)) == 2)
    wait_until("the condition", lambda: condition(gang_kube, gang_namespace, "b") is not None)
    # The third pod's retry follows at once and fails; its cycle may still have read the PodGroup
    # without the first cycle's True (upstream's race too), so the condition is not asserted.


def test_pods_wait_for_their_pod_group(
    gang_kube: Client,
    gang_namespace: str,
    gang_nodes: Callable[..., list[str]],
    gang_scheduler: tuple[str, EngineProcess],
) -> None:
    """Members created before their PodGroup wait for it; then they are placed together."""
    scheduler, _ = gang_scheduler
    gang_nodes(1, cpu="4")
    create_all(gang_kube, [member(f"g-{i}", gang_namespace, scheduler, "g") for i in range(2)])
    gang_kube.create(pod_group("g", gang_namespace, min_count=2))
    wait_until("both bound", lambda: len(bound(gang_kube, gang_namespace)) == 2)


def test_a_patch_from_a_stale_record_keeps_what_it_leaves_out(
    gang_kube: Client, gang_namespace: str
) -> None:
    """The server's half of upstream's condition write (the engine's patches are built by
    ``condition_patch``): two patches built from one stale record still showing an earlier
    False/Unschedulable, the True of a placed cycle then the retry's False, leave the group
    True/Scheduled with the retry's message (the gang conformance kind, seed 2)."""
    gang_kube.create(pod_group("s", gang_namespace))
    path = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{gang_namespace}/podgroups/s/status"

    def cond(status: str, reason: str, message: str, at: str) -> dict[str, object]:
        return {
            "type": "PodGroupInitiallyScheduled", "status": status, "reason": reason,
            "message": message, "observedGeneration": 1, "lastTransitionTime": at,
        }  # fmt: skip

    earlier = cond("False", "Unschedulable", "earlier", "2026-12-02T00:00:00Z")
    first = condition_patch({}, earlier)
    assert first is not None
    gang_kube.request("PATCH", path, body=first, content_type=CONTENT_STRATEGIC_MERGE_PATCH)
    record = gang_kube.get("scheduling.k8s.io/v1beta1", "PodGroup", "s", gang_namespace)
    for status, reason, message in (("True", "Scheduled", ""), ("False", "Unschedulable", "later")):
        patch = condition_patch(record, cond(status, reason, message, "2026-12-02T00:00:05Z"))
        assert patch is not None
        gang_kube.request("PATCH", path, body=patch, content_type=CONTENT_STRATEGIC_MERGE_PATCH)
    got = condition(gang_kube, gang_namespace, "s")
    assert got is not None
    assert (got["status"], got["reason"], got["message"]) == ("True", "Scheduled", "later")
