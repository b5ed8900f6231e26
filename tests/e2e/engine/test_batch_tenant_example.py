"""examples/batch-tenant end to end on the local control plane: its SchedulerProfile rendered as
the operator renders it (its RBAC applied, the engine run with its ServiceAccount's token, its
config and its ``--namespaces``), and the README's ``kubectl apply -f examples/batch-tenant/...``
lines run as they are. The 4-member gang binds whole; the pod past the namespace's max is
refused in scheduler-plugins' words while the nodes have room for it."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from corral.api import OperatorDefaults, load_profile
from corral.k8s import JSON, ApiError, Client
from corral.k8s.kubeconfig import write_token_kubeconfig
from corral.render import render
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins.capacity_scheduling import over_max
from corral.scheduler.plugins.coscheduling import POD_GROUP_LABEL
from corral.testing import LocalCluster
from support import sp_crds
from support.engine_process import EngineProcess, pods_in, wait_until

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "batch-tenant"
TENANT = "batch-team"  # namespace.yaml's
RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
APPLY = re.compile(r"^kubectl apply -f (examples/batch-tenant/\S+\.yaml)$", re.MULTILINE)


def readme_applies() -> list[str]:
    """The README's `kubectl apply -f examples/batch-tenant/<file>` lines, in order (the
    profile's is the operator's to act on: the test renders it in the operator's place)."""
    return [f for f in APPLY.findall((EXAMPLE / "README.md").read_text()) if "profile" not in f]


def _namespace_gone(kube: Client) -> bool:
    try:
        kube.get("v1", "Namespace", TENANT)
    except ApiError as exc:
        if exc.not_found:
            return True
        raise
    return False


@pytest.fixture
def tenant(kube: Client) -> Iterator[None]:
    """The PodGroup and ElasticQuota CRDs served; the example's namespace deleted afterwards."""
    with sp_crds.pod_group_crd(kube), sp_crds.elastic_quota_crd(kube):
        wait_until("an earlier batch-team deleted", lambda: _namespace_gone(kube), 120)
        try:
            yield
        finally:
            kube.delete("v1", "Namespace", TENANT)
            wait_until("batch-team deleted", lambda: _namespace_gone(kube), 120)


def _engine(
    kube: Client, namespace: str, tmp_path: Path
) -> tuple[JSON, tuple[str, ...], list[JSON]]:
    """profile.yaml rendered with the operator in ``namespace``: its RBAC applied, its config
    (leader election on) with its ServiceAccount's token, the Deployment's tenancy flags."""
    profile = load_profile(yaml.safe_load((EXAMPLE / "profile.yaml").read_text()),
                           operator=OperatorDefaults(namespace=namespace))  # fmt: skip
    rendered = render(profile)
    rbac = [o for o in rendered.objects if o["kind"] in RBAC_KINDS]
    for obj in rbac:
        kube.apply(obj, field_manager="corral-tests")
    (account,) = [o["metadata"]["name"] for o in rbac if o["kind"] == "ServiceAccount"]
    kubeconfig = tmp_path / "batch.kubeconfig"
    write_token_kubeconfig(kubeconfig, kube, kube.request_token(namespace, account), account)
    config: JSON = yaml.safe_load(rendered.config_yaml)
    config["clientConnection"] = {"kubeconfig": str(kubeconfig)}
    (deployment,) = [o for o in rendered.objects if o["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    flags = tuple(a for a in container["command"] if a.startswith("--namespaces="))
    assert flags == (f"--namespaces={TENANT}",)
    return config, flags, rbac


def _bound(kube: Client) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"]["nodeName"] for p in pods_in(kube, TENANT)
            if p["spec"].get("nodeName")}  # fmt: skip


def _said(kube: Client, pod_name: str, text: str) -> bool:
    events = kube.list_items("v1", "Event", TENANT, field_selector="reason=FailedScheduling")
    return any(e["involvedObject"]["name"] == pod_name and text in e["message"] for e in events)


def test_the_readme_applies_every_file_of_the_example() -> None:
    files = sorted(p.name for p in EXAMPLE.glob("*.yaml"))
    assert sorted([*(Path(f).name for f in readme_applies()), "profile.yaml"]) == files
    assert (
        "kubectl apply -f examples/batch-tenant/profile.yaml" in (EXAMPLE / "README.md").read_text()
    )


def test_the_gang_binds_whole_and_the_pod_past_max_is_refused(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    tenant: None,
    tmp_path: Path,
) -> None:
    # 8 cpus: the gang takes 4, the quota's whole max, and room is left for the pod past it.
    # (No phase with too little room: members rejected at Permit and requeued can meet
    # CapacityScheduling refusing them as over max once, a suspected race not this test's.)
    fake_nodes(2, cpu="4", memory="16Gi")
    namespace_file, quota_file, gang_file, one_more_file = readme_applies()
    cluster.kubectl("apply", "-f", str(ROOT / namespace_file))
    config, flags, rbac = _engine(kube, namespace, tmp_path)
    try:
        engine = engines(config, args=flags)
        cluster.kubectl("apply", "-f", str(ROOT / quota_file))
        cluster.kubectl("apply", "-f", str(ROOT / gang_file))
        gang = {p["metadata"]["name"] for p in pods_in(kube, TENANT)
                if p["metadata"]["labels"].get(POD_GROUP_LABEL) == "trainer"}  # fmt: skip
        assert len(gang) == 4
        wait_until("the whole gang bound", lambda: set(_bound(kube)) == gang, timeout=90)

        cluster.kubectl("apply", "-f", str(ROOT / one_more_file))
        message = over_max(PodInfo(uid="", namespace=TENANT, name="one-more"), TENANT)
        wait_until("one-more refused past max, in SP's words",
                   lambda: _said(kube, "one-more", message), timeout=60)  # fmt: skip
        time.sleep(2)  # another attempt's time: still not bound
        assert set(_bound(kube)) == gang, engine.log()[-4000:]
    finally:
        for obj in rbac:
            if obj["kind"] in ("ClusterRole", "ClusterRoleBinding"):
                kube.delete(obj["apiVersion"], obj["kind"], obj["metadata"]["name"])
