"""A profile enabling a plugin whose CRD the cluster does not serve (Coscheduling without
scheduler-plugins' PodGroup CRD) goes Stalled with reason PluginCRDMissing, and gets nothing
applied; installing crds/scheduler-plugins/podgroups.scheduling.x-k8s.io.yaml clears it (the
operator's discovery cache and the profile's short re-check see it within seconds), and
removing the CRD stalls it again with its running objects left as they are.

The PodGroup CRD is cluster-wide: other tests of the session install and delete it
(support.sp_crds, each waiting for its own deletion). This one waits for an earlier deletion to
finish and skips when something else holds the CRD."""

from __future__ import annotations

from typing import Any

import pytest

from corral.k8s import JSON, Client
from support import sp_crds
from support.operator_process import (
    API,
    KIND,
    OperatorProcess,
    children,
    condition,
    events_for,
    eventually,
    is_ready,
    profile,
)

MISSING = (
    "Coscheduling needs podgroups.scheduling.x-k8s.io, which this cluster does not serve; "
    "install crds/scheduler-plugins"
)
# As config/samples/coscheduling.yaml: Coscheduling sorts the queue, so PrioritySort is off.
PLUGINS = {
    "multiPoint": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "PrioritySort"}]}
}


def stalled_on_crd(kube: Client, name: str) -> JSON | None:
    obj = kube.get(API, KIND, name)
    stalled = condition(obj, "Stalled")
    if stalled.get("status") == "True" and stalled.get("reason") == "PluginCRDMissing":
        return obj
    return None


def test_a_plugin_whose_crd_is_missing_stalls_the_profile_until_the_crd_is_served(
    kube: Client, namespace: str, operator: OperatorProcess, profiles: Any
) -> None:
    if not sp_crds.absent(kube, sp_crds.POD_GROUP_CRD):
        pytest.skip("the PodGroup CRD is installed by something else on this control plane")
    name = profiles("crd")
    kube.create(profile(name, namespace, plugins=PLUGINS))

    obj = eventually(lambda: stalled_on_crd(kube, name), what=f"{name} Stalled on the CRD")
    assert condition(obj, "Stalled")["message"] == MISSING
    ready = condition(obj, "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False",
        "PluginCRDMissing",
        MISSING,
    )
    assert condition(obj, "Reconciling")["status"] == "False"
    assert children(kube, name) == {}  # refused before apply: no engine that would fail
    warnings = [e for e in events_for(kube, name) if e["reason"] == "PluginCRDMissing"]
    assert [(e["type"], e["message"]) for e in warnings] == [("Warning", MISSING)]

    with sp_crds.pod_group_crd(kube):
        # Discovery TTL (10 s) plus the resync tick, then the rollout on the kwok hosts.
        obj = eventually(lambda: is_ready(kube, name), timeout=90, what=f"{name} Ready")
        assert condition(obj, "Stalled")["status"] == "False"
        running = {k: v["metadata"]["uid"] for k, v in children(kube, name).items()}
        assert any(kind == "Deployment" for kind, _, _ in running)

    # The CRD is gone again: stalled, and what runs is left alone.
    obj = eventually(lambda: stalled_on_crd(kube, name), what=f"{name} Stalled again")
    assert condition(obj, "Stalled")["message"] == MISSING
    assert {k: v["metadata"]["uid"] for k, v in children(kube, name).items()} == running
