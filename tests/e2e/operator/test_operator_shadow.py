"""A shadow profile end to end: a SchedulerProfile with ``spec.shadow`` naming the cluster's
kube-scheduler, rendered by the operator and run as a local engine with its own ServiceAccount
and rendered (read-only) RBAC; the pods kube-scheduler binds one at a time, then a burst, are
decided by the shadow and counted in ``status.shadow`` (the burst apart), shown in the printer
column and by ``corral shadow report``.

Its children live in the audited namespace (``corral.testing.audit``), so the API server logs
every request but a read its ServiceAccount makes: the log shows that its engine wrote its
Lease and its own profile's status and nothing else (no Binding, no pod, no Event). Its
identity cannot write to a pod, a binding, an Event or another profile's status (a real 403
each, and each of those refusals then shows in the log, as any write the shadow tried would)."""

from __future__ import annotations

import json
import re
import signal
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from corral.cli import main
from corral.k8s import CONTENT_MERGE_PATCH, ApiError, Client
from corral.scheduler.engine.leaderelection import micro_time
from corral.testing import LocalCluster, audit
from corral.testing.credentials import write_kubeconfig
from support import audited
from support.engine_process import EngineProcess, create_all, engine_config
from support.operator_process import API, KIND, eventually, is_ready, profile

LIVE = "default-scheduler"
PODS = 12
BURST = 24
PROFILES = "/apis/corral.dev/v1alpha1/schedulerprofiles"
READ_ONLY: list[dict[str, Any]] = [
    {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}
]


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


def own_writes(write: audit.Write, name: str) -> bool:
    """What a shadow profile's engine may write: its Lease and its own profile's status."""
    lease = write.resource == "leases.coordination.k8s.io" and write.namespace == audit.NAMESPACE
    status = (write.resource, write.verb, write.name) == (
        "schedulerprofiles.corral.dev/status", "patch", name,
    )  # fmt: skip
    return (lease or status) and write.code < 300


