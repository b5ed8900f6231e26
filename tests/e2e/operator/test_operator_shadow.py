"""A shadow profile end to end: a SchedulerProfile with ``spec.shadow`` naming the cluster's
kube-scheduler, rendered by the operator and run as a local engine with its own ServiceAccount
and rendered (read-only) RBAC; the pods kube-scheduler binds one at a time are decided by the
shadow and counted in ``status.shadow``, shown in the printer column and by
``corral shadow report``. Its identity cannot write to a pod, a binding, an Event or another
profile's status (a real 403 each), and its engine never tried (no refusal in its log, no Event
of its own about the pods)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corral.cli import main
from corral.k8s import CONTENT_MERGE_PATCH, ApiError, Client
from corral.testing import LocalCluster
from support.operator_process import API, KIND, eventually, is_ready, profile

LIVE = "default-scheduler"
PODS = 12
PROFILES = "/apis/corral.dev/v1alpha1/schedulerprofiles"


def pod(name: str, namespace: str, pool: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "nodeSelector": {"test-pool": pool},
            "containers": [
                {
                    "name": "c",
                    "image": "pause",
                    "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}},
                }
            ],
        },
    }


def shadow_status(kube: Client, name: str) -> dict[str, Any]:
    return dict((kube.get(API, KIND, name).get("status") or {}).get("shadow") or {})


def refused(account: Client, method: str, path: str, body: Any = None) -> int:
    patch = {"content_type": CONTENT_MERGE_PATCH} if method == "PATCH" else {}
    with pytest.raises(ApiError) as denied:
        account.request(method, path, body=body, **patch)
    return denied.value.status


def test_a_shadow_profile_counts_in_its_status_and_cannot_write_to_pods(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Any,
    start_operator: Any,
    profiles: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = profiles("shadow")
    pool = f"pool-{name}"
    fake_nodes(3, cpu="4", memory="8Gi", labels={"test-pool": pool})
    engines = tmp_path / "engines"
    start_operator("--local-engines", f"--engine-dir={engines}")
    # tenancy: the shadow decides this test's pods only (not those other tests left behind).
    shadow = {"schedulerName": LIVE}
    kube.create(
        profile(name, namespace, replicas=1, shadow=shadow, tenancy={"namespaces": [namespace]})
    )
    eventually(lambda: is_ready(kube, name), timeout=60, what=f"{name} Ready")
    # Its engine writes status.shadow as soon as it leads and watches (before any decision).
    started = eventually(lambda: shadow_status(kube, name), timeout=60, what="status.shadow")
    assert started["summary"] == "no decisions yet"
    assert started["observed"] == 0
    eventually(
        lambda: kube.get(API, KIND, name)["status"].get("leader", "").startswith(f"corral-{name}"),
        what="the shadow's engine in status.leader",
    )

    for i in range(PODS):  # one at a time: each after the shadow counted the one before
        kube.create(pod(f"p-{i}", namespace, pool))
        eventually(
            lambda i=i: kube.get("v1", "Pod", f"p-{i}", namespace)["spec"].get("nodeName"),
            what=f"p-{i} bound by kube-scheduler",
        )
        eventually(
            lambda i=i: shadow_status(kube, name).get("observed", 0) > i,
            what=f"the shadow's decision on p-{i} in status.shadow",
        )
    (log,) = engines.rglob("*.log")
    got = shadow_status(kube, name)
    assert got["schedulerName"] == LIVE
    assert got["observed"] == PODS, got
    assert got["agreed"] + got["ties"] == PODS, (got, log.read_text())
    assert got["summary"] == f"{PODS}/{PODS} agree (100.0%)"

    column = cluster.kubectl("get", "schedulerprofile", name).stdout
    assert "SHADOW" in column.splitlines()[0]
    assert got["summary"] in column

    argv = ["shadow", "report", name, f"--kubeconfig={cluster.kubeconfig}"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"SchedulerProfile {name} shadows {LIVE} since ")
    assert lines[1].startswith(f"{PODS} decisions: ")
    assert lines[1].endswith(": 100.0% agree")
    assert "no disagreement" in lines
    assert main([*argv, "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["observed"] == PODS
    assert main(["shadow", "report", f"no-{name}", f"--kubeconfig={cluster.kubeconfig}"]) == 2
    assert capsys.readouterr().err == f"corral: SchedulerProfile 'no-{name}' not found\n"

    # The shadow's own identity: reads work, every write about pods is refused.
    account = kube.with_token(kube.request_token(namespace, f"corral-{name}"))
    assert account.request("GET", f"{PROFILES}/{name}/status")["metadata"]["name"] == name
    pods = f"/api/v1/namespaces/{namespace}/pods"
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p-0"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "nowhere"},
    }
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "x", "namespace": namespace},
        "involvedObject": {"kind": "Pod", "name": "p-0", "namespace": namespace},
        "reason": "Scheduled",
    }
    codes = {
        "bind": refused(account, "POST", f"{pods}/p-0/binding", binding),
        "create a pod": refused(account, "POST", pods, pod("x", namespace, pool)),
        "delete a pod": refused(account, "DELETE", f"{pods}/p-1"),
        "label a pod": refused(
            account, "PATCH", f"{pods}/p-1", {"metadata": {"labels": {"a": "b"}}}
        ),
        "write an Event": refused(account, "POST", f"/api/v1/namespaces/{namespace}/events", event),
        "another profile's status": refused(
            account, "PATCH", f"{PROFILES}/not-{name}/status", {"status": {"shadow": {}}}
        ),
    }
    assert codes == dict.fromkeys(codes, 403)
    text = log.read_text()
    assert "403" not in text
    assert "Forbidden" not in text

    # The pods' Events are kube-scheduler's (there to be seen), none the shadow's.
    def reporters() -> list[str]:
        return [e.get("reportingController", "") for e in
                kube.list_items("events.k8s.io/v1", "Event", namespace)]  # fmt: skip

    eventually(lambda: reporters().count(LIVE) >= PODS, what="kube-scheduler's Events")
    assert name not in reporters()
