"""DeviceTaintRules and DynamicResources' queueing, end to end.

A DeviceTaintRule (``resource.k8s.io/v1``) taints a kwok node's devices: a pod whose request
does not tolerate the taint gets upstream's FailedScheduling message, one that tolerates it is
bound (its allocation carries the toleration), and deleting the rule requeues the first pod
(the engine reports the slice the rule re-tainted as updated, as upstream's slice tracker) so
it gets the other device.

Queueing, observed through ``scheduler_schedule_attempts_total``: a pod rejected for lack of a
device is retried when a slice with a device is published, and not when an unrelated claim is
created and allocated (with ``--queueing-hints=false`` that claim retries it). The pod is
pinned to its node by ``matchFields`` so that DynamicResources alone rejects it, and every node,
slice and class exists before the engine starts; what is left of the shared cluster's
background (an earlier test's allocated claims deleted with its namespace, which rightly
requeue the pod, as upstream's hint) is waited out first. The unrelated claim is a probe pod's,
of a second profile: once the probe is bound, the engine has handled that claim's creation."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from corral.k8s import JSON, Client
from corral.testing import LocalCluster
from corral_dev.dra import API_VERSION, TestDriver, device_class, gpus
from support.engine_process import EngineProcess, engine_config, pod, scheduler_name, wait_until
from support.engine_process import schedule_attempts as attempts

from .test_dra import claim_template, claims_in, fit_error, unschedulable_message, with_claim

TAINT_KEY = "corral.test/maintenance"


def _bound(kube: Client, namespace: str, name: str) -> str:
    return str(kube.get("v1", "Pod", name, namespace)["spec"].get("nodeName") or "")


def _taint_rule(name: str, driver: str, pool: str) -> JSON:
    return {
        "apiVersion": API_VERSION,
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": {"driver": driver, "pool": pool},
            "taint": {"key": TAINT_KEY, "value": "planned", "effect": "NoSchedule"},
        },
    }


def _tolerating(template: JSON) -> JSON:
    (request,) = template["spec"]["spec"]["devices"]["requests"]
    request["exactly"]["tolerations"] = [{"key": TAINT_KEY, "operator": "Exists"}]
    return template


def test_a_taint_rule_keeps_devices_from_pods_that_do_not_tolerate_it(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    cluster_scoped: list[JSON],
) -> None:
    pool = {"pool": namespace}
    (node,) = fake_nodes(1, cpu="8", memory="16Gi", labels=pool)
    driver = TestDriver(kube, f"gpu-{uuid.uuid4().hex[:6]}.corral.test")
    try:
        driver.publish(node, gpus(2))
        cls = f"gpu-{uuid.uuid4().hex[:6]}"
        cluster_scoped.append(kube.create(device_class(cls, f'device.driver == "{driver.driver}"')))
        kube.create(claim_template("one-gpu", namespace, cls))
        kube.create(_tolerating(claim_template("tolerant-gpu", namespace, cls)))
        rule = kube.create(_taint_rule(f"maintenance-{namespace}", driver.driver, node))
        cluster_scoped.append(rule)
        name = scheduler_name()
        engines(engine_config(cluster.kubeconfig, name))  # its informers list the rule first

        kube.create(with_claim(pod("plain", namespace, name, nodeSelector=pool), "one-gpu"))
        message = unschedulable_message(kube, "plain", namespace)
        assert message == fit_error(kube, {"cannot allocate all claims": 1})

        kube.create(with_claim(pod("tolerant", namespace, name, nodeSelector=pool), "tolerant-gpu"))
        wait_until("tolerant bound", lambda: _bound(kube, namespace, "tolerant") == node)
        (claim,) = [c for c in claims_in(kube, namespace) if c.get("status", {}).get("allocation")]
        (result,) = claim["status"]["allocation"]["devices"]["results"]
        assert result["tolerations"] == [{"key": TAINT_KEY, "operator": "Exists"}]
        assert _bound(kube, namespace, "plain") == ""

        kube.delete(API_VERSION, "DeviceTaintRule", rule["metadata"]["name"])
        wait_until("plain bound once the rule is gone", lambda: _bound(kube, namespace, "plain"))
        devices = {
            r["device"]
            for c in claims_in(kube, namespace)
            for r in c["status"]["allocation"]["devices"]["results"]
        }
        assert devices == {"gpu-0", "gpu-1"}
    finally:
        driver.close()


def _no_claim_of_a_terminating_namespace(kube: Client) -> bool:
    terminating = {
        ns["metadata"]["name"]
        for ns in kube.list_items("v1", "Namespace")
        if (ns.get("status") or {}).get("phase") == "Terminating"
    }
    claims = kube.list_items(API_VERSION, "ResourceClaim")
    return not any(c["metadata"]["namespace"] in terminating for c in claims)


def _pinned(node: str) -> JSON:
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    required = {"nodeSelectorTerms": [term]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}


@pytest.mark.parametrize(
    ("args", "retried_by_the_unrelated_claim"),
    [
        pytest.param((), False, id="hints on: only the new slice retries the pod"),
        pytest.param(
            ("--queueing-hints=false",),
            True,
            id="hints off: the unrelated claim retries it too",
        ),
    ],
)
def test_a_pod_waiting_for_a_device_is_retried_by_a_new_slice_not_an_unrelated_claim(
    kube: Client,
    cluster: LocalCluster,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    engines: Callable[..., EngineProcess],
    cluster_scoped: list[JSON],
    args: tuple[str, ...],
    retried_by_the_unrelated_claim: bool,
) -> None:
    wait_until(
        "earlier tests' claims gone",
        lambda: _no_claim_of_a_terminating_namespace(kube),
        timeout=120,
    )
    (home,) = fake_nodes(1, cpu="4", memory="8Gi")
    probe_label = {"probe": namespace}
    (probe_node,) = fake_nodes(1, cpu="4", memory="8Gi", labels=probe_label)
    wanted = TestDriver(kube, f"a-{uuid.uuid4().hex[:6]}.corral.test")
    other = TestDriver(kube, f"b-{uuid.uuid4().hex[:6]}.corral.test")
    try:
        other.publish(probe_node, gpus(1))
        classes = {}
        for driver in (wanted, other):
            cls = f"gpu-{uuid.uuid4().hex[:6]}"
            body = device_class(cls, f'device.driver == "{driver.driver}"')
            cluster_scoped.append(kube.create(body))
            classes[driver.driver] = cls
        kube.create(claim_template("wanted-gpu", namespace, classes[wanted.driver]))
        name, probe_profile = scheduler_name(), scheduler_name()
        config = engine_config(cluster.kubeconfig, name)
        config["profiles"].append({"schedulerName": probe_profile})
        engine = engines(config, args=args)

        picky = with_claim(pod("picky", namespace, name, affinity=_pinned(home)), "wanted-gpu")
        kube.create(picky)
        message = unschedulable_message(kube, "picky", namespace)
        assert message.startswith("0/")
        assert "cannot allocate all claims" in message
        before = attempts(engine, name, "unschedulable")
        assert before >= 1

        # An unrelated claim is created and allocated (the probe's, on the other node).
        probe_claim = claim_template("probe-claim", namespace, classes[other.driver])
        kube.create({**probe_claim, "kind": "ResourceClaim", "spec": probe_claim["spec"]["spec"]})
        probe = pod("probe", namespace, probe_profile, nodeSelector=probe_label)
        probe["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "probe-claim"}]
        kube.create(probe)
        wait_until("the probe bound", lambda: _bound(kube, namespace, "probe") == probe_node)
        if retried_by_the_unrelated_claim:
            wait_until("a retry", lambda: attempts(engine, name, "unschedulable") > before)

        wanted.publish(home, gpus(1))  # a ResourceSlice add: DynamicResources queues the pod
        wait_until("picky bound", lambda: _bound(kube, namespace, "picky") == home)
        wait_until("the success counted", lambda: attempts(engine, name, "scheduled") == 1)
        retries = attempts(engine, name, "unschedulable") - before
        if retried_by_the_unrelated_claim:
            assert retries >= 1
        else:
            assert retries == 0
    finally:
        wanted.close()
        other.close()
