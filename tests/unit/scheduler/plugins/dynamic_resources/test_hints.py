"""DynamicResources' queueing hints, with upstream's ``TestIsSchedulableAfterClaimChange`` and
``TestIsSchedulableAfterTargetPodUpdate`` cases (ids as upstream's; ``corral:`` ones are
Corral's), and its registrations against upstream's ``EventsToRegister``. As upstream's, the
claim store already holds the event's claim when the hint runs."""

from __future__ import annotations

from typing import Any, cast

import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework import listers
from corral.scheduler.framework.cluster_events import (
    NODE,
    TARGET_POD,
    ActionType,
    ClusterEvent,
    QueueingHint,
)
from corral.scheduler.framework.interface import Handle
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.dynamic_resources import hints
from corral.scheduler.plugins.dynamic_resources import plugin as dra
from corral.testing.builders import pod as pod_json

from .dra_builders import Json
from .test_plugin import claim, claiming_pod, store

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
ALLOCATION = {"devices": {"results": []}}
GENERATED = [{"name": "gpu", "resourceClaimName": "p-gpu"}]
NAMED = claiming_pod("p", "c")
TEMPLATED = claiming_pod("p", template="tmpl", statuses=GENERATED)
OWNER = [{"uid": TEMPLATED.uid, "controller": True}]
PENDING = claim("c")
ALLOCATED = claim("c", allocation=ALLOCATION)
OTHER_ALLOCATED = claim("other", allocation=ALLOCATION)


def _plugin(*claims: Json) -> dra.DynamicResources:
    handle = store(*((listers.RESOURCE_CLAIM, c) for c in claims))
    return dra.DynamicResources(cast(Handle, handle))


def _with(base: Json, **fields: Any) -> Json:
    out = {**base, **fields}
    out["metadata"] = {**base["metadata"], **fields.get("metadata", {})}
    return out


CLAIM_CHANGES = [
    pytest.param(TEMPLATED, [], PENDING, None, SKIP, id="skip-deletes"),
    pytest.param(TEMPLATED, [], ALLOCATED, None, Q, id="queue-on-delete-with-allocation"),
    pytest.param(
        TEMPLATED,
        [],
        {"metadata": {"name": "c", "namespace": "default"}},
        None,
        Q,
        id="queue-on-delete-final-state-unknown",
    ),
    pytest.param(
        TEMPLATED,
        [],
        None,
        claim("p-gpu", ownerReferences=[{"uid": "uid-else", "controller": True}]),
        SKIP,
        id="skip-wrong-claim",
    ),
    pytest.param(
        NAMED,
        [ALLOCATED],
        None,
        claim("c-foo", allocation=ALLOCATION),
        SKIP,
        id="skip-unrelated-claim",
    ),
    pytest.param(NAMED, [], None, PENDING, Q, id="queue-on-add"),
    pytest.param(
        NAMED,
        [],
        PENDING,
        _with(PENDING, metadata={"finalizers": ["foo"]}),
        SKIP,
        id="skip-adding-finalizer",
    ),
    pytest.param(NAMED, [], PENDING, ALLOCATED, Q, id="queue-on-status-change"),
    pytest.param(
        NAMED,
        [PENDING],
        OTHER_ALLOCATED,
        claim("other"),
        Q,
        id="claim-deallocate",
    ),
    pytest.param(
        NAMED,
        [PENDING],
        OTHER_ALLOCATED,
        _with(OTHER_ALLOCATED, status={"allocation": ALLOCATION, "reservedFor": [{}]}),
        SKIP,
        id="corral: another claim reserved",
    ),
    pytest.param(
        TEMPLATED,
        [],
        None,
        claim("p-gpu", ownerReferences=OWNER),
        Q,
        id="corral: the pod's generated claim created",
    ),
    pytest.param(
        claiming_pod("p", "c", "d"),
        [],
        PENDING,
        ALLOCATED,
        SKIP,
        id="corral: another of the pod's claims is still missing",
    ),
    pytest.param(
        NAMED,
        [],
        _with(PENDING, status={}),
        _with(PENDING, status={"reservedFor": []}),
        SKIP,
        id="corral: an empty field equals a missing one",
    ),
    pytest.param(
        NAMED,
        [],
        _with(PENDING, metadata={"namespace": "other"}),
        _with(ALLOCATED, metadata={"namespace": "other"}),
        SKIP,
        id="corral: a claim of the same name in another namespace",
    ),
    pytest.param(
        TEMPLATED,
        [],
        claim("p-gpu", ownerReferences=OWNER),
        claim("p-gpu", ownerReferences=OWNER, allocation=ALLOCATION),
        Q,
        id="corral: the pod's generated claim allocated (named by its status)",
    ),
    pytest.param(
        claiming_pod("p", template="tmpl"),
        [],
        OTHER_ALLOCATED,
        claim("other"),
        SKIP,
        id="corral: deallocated, but the pod's claim is not created yet",
    ),
]


