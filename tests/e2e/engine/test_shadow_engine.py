"""`corral scheduler --shadow-of NAME` on the real control plane: a shadow of upstream
kube-scheduler decides its pods as the shadow's profile would, compares with the bindings
kube-scheduler made, and writes nothing.

It runs as a read-only ServiceAccount of the audited namespace (``corral.testing.audit``): the
API server logs every request but a read that identity makes, refused ones too, so "it wrote
nothing" is read from the audit log, not inferred from its rights. The one write each test
expects there is the fixture's own probe (a pod create as that identity, refused 403), which
also shows the log does record this identity's writes.

- same configuration (upstream's defaults), :data:`PODS` pods of mixed sizes one at a time:
  every decision agrees (a tie, another node of equal total score, counts as agreement);
- changed weights (NodeResourcesFit's MostAllocated against kube-scheduler's LeastAllocated):
  the disagreements are counted and each names the deciding plugin;
- a burst: every pod decided, those decided with others in flight counted apart;
- a shadow of a Corral engine (another schedulerName) agrees with it the same way.
"""

from __future__ import annotations

import re
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from corral.k8s import JSON, ApiError, Client
from corral.testing import LocalCluster, audit
from corral.testing.credentials import write_kubeconfig
from support import audited
from support.engine_process import EngineProcess, all_bound, create_all, engine_config, wait_until

LIVE = "default-scheduler"
PODS = 300
# Mixed sizes, so that the nodes' scores differ from pod to pod (cpu, memory).
SIZES = [("100m", "64Mi"), ("250m", "128Mi"), ("500m", "256Mi"), ("150m", "512Mi")]
READ_ONLY: list[JSON] = [
    {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}
]


@dataclass(frozen=True)
class Identity:
    """The shadow's read-only identity: its kubeconfig, its user name in the audit log, and
    the write the fixture tried as it (refused), the only one the log may show."""

    kubeconfig: Path
    user: str
    probe: audit.Write


@pytest.fixture
def read_only_kubeconfig(
    kube: Client, cluster: LocalCluster, namespace: str,
    service_account_client: Callable[[str, str], Client], tmp_path: Path,
) -> Iterator[Identity]:  # fmt: skip
    name = f"t-shadow-ro-{uuid.uuid4().hex[:6]}"
    rbac = "rbac.authorization.k8s.io/v1"
    kube.create({"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": name},
                 "rules": READ_ONLY})  # fmt: skip
    kube.create({"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": name},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                             "name": name},
                 "subjects": [{"kind": "ServiceAccount", "name": name,
                               "namespace": audit.NAMESPACE}]})  # fmt: skip
    account, user = audited.account_client(kube, service_account_client, name)
    token = account.authorization()
    assert token is not None
    path = tmp_path / "shadow.kubeconfig"
    write_kubeconfig(path, server=kube.server, ca_file=Path(str(kube.ca_file)),
                     token=token.removeprefix("Bearer "), user="shadow")  # fmt: skip
    deadline = time.monotonic() + 15
    while True:  # the RBAC authorizer sees new bindings through an informer
        try:
            account.request("GET", "/api/v1/nodes")
            break
        except ApiError:
            assert time.monotonic() < deadline
            time.sleep(0.2)
    # A real 403: this identity may not write to a pod (the shadow has no other); and the
    # audit log records it, as it would record any write the shadow tried.
    assert audited.writes(cluster, user) == []
    with pytest.raises(ApiError) as denied:
        account.request("POST", f"/api/v1/namespaces/{namespace}/pods", body=pod("x", namespace))
    assert denied.value.status == 403
    probe = audit.Write("create", "pods", namespace, "", 403)
    assert audited.writes(cluster, user) == [probe]
    yield Identity(path, user, probe)
    kube.delete(rbac, "ClusterRoleBinding", name)
    kube.delete(rbac, "ClusterRole", name)


def wrote_nothing(cluster: LocalCluster, identity: Identity, engine: EngineProcess) -> None:
    """The audit log shows no write by the shadow: only the fixture's probe."""
    assert engine.alive(), engine.log()
    assert audited.writes(cluster, identity.user) == [identity.probe]
    assert not re.search(r"\b403\b", engine.log())  # a namespace may hold "403"
    assert "Forbidden" not in engine.log()


def pod(
    name: str, namespace: str, pool: str = "", cpu: str = "250m", scheduler: str = LIVE,
    memory: str = "128Mi",
) -> JSON:  # fmt: skip
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedulerName": scheduler,
            "nodeSelector": {"test-pool": pool or namespace},
            "containers": [{"name": "c", "image": "pause",
                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
        },
    }  # fmt: skip


def decisions(engine: EngineProcess) -> dict[str, float]:
    url = f"http://127.0.0.1:{engine.port}/metrics"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode()
    except OSError:
        return {}
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "corral_shadow_decisions_total":
                out[sample.labels["outcome"]] = float(sample.value)
    return out


def started(engine: EngineProcess, live: str = LIVE) -> bool:
    assert engine.alive(), engine.log()
    return f"shadowing {live}" in engine.log()


def bound(kube: Client, namespace: str, name: str) -> bool:
    return bool(kube.get("v1", "Pod", name, namespace)["spec"].get("nodeName"))


