"""GitOps health by the real reader: sigs.k8s.io/cli-utils' kstatus library (what Flux, kpt
and Argo CD's kstatus health read) judges SchedulerProfiles as the operator means them: a
Ready profile is Current, one rolling out is InProgress with the operator's message, a
Stalled one Failed with the reason's message, and one the operator has not seen yet is
InProgress, never Current."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from corral.k8s import JSON, Client
from corral_dev.builds import ensure_kstatus
from support.operator_process import (
    API,
    KIND,
    condition,
    eventually,
    is_ready,
    profile,
)


def kstatus(*objects: JSON) -> list[dict[str, str]]:
    """The library's verdict on each object, in order."""
    answer = subprocess.run(
        [str(ensure_kstatus())],
        input=json.dumps(list(objects)),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    verdicts: list[dict[str, str]] = json.loads(answer.stdout)
    return verdicts


def patch(kube: Client, name: str, spec: JSON) -> None:
    kube.request(
        "PATCH",
        kube.resource(API, KIND).path(None, name),
        body={"spec": spec},
        content_type="application/merge-patch+json",
    )


def test_kstatus_reads_each_outcome_with_its_message(
    kube: Client, namespace: str, start_operator: Any, profiles: Any
) -> None:
    name = profiles("kstatus")
    created = kube.create(profile(name, namespace))
    # As the API server returns a profile no operator has written yet (status is the CRD's
    # default): kstatus must not call it Current.
    fresh = kstatus(created)[0]
    assert fresh.get("status") == "InProgress", fresh
    assert (
        fresh["message"] == "SchedulerProfile generation is 1, but latest observed generation is 0"
    )

    start_operator()
    obj = eventually(lambda: is_ready(kube, name), what=f"{name} Ready")
    assert kstatus(obj)[0] == {"name": name, "status": "Current", "message": "Resource is Ready"}

    # Rolling out, and never done: the new pods can land on no node.
    patch(kube, name, {"deployment": {"nodeSelector": {"corral-e2e/none": "none"}}})

    def rolling() -> JSON | None:
        obj = kube.get(API, KIND, name)
        c = condition(obj, "Reconciling")
        return obj if c.get("status") == "True" and c.get("observedGeneration") == 2 else None

    obj = eventually(rolling, what=f"{name} rolling out")
    verdict = kstatus(obj)[0]
    assert verdict["status"] == "InProgress"
    assert verdict["message"] == condition(obj, "Reconciling")["message"]
    assert "rolling out" in verdict["message"]

    # Stalled: a change the operator refuses (a plugin admission cannot know of).
    patch(kube, name, {"plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}})

    def stalled() -> JSON | None:
        obj = kube.get(API, KIND, name)
        c = condition(obj, "Stalled")
        return obj if c.get("status") == "True" and c.get("observedGeneration") == 3 else None

    obj = eventually(stalled, what=f"{name} Stalled")
    verdict = kstatus(obj)[0]
    assert verdict["status"] == "Failed"
    assert verdict["message"] == condition(obj, "Stalled")["message"]
    assert "NoSuchPlugin" in verdict["message"]
