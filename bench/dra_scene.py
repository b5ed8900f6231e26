"""The DRA scene of SchedulingWithResourceClaim (scheduler_perf's ``dra/performance-config.yaml``):
every node publishes one ResourceSlice of ``devices_per_node`` GPU-like devices (the attributes
of scheduler_perf's ``resourceslice-basic-devices.yaml``), one DeviceClass selects the driver's
devices, and pods share ResourceClaims by name, five to a claim (``pod-with-claim-ref.yaml``).

scheduler_perf schedules its init pods; here, as for the other workloads, they are created
bound, so the harness does what the scheduler would have done for them: claim ``k`` is
allocated on node ``k mod N`` (device ``k div N``) and reserved for its five pods, and those
pods are bound to that node. The measured namespace's claims exist before the measured phase
starts, unallocated, as in scheduler_perf.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Final

from corral.k8s import JSON, Client
from corral_dev.dra import API_VERSION, Device, Version, device_class, device_json

DRIVER: Final = "test-driver.cdi.k8s.io"
DEVICE_CLASS: Final = "test-class"
PODS_PER_CLAIM: Final = 5
REQUEST: Final = "req-0"
_CREATE_THREADS: Final = 8


def claim_name(pod_name: str) -> str:
    """The claim pod ``<prefix>-<i>`` shares with the four pods next to it."""
    index = int(pod_name.rsplit("-", 1)[1])
    return f"claim-{index // PODS_PER_CLAIM}"


def claims_for(pods: int) -> int:
    return -(-pods // PODS_PER_CLAIM)


def _device(index: int, pci_roots: int = 2) -> Device:
    root = index % pci_roots
    attributes: dict[str, bool | int | str | Version] = {
        "driver": "xe",
        "driverVersion": Version("1.2.3"),
        "resource.k8s.io/pciRoot": str(root),
        "family": "Arc Pro B-Series",
        "health": "Healthy",
        "model": "B60",
        "pciAddress": f"0000:0{index}:00.0",
        "pciId": "0xe211",
        "pciRoot": f"0{root}",
        "resource.kubernetes.io/pciBusID": f"0000:0{index}:00.0",
        "resource.kubernetes.io/pciRoot": f"pci0000:0{root}",
        "sriov": True,
        "type": "gpu",
    }
    return Device(f"basic-device-{index}", attributes, {"memory": "24480Mi", "millicores": "1k"})


def resource_slice(node: str, devices: int) -> JSON:
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {"name": f"resourceslice-{node}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": f"resourceslice-{node}", "generation": 1, "resourceSliceCount": 1},
            "devices": [device_json(_device(i)) for i in range(devices)],
        },
    }


def claim(name: str, namespace: str) -> JSON:
    request = {"name": REQUEST, "exactly": {"deviceClassName": DEVICE_CLASS}}
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": [request]}},
    }


def claim_node(claim_index: int, nodes: Sequence[str]) -> str:
    """Where the harness allocates init claim ``claim_index`` (and binds its pods)."""
    return nodes[claim_index % len(nodes)]


def _allocation(claim_index: int, nodes: Sequence[str]) -> JSON:
    node = claim_node(claim_index, nodes)
    result = {
        "request": REQUEST,
        "driver": DRIVER,
        "pool": f"resourceslice-{node}",
        "device": f"basic-device-{claim_index // len(nodes)}",
    }
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    return {"devices": {"results": [result]}, "nodeSelector": {"nodeSelectorTerms": [term]}}


def _create_all(admin: Client, objects: Sequence[JSON]) -> None:
    with ThreadPoolExecutor(_CREATE_THREADS) as pool:
        list(pool.map(admin.create, objects))


def publish(admin: Client, nodes: Sequence[str], devices_per_node: int) -> None:
    """The DeviceClass and one slice per node."""
    admin.create(device_class(DEVICE_CLASS, f'device.driver == "{DRIVER}"'))
    _create_all(admin, [resource_slice(node, devices_per_node) for node in nodes])


def create_claims(admin: Client, namespace: str, count: int) -> None:
    _create_all(admin, [claim(f"claim-{k}", namespace) for k in range(count)])


def allocate_for_bound_pods(
    admin: Client, namespace: str, nodes: Sequence[str], devices_per_node: int
) -> None:
    """Allocate every claim the namespace's (already bound) pods use, reserved for them.
    Refuses a scene with more claims than devices: the harness must not invent a second use
    of a device."""
    users: dict[str, list[JSON]] = {}
    for pod in admin.list_items("v1", "Pod", namespace):
        for ref in pod["spec"].get("resourceClaims", ()):
            reference = {"resource": "pods", "name": pod["metadata"]["name"],
                         "uid": pod["metadata"]["uid"]}  # fmt: skip
            users.setdefault(ref["resourceClaimName"], []).append(reference)
    if len(users) > len(nodes) * devices_per_node:
        raise ValueError(
            f"{len(users)} init claims but {len(nodes) * devices_per_node} devices "
            f"({len(nodes)} nodes x {devices_per_node})"
        )

    def allocate(name: str) -> None:
        index = int(name.rsplit("-", 1)[1])
        current = admin.get(API_VERSION, "ResourceClaim", name, namespace)
        current["status"] = {
            "allocation": _allocation(index, nodes),
            "reservedFor": sorted(users[name], key=lambda r: str(r["name"])),
        }
        admin.request("PUT", admin.path_of(current) + "/status", body=current)

    with ThreadPoolExecutor(_CREATE_THREADS) as pool:
        list(pool.map(allocate, sorted(users)))
