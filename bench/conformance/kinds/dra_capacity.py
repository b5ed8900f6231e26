"""Consumable capacity: kwok nodes offering shareable devices (``allowMultipleAllocations``) with a
memory capacity under a request policy (a stepped range, valid values, or none) beside
dedicated ones; some shares already allocated to standalone claims (a ``shareID`` and their
``consumedCapacity``, written before the schedulers start); pods claiming capacity through
ResourceClaimTemplates: rounded-up requests, defaults, two shares of one device in one claim,
``All`` mode, matchAttribute, prioritized lists, a capacity only some devices have, and more
memory than any device has left.

As in the ``dra`` kind, each copy's claim is gone before the next scheduler decides
(:func:`~bench.conformance.kinds.dra._settle`), so both decide over the same shares: those of
the preallocated claims, which nothing releases.
"""

from __future__ import annotations

import random
from contextlib import ExitStack
from typing import Any, Final

from bench.conformance.generate import JSON, NAMESPACES, Scenario, build
from bench.conformance.kinds import Kind, Sizes, register
from bench.conformance.kinds.dra import _compare, _settle
from corral.testing import LocalCluster

DRIVER: Final = "vgpu.conformance.corral.dev"
API: Final = "resource.k8s.io/v1"
SHARED_CLASS: Final = "conf-vgpu"  # shareable devices only
ANY_CLASS: Final = "conf-vgpu-any"  # shareable or dedicated
HOLDERS_NAMESPACE: Final = sorted(NAMESPACES)[0]
POLICIES: Final[dict[str, JSON | None]] = {
    "stepped": {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}},
    "capped": {"default": "2Gi", "validRange": {"min": "2Gi", "step": "2Gi", "max": "8Gi"}},
    "values": {"default": "2Gi", "validValues": ["2Gi", "4Gi", "8Gi"]},
    "none": None,
}
SIZES: Final = ("8Gi", "16Gi")


def _mem(*amounts: str) -> JSON:
    return {"capacity": {"requests": {"memory": amounts[0]}}} if amounts else {}