@pytest.mark.parametrize(("pod", "claims", "old", "new", "want"), CLAIM_CHANGES)
def test_after_claim_change(
    pod: PodInfo, claims: list[Json], old: Json | None, new: Json | None, want: QueueingHint
) -> None:
    stored = [*claims, *([new] if new is not None else [])]
    assert _plugin(*stored).hint_claim_change(pod, old, new) is want


@pytest.mark.parametrize(("pod", "claims", "old", "new", "want"), CLAIM_CHANGES)
def test_the_claim_narrowing_keeps_the_hints_contract(
    pod: PodInfo, claims: list[Json], old: Json | None, new: Json | None, want: QueueingHint
) -> None:
    """Every case: where the narrowing's keys say the event cannot concern the pod, the hint
    skips it (the queue then does not ask); ``None`` (any pod) only where the case needs it."""
    keys = hints.claim_event_keys(old, new)
    if keys is not None and keys.isdisjoint(hints.pod_claim_keys(pod)):
        assert want is SKIP


def test_the_claim_narrowing_names_the_claim_unless_any_pod_may_use_it() -> None:
    named = frozenset({("default", "c")})
    assert hints.pod_claim_keys(NAMED) == named
    assert hints.pod_claim_keys(TEMPLATED) == frozenset({("default", "p-gpu")})
    assert hints.claim_event_keys(PENDING, ALLOCATED) == named
    assert hints.claim_event_keys(None, PENDING) == named
    assert hints.claim_event_keys(ALLOCATED, PENDING) is None  # deallocated: frees devices
    assert hints.claim_event_keys(ALLOCATED, None) is None  # deleted
    assert hints.claim_event_keys("not-a-claim", PENDING) is None  # the hint raises: Queue


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(None, "not-a-claim", id="backoff-wrong-new-object"),
        pytest.param("not-a-claim", PENDING, id="backoff-wrong-old-object"),
    ],
)
def test_claim_hint_refuses_objects_that_are_not_claims(old: object, new: object) -> None:
    with pytest.raises(TypeError, match="expected dict, got str"):
        _plugin(PENDING).hint_claim_change(NAMED, old, new)


def two_templates(*statuses: Json) -> PodInfo:
    raw = pod_json("p")
    raw["spec"]["resourceClaims"] = [
        {"name": name, "resourceClaimTemplateName": "tmpl"} for name in ("gpu", "nic")
    ]
    raw["status"] = {"resourceClaimStatuses": list(statuses)}
    return pod_from_json(raw)


@pytest.mark.parametrize(
    ("claims", "pod", "new", "want"),
    [
        pytest.param(
            [claim("p-gpu", ownerReferences=OWNER)],
            claiming_pod("p", template="tmpl"),
            TEMPLATED,
            Q,
            id="complete",
        ),
        pytest.param([], claiming_pod("p", template="tmpl"), TEMPLATED, SKIP, id="missing-claim"),
        pytest.param(
            [claim("p-gpu", ownerReferences=OWNER)],
            two_templates(),
            two_templates(*GENERATED),
            SKIP,
            id="incomplete",
        ),
    ],
)
def test_after_target_pod_update(
    claims: list[Json], pod: PodInfo, new: PodInfo, want: QueueingHint
) -> None:
    assert _plugin(*claims).hint_target_pod_update(pod, pod, new) is want


def test_target_pod_hint_refuses_objects_that_are_not_pods() -> None:
    with pytest.raises(TypeError, match="expected PodInfo, got str"):
        _plugin().hint_target_pod_update(NAMED, None, "not-a-claim")


def test_registrations_are_upstreams() -> None:
    plugin = _plugin()
    registered = {r.event: r.hint for r in plugin.events_to_register()}
    node = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE
    claim_actions = ActionType.ADD | ActionType.UPDATE | ActionType.DELETE
    added_or_updated = ActionType.ADD | ActionType.UPDATE
    assert registered == {
        ClusterEvent(NODE, node): None,
        ClusterEvent(listers.RESOURCE_CLAIM, claim_actions): plugin.hint_claim_change,
        ClusterEvent(
            TARGET_POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM
        ): plugin.hint_target_pod_update,
        ClusterEvent(listers.DEVICE_CLASS, added_or_updated): None,
        ClusterEvent(listers.RESOURCE_SLICE, added_or_updated): None,
    }
