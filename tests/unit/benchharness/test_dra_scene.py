"""SchedulingWithResourceClaim's scene: which claim a pod shares, where the harness puts init
claims and their bound pods, and that no device is handed out twice."""

from __future__ import annotations

import pytest
from bench import dra_scene
from bench.workloads import claim_pod, workloads


@pytest.mark.parametrize(
    ("pod", "claim"),
    [
        pytest.param("pod-0", "claim-0", id="the first pod"),
        pytest.param("pod-4", "claim-0", id="five pods to a claim"),
        pytest.param("pod-5", "claim-1", id="the sixth starts the next"),
        pytest.param("init-1234", "claim-246", id="init pods likewise"),
    ],
)
def test_pods_share_claims_five_to_one(pod: str, claim: str) -> None:
    assert dra_scene.claim_name(pod) == claim
    refs = claim_pod(pod, "ns", "s")["spec"]["resourceClaims"]
    assert refs == [{"name": "resource", "resourceClaimName": claim}]


@pytest.mark.parametrize(
    ("pods", "claims"),
    [
        pytest.param(0, 0, id="none"),
        pytest.param(10, 2, id="whole"),
        pytest.param(11, 3, id="a partial claim for the rest"),
    ],
)
def test_claims_for(pods: int, claims: int) -> None:
    assert dra_scene.claims_for(pods) == claims


@pytest.mark.parametrize(
    ("nodes", "devices", "claims"),
    [
        pytest.param(3, 2, 6, id="every device once"),
        pytest.param(200, 2, 200, id="default size: half the devices"),
        pytest.param(500, 2, 500, id="full size: half the devices"),
    ],
)
def test_init_allocations_use_each_device_once_on_their_pods_node(
    nodes: int, devices: int, claims: int
) -> None:
    names = [f"n-{i}" for i in range(nodes)]
    used = set()
    for k in range(claims):
        allocation = dra_scene._allocation(k, names)
        (result,) = allocation["devices"]["results"]
        node = dra_scene.claim_node(k, names)
        assert result["pool"] == f"resourceslice-{node}"
        term = allocation["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]
        assert term["values"] == [node]
        assert int(result["device"].rsplit("-", 1)[1]) < devices
        used.add((result["pool"], result["device"]))
    assert len(used) == claims


def test_the_workload_fits_its_devices_at_both_sizes() -> None:
    for full in (False, True):
        w = workloads(full)["SchedulingWithResourceClaim"]
        claims = dra_scene.claims_for(w.init_pods) + dra_scene.claims_for(w.measured_pods)
        assert claims <= w.nodes * w.devices_per_node, (full, claims)


def test_the_slice_publishes_scheduler_perfs_devices() -> None:
    body = dra_scene.resource_slice("n-0", 2)
    devices = body["spec"]["devices"]
    assert [d["name"] for d in devices] == ["basic-device-0", "basic-device-1"]
    assert devices[1]["attributes"]["driverVersion"] == {"version": "1.2.3"}
    assert devices[1]["attributes"]["pciRoot"] == {"string": "01"}
    assert devices[0]["capacity"]["memory"] == {"value": "24480Mi"}
    assert body["spec"]["pool"] == {"name": "resourceslice-n-0", "generation": 1,
                                    "resourceSliceCount": 1}  # fmt: skip