def soon(what: str, check: Callable[[], bool], timeout: float = 60.0) -> None:
    """:func:`wait_until`, polling every 20 ms: hundreds of pods wait on it in turn."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f}s waiting for {what}"
        time.sleep(0.02)


def one_at_a_time(
    kube: Client, namespace: str, engine: EngineProcess, count: int, live: str = LIVE
) -> None:
    """Create ``count`` pods of :data:`SIZES` in turn for the live scheduler, each after the
    shadow decided the one before."""
    for i in range(count):
        name = f"p-{i}"
        cpu, memory = SIZES[i % len(SIZES)]
        kube.create(pod(name, namespace, cpu=cpu, memory=memory, scheduler=live))
        soon(f"{name} bound by {live}", lambda n=name: bound(kube, namespace, n))
        soon(f"the shadow's decision on {name}",
             lambda k=i + 1: sum(decisions(engine).values()) >= k)  # fmt: skip


def shadow(
    engines: Callable[..., EngineProcess], identity: Identity, live: str = LIVE, **profile: Any
) -> EngineProcess:
    config = engine_config(identity.kubeconfig, f"shadow-{uuid.uuid4().hex[:6]}")
    config["profiles"][0].update(profile)
    engine = engines(config, args=("--shadow-of", live))
    wait_until("the shadow to start", lambda: started(engine, live))
    return engine


def test_a_shadow_with_kube_schedulers_configuration_agrees_on_every_pod(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    read_only_kubeconfig: Identity,
) -> None:
    fake_nodes(8, cpu="16", memory="32Gi", zones=2, labels={"test-pool": namespace})
    engine = shadow(engines, read_only_kubeconfig)
    one_at_a_time(kube, namespace, engine, PODS)
    counts = decisions(engine)
    assert counts.get("agreed", 0) + counts.get("tie", 0) == PODS, counts
    assert counts.get("disagreed", 0) == 0, engine.log()
    wrote_nothing(cluster, read_only_kubeconfig, engine)


def test_a_shadow_with_changed_weights_names_the_deciding_plugin(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    read_only_kubeconfig: Identity,
) -> None:
    """kube-scheduler spreads (LeastAllocated); a bin-packing shadow (MostAllocated, weight 5)
    would put every pod after the first on the fullest node, so it disagrees with most."""
    fake_nodes(3, cpu="8", memory="16Gi", labels={"test-pool": namespace})
    packing = {
        "pluginConfig": [{"name": "NodeResourcesFit", "args": {
            "scoringStrategy": {"type": "MostAllocated",
                                "resources": [{"name": "cpu", "weight": 1},
                                              {"name": "memory", "weight": 1}]}}}],
        "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}},
    }  # fmt: skip
    engine = shadow(engines, read_only_kubeconfig, **packing)
    one_at_a_time(kube, namespace, engine, 6)
    counts = decisions(engine)
    assert sum(counts.values()) == 6
    assert counts.get("disagreed", 0) >= 3, counts
    lines = [line for line in engine.log().splitlines() if ": disagreed: live " in line]
    assert len(lines) == counts["disagreed"]
    assert all(line.endswith("deciding plugin NodeResourcesFit") for line in lines), lines
    wrote_nothing(cluster, read_only_kubeconfig, engine)


def burst_decisions(engine: EngineProcess) -> dict[str, float]:
    url = f"http://127.0.0.1:{engine.port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return {
        sample.labels["outcome"]: float(sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "corral_shadow_burst_decisions_total"
    }


def test_a_burst_is_decided_and_counted_apart(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    read_only_kubeconfig: Identity,
) -> None:
    """Pods created together are in flight together: every one is decided, and those decided
    while others were in flight are counted apart (the rate the report gives separately)."""
    fake_nodes(4, cpu="8", memory="16Gi", labels={"test-pool": namespace})
    engine = shadow(engines, read_only_kubeconfig)
    create_all(kube, [pod(f"b-{i}", namespace) for i in range(20)])
    wait_until("20 pods bound", lambda: all_bound(kube, namespace) and
               len(kube.list_items("v1", "Pod", namespace)) == 20)  # fmt: skip
    wait_until("20 shadow decisions", lambda: sum(decisions(engine).values()) >= 20)
    counts, burst = decisions(engine), burst_decisions(engine)
    assert sum(counts.values()) == 20, counts
    assert 0 < sum(burst.values()) <= 20, burst
    assert all(burst[k] <= counts.get(k, 0) for k in burst), (burst, counts)
    wrote_nothing(cluster, read_only_kubeconfig, engine)


def test_a_shadow_of_a_corral_engine_agrees_with_it(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    read_only_kubeconfig: Identity,
) -> None:
    """The live scheduler is a Corral engine (its own schedulerName) with the same plugins:
    the shadow follows its bindings exactly as it follows kube-scheduler's."""
    fake_nodes(3, cpu="4", memory="8Gi", zones=2, labels={"test-pool": namespace})
    live = f"corral-live-{uuid.uuid4().hex[:6]}"
    engines(engine_config(cluster.kubeconfig, live))
    engine = shadow(engines, read_only_kubeconfig, live=live)
    one_at_a_time(kube, namespace, engine, 8, live=live)
    counts = decisions(engine)
    assert counts.get("agreed", 0) + counts.get("tie", 0) == 8, (counts, engine.log())
    wrote_nothing(cluster, read_only_kubeconfig, engine)