def try_writes(account: Client, namespace: str, pool: str, name: str) -> dict[str, int]:
    """Each write about pods (and another profile's status) as ``account``: the codes."""
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
    return {
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


def check_report(
    cluster: LocalCluster, name: str, got: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """``corral shadow report`` shows ``got`` (status.shadow): the burst apart."""
    total = got["observed"]
    argv = ["shadow", "report", name, f"--kubeconfig={cluster.kubeconfig}"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"SchedulerProfile {name} shadows {LIVE} since ")
    assert lines[1].startswith(f"{total} decisions: ")
    assert lines[2].startswith("    one at a time: ")
    assert lines[3].startswith(f"    under a burst: {got['burst']['observed']} decisions: ")
    assert main([*argv, "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["observed"] == total
    assert main(["shadow", "report", f"no-{name}", f"--kubeconfig={cluster.kubeconfig}"]) == 2
    assert capsys.readouterr().err == f"corral: SchedulerProfile 'no-{name}' not found\n"


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
    home = audited.ensure_namespace(kube)
    kube.create(profile(name, home, replicas=1, shadow=shadow, tenancy={"namespaces": [namespace]}))
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
    assert got["burst"]["observed"] == 0, got

    # A burst: pods in flight together are decided, and counted apart in status.shadow.burst.
    create_all(kube, [pod(f"b-{i}", namespace, pool) for i in range(BURST)])
    total = PODS + BURST
    got = eventually(
        lambda: (s := shadow_status(kube, name)).get("observed", 0) >= total and s,
        timeout=90, what=f"{total} decisions in status.shadow",
    )  # fmt: skip
    assert got["observed"] == total, got
    assert 0 < got["burst"]["observed"] <= BURST, got

    column = cluster.kubectl("get", "schedulerprofile", name).stdout
    assert "SHADOW" in column.splitlines()[0]
    assert got["summary"] in column

    check_report(cluster, name, got, capsys)

    # The audit log: every write the shadow's engine sent so far was its Lease's or its own
    # status's (the status patches are there: the log does see this identity's writes).
    user = audit.username(f"corral-{name}")
    sent = audited.writes(cluster, user)
    assert [w for w in sent if not own_writes(w, name)] == [], [str(w) for w in sent]
    assert any(w.resource.endswith("/status") for w in sent), [str(w) for w in sent]

    # The shadow's own identity: reads work, every write about pods is refused.
    account = kube.with_token(kube.request_token(home, f"corral-{name}"))
    assert account.request("GET", f"{PROFILES}/{name}/status")["metadata"]["name"] == name
    codes = try_writes(account, namespace, pool, name)
    assert codes == dict.fromkeys(codes, 403)
    # Each refusal is in the audit log as this identity's: a write the shadow tried would be.
    tried = [w for w in audited.writes(cluster, user) if not own_writes(w, name)]
    assert [(w.verb, w.resource, w.code) for w in tried] == [
        ("create", "pods/binding", 403), ("create", "pods", 403), ("delete", "pods", 403),
        ("patch", "pods", 403), ("create", "events", 403),
        ("patch", "schedulerprofiles.corral.dev/status", 403),
    ], [str(w) for w in tried]  # fmt: skip
    text = log.read_text()
    assert not re.search(r"\b403\b", text)  # a namespace name may hold "403"
    assert "Forbidden" not in text

    # The pods' Events are kube-scheduler's (there to be seen), none the shadow's.
    def reporters() -> list[str]:
        return [e.get("reportingController", "") for e in
                kube.list_items("events.k8s.io/v1", "Event", namespace)]  # fmt: skip

    eventually(lambda: reporters().count(LIVE) >= PODS, what="kube-scheduler's Events")
    assert name not in reporters()


def lost_at(log: str) -> float:
    """When the engine logged that it lost its Lease (its text log's UTC timestamp)."""
    (line,) = [
        line for line in log.splitlines() if "leader election: " in line and " lost " in line
    ]
    return (
        datetime.strptime(line.split()[0], "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=UTC).timestamp()
    )


def test_a_shadow_that_loses_its_lease_writes_no_more_status(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Any,
    crd: None,
    profiles: Any,
    tmp_path: Path,
) -> None:
    """A shadow engine (``corral scheduler --shadow-of --shadow-profile``, as a profile's
    Deployment runs it) counts a steady trickle of pods into ``status.shadow``; its Lease is
    taken from it. Once it noticed the loss (its log says so), the audit log shows no status
    patch of its: the last one, which a shadow unfenced sent as its counting stopped, is not
    sent."""
    name = profiles("shadow-lease")
    pool = f"pool-{name}"
    fake_nodes(3, cpu="32", memory="64Gi", labels={"test-pool": pool})
    home = audited.ensure_namespace(kube)
    kube.create(profile(name, home, replicas=1, shadow={"schedulerName": LIVE}))
    account = f"shadow-lease-{name}"
    kube.create({"apiVersion": "v1", "kind": "ServiceAccount",
                 "metadata": {"name": account, "namespace": home}})  # fmt: skip
    rights = [
        *READ_ONLY,
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
         "verbs": ["create", "update"]},
        {"apiGroups": ["corral.dev"], "resources": ["schedulerprofiles/status"],
         "resourceNames": [name], "verbs": ["patch"]},
    ]  # fmt: skip
    rbac = "rbac.authorization.k8s.io/v1"
    kube.create({"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": account},
                 "rules": rights})  # fmt: skip
    kube.create({"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": account},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                             "name": account},
                 "subjects": [{"kind": "ServiceAccount", "name": account,
                               "namespace": home}]})  # fmt: skip
    try:
        kubeconfig = tmp_path / "shadow.kubeconfig"
        write_kubeconfig(kubeconfig, server=kube.server, ca_file=Path(str(kube.ca_file)),
                         token=kube.request_token(home, account), user=account)  # fmt: skip
        election = {
            "leaderElect": True,
            "leaseDuration": "4s",
            "renewDeadline": "3s",
            "retryPeriod": "500ms",
            "resourceName": name,
            "resourceNamespace": home,
        }
        config = engine_config(kubeconfig, f"shadow-{name}", leaderElection=election)
        engine = EngineProcess(
            config, tmp_path, f"engine-{name}",
            args=("--shadow-of", LIVE, "--shadow-profile", name, f"--namespaces={namespace}"),
        ).start()  # fmt: skip
        try:
            lost = lose_the_lease(kube, engine, home, name, namespace, pool)
        finally:
            engine.kill(signal.SIGTERM)
    finally:
        kube.delete(rbac, "ClusterRoleBinding", account)
        kube.delete(rbac, "ClusterRole", account)
    patches = [w for w in audited.writes(cluster, audit.username(account))
               if w.resource == "schedulerprofiles.corral.dev/status"]  # fmt: skip
    assert [w for w in patches if w.received <= lost], "no status patch before the loss"
    late = [f"{w} at {w.received:.3f}" for w in patches if w.received > lost]
    assert late == [], f"status patched after the Lease was lost at {lost:.3f}"


def lose_the_lease(
    kube: Client, engine: EngineProcess, home: str, name: str, namespace: str, pool: str
) -> float:
    """Trickle pods to ``engine`` until it has counted some in status.shadow, take its Lease,
    go on until it exits; when it noticed the loss."""
    eventually(lambda: shadow_status(kube, name), timeout=60, what="status.shadow")
    stop = threading.Event()

    def trickle() -> None:
        i = 0
        while not stop.is_set():
            kube.create(pod(f"p-{i}", namespace, pool))
            i += 1
            time.sleep(0.2)

    creator = threading.Thread(target=trickle, daemon=True)
    creator.start()
    try:
        eventually(lambda: shadow_status(kube, name).get("observed", 0) >= 3, timeout=60,
                   what="decisions in status.shadow")  # fmt: skip
        lease = kube.get("coordination.k8s.io/v1", "Lease", name, home)
        assert lease["spec"]["holderIdentity"] == engine.name, lease
        lease["spec"].update(holderIdentity="thief", leaseDurationSeconds=600,
                             renewTime=micro_time())  # fmt: skip
        kube.request("PUT", f"/apis/coordination.k8s.io/v1/namespaces/{home}/leases/{name}",
                     body=lease)  # fmt: skip
        eventually(lambda: not engine.alive(), timeout=30, what="the engine to exit")
    finally:
        stop.set()
        creator.join()
    return lost_at(engine.log())