def _exactly(cls: str, *selectors: str, **more: Any) -> JSON:
    out: JSON = {"deviceClassName": cls, **more}
    if selectors:
        out["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return out


def _one(amount: str | None, cls: str = SHARED_CLASS, **more: Any) -> JSON:
    body = _exactly(cls, **(_mem(amount) if amount else {}), **more)
    return {"requests": [{"name": "vgpu", "exactly": body}]}


NUMA = f"{DRIVER}/numa"
# Template name -> the claim's spec.devices.
TEMPLATES: Final[dict[str, JSON]] = {
    "small": _one("1500Mi"),
    "medium": _one("3Gi"),
    "large": _one("7Gi"),
    "default": _one(None),
    "any-2gi": _one("2Gi", ANY_CLASS),
    "cores": {"requests": [{"name": "vgpu", "exactly": _exactly(
        SHARED_CLASS, capacity={"requests": {"cores": "2"}})}]},
    "two-shares": {"requests": [
        {"name": "a", "exactly": _exactly(SHARED_CLASS, **_mem("2Gi"))},
        {"name": "b", "exactly": _exactly(SHARED_CLASS, **_mem("2Gi"))}],
        "constraints": [{"matchAttribute": NUMA}]},
    "all-shared": {"requests": [{"name": "vgpu", "exactly": _exactly(
        SHARED_CLASS, allocationMode="All", **_mem("1Gi"))}]},
    "prefer-big": {"requests": [{"name": "vgpu", "firstAvailable": [
        {"name": "big", **_exactly(SHARED_CLASS, **_mem("6Gi"))},
        {"name": "small", **_exactly(SHARED_CLASS, **_mem("1Gi"))}]}]},
    "too-big": _one("64Gi", ANY_CLASS),
}  # fmt: skip


def _devices(rng: random.Random) -> list[JSON]:
    out: list[JSON] = []
    for i in range(rng.choice((0, 1, 1, 2, 3))):
        size = rng.choice(SIZES)
        device: JSON = {"name": f"vgpu-{i}", "attributes": {"numa": {"int": rng.randint(0, 1)}}}
        if rng.random() < 0.25:
            device["capacity"] = {"memory": {"value": size}}  # dedicated
        else:
            memory: JSON = {"value": size}
            policy = POLICIES[rng.choice(sorted(POLICIES))]
            if policy is not None:
                memory["requestPolicy"] = policy
            device["allowMultipleAllocations"] = True
            device["capacity"] = {"memory": memory}
            if rng.random() < 0.5:
                device["capacity"]["cores"] = {"value": str(rng.choice((2, 4)))}
        out.append(device)
    return out


def _holder(rng: random.Random, index: int, node: str, device: JSON) -> JSON | None:
    """A standalone claim already holding a share of (or all of) ``device``."""
    multi = bool(device.get("allowMultipleAllocations"))
    result: JSON = {"request": "vgpu", "driver": DRIVER, "pool": node, "device": device["name"]}
    if multi:
        result["shareID"] = f"00000000-0000-4000-8000-{index:012x}"
        consumed = {"memory": rng.choice(("1Gi", "2Gi", "4Gi", "6Gi"))}
        if "cores" in device["capacity"]:
            consumed["cores"] = "1"
        result["consumedCapacity"] = consumed
    elif rng.random() < 0.5:
        return None
    on_node = {"key": "metadata.name", "operator": "In", "values": [node]}
    return {
        "apiVersion": API, "kind": "ResourceClaim",
        "metadata": {"name": f"holder-{index}", "namespace": HOLDERS_NAMESPACE},
        "spec": {"devices": {"requests": [
            {"name": "vgpu", "exactly": {"deviceClassName": ANY_CLASS}}]}},
        "status": {"allocation": {"devices": {"results": [result]},
                                  "nodeSelector": {"nodeSelectorTerms": [
                                      {"matchFields": [on_node]}]}}},
    }  # fmt: skip


def _objects(scenario: Scenario, rng: random.Random) -> list[JSON]:
    driver = f'device.driver == "{DRIVER}"'
    objects: list[JSON] = [
        {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": SHARED_CLASS},
         "spec": {"selectors": [{"cel": {"expression": f"{driver} && "
                                                       "device.allowMultipleAllocations"}}]}},
        {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": ANY_CLASS},
         "spec": {"selectors": [{"cel": {"expression": driver}}]}},
    ]  # fmt: skip
    holders = 0
    for node in scenario.nodes:
        devices = _devices(rng)
        if not devices:
            continue
        name = node["metadata"]["name"]
        objects.append({
            "apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": f"{name}-vgpus"},
            "spec": {"driver": DRIVER, "nodeName": name, "devices": devices,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1}},
        })  # fmt: skip
        for device in devices:
            for _ in range(rng.choice((0, 0, 1, 2))):
                holder = _holder(rng, holders, name, device)
                if holder is None:
                    break
                objects.append(holder)
                holders += 1
                if not device.get("allowMultipleAllocations"):
                    break
    for namespace in sorted(NAMESPACES):
        for template, claim in TEMPLATES.items():
            objects.append({
                "apiVersion": API, "kind": "ResourceClaimTemplate",
                "metadata": {"name": template, "namespace": namespace},
                "spec": {"spec": {"devices": claim}},
            })  # fmt: skip
    return objects


def _make(rng: random.Random, seed: int, sizes: Sizes) -> Scenario:
    scenario = build(rng, seed, nodes=sizes.nodes, running=sizes.running, pods=sizes.pods)
    scenario.objects = _objects(scenario, rng)
    for pod in scenario.pods:
        if rng.random() < 0.8:
            template = rng.choice(sorted(TEMPLATES))
            pod["spec"]["resourceClaims"] = [
                {"name": "vgpu", "resourceClaimTemplateName": template}
            ]
    return scenario


def _allocate_holders(stack: ExitStack, cluster: LocalCluster, scenario: Scenario) -> JSON:
    """Writes the holders' allocations (creation drops a status) before the schedulers start.
    Nothing releases them: the resourceclaim controller leaves a never-reserved claim alone."""
    admin = cluster.admin
    for obj in scenario.objects:
        if obj["kind"] != "ResourceClaim":
            continue
        meta = obj["metadata"]
        current = admin.get(API, "ResourceClaim", meta["name"], meta["namespace"])
        current["status"] = obj["status"]
        admin.request("PUT", f"{admin.path_of(current)}/status", body=current)
    return {}


register(
    Kind(
        "dra-capacity",
        "shareable devices with consumable capacity (request policies, preallocated shares, "
        "defaults, two shares per claim, All, prioritized lists)",
        _make,
        Sizes(nodes=12, running=20, pods=40),
        compare=_compare,
        services=_allocate_holders,
        settle=_settle,
        replayable=False,
    )
)
