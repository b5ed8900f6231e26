"""Dynamic resource allocation: kwok nodes offering GPU-like devices through ResourceSlices,
pods claiming them through ResourceClaimTemplates: selectors on attributes, capacity and driver
versions, counts, All mode, a DeviceClass with its own selector, matchAttribute constraints,
prioritized lists, and more devices than any node has.

Each copy's claim is created by the resourceclaim controller and allocated by the scheduler
that binds the copy; :func:`_settle` waits until it is gone before the next scheduler decides,
so both decide over the same free devices. Bound pods of the state hold no devices (they are
created bound, their claims never allocated).

The pinned upstream may be 1.36, whose DynamicResources PostFilter adds the reason
"still not schedulable" (or "no new claims to deallocate"): Corral follows 1.37, which adds
none, so :func:`_compare` drops those two reasons from upstream's message first (a no-op
against 1.37).
"""

from __future__ import annotations

import random
import time
from typing import Any, Final

from bench.conformance.compare import Decision, Trace, Verdict, compare
from bench.conformance.generate import JSON, NAMESPACES, Scenario, build
from bench.conformance.kinds import Kind, Sizes, register
from corral.k8s import Client

DRIVER: Final = "gpu.conformance.corral.dev"
API: Final = "resource.k8s.io/v1"
GPU_CLASS: Final = "conf-gpu"
BIG_CLASS: Final = "conf-gpu-big"
MEMORY: Final = {"a100": ("40Gi", "80Gi"), "h100": ("80Gi",), "t4": ("16Gi",)}
VERSIONS: Final = ("1.2.0", "2.0.1", "2.3.0")
_DROPPED_1_36: Final = ("still not schedulable, ", "no new claims to deallocate, ")


def _attr(name: str) -> str:
    return f'device.attributes["{DRIVER}"].{name}'


def _exactly(cls: str, count: int = 1, *selectors: str, **more: Any) -> JSON:
    out: JSON = {"deviceClassName": cls, "count": count, **more}
    if selectors:
        out["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return out


MEM = f'device.capacity["{DRIVER}"].memory'
MODEL = _attr("model")


def _one(cls: str, count: int = 1, *selectors: str) -> JSON:
    return {"requests": [{"name": "gpu", "exactly": _exactly(cls, count, *selectors)}]}


def _all(selector: str) -> JSON:
    selectors = [{"cel": {"expression": selector}}]
    exactly = {"deviceClassName": GPU_CLASS, "allocationMode": "All", "selectors": selectors}
    return {"requests": [{"name": "gpu", "exactly": exactly}]}


# Template name -> the claim's spec.devices.
TEMPLATES: Final[dict[str, JSON]] = {
    "one-gpu": _one(GPU_CLASS),
    "t4": _one(GPU_CLASS, 1, f'{MODEL} == "t4"'),
    "two-a100": _one(GPU_CLASS, 2, f'{MODEL} == "a100"'),
    "big-class": _one(BIG_CLASS),
    "numa-pair": {**_one(GPU_CLASS, 2), "constraints": [{"matchAttribute": f"{DRIVER}/numa"}]},
    "all-h100": _all(f'{MODEL} == "h100"'),
    "new-driver": _one(GPU_CLASS, 1, f'{_attr("driverVersion")}.isGreaterThan(semver("2.0.0"))'),
    "prefer-h100": {"requests": [{"name": "gpu", "firstAvailable": [
        {"name": "h100s", **_exactly(GPU_CLASS, 2, f'{MODEL} == "h100"')},
        {"name": "large", **_exactly(GPU_CLASS, 1, f'{MEM}.compareTo(quantity("64Gi")) >= 0')},
        {"name": "any", **_exactly(GPU_CLASS)}]}]},
    "two-requests": {"requests": [
        {"name": "a", "exactly": _exactly(GPU_CLASS, 1, f'{MODEL} == "a100"')},
        {"name": "b", "exactly": _exactly(GPU_CLASS, 1, f'{MODEL} != "a100"')}]},
    "too-many": _one(GPU_CLASS, 9),
}  # fmt: skip


def _devices(rng: random.Random) -> list[JSON]:
    out = []
    for i in range(rng.choice((0, 1, 2, 2, 4, 8))):
        model = rng.choice(sorted(MEMORY))
        out.append({
            "name": f"gpu-{i}",
            "attributes": {"model": {"string": model}, "numa": {"int": rng.randint(0, 1)},
                           "driverVersion": {"version": rng.choice(VERSIONS)}},
            "capacity": {"memory": {"value": rng.choice(MEMORY[model])}},
        })  # fmt: skip
    return out


def _objects(scenario: Scenario, rng: random.Random) -> list[JSON]:
    driver = {"cel": {"expression": f'device.driver == "{DRIVER}"'}}
    big = {"cel": {"expression": f'{MEM}.isGreaterThan(quantity("32Gi"))'}}
    objects: list[JSON] = [
        {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": GPU_CLASS},
         "spec": {"selectors": [driver]}},
        {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": BIG_CLASS},
         "spec": {"selectors": [driver, big]}},
    ]  # fmt: skip
    for node in scenario.nodes:
        devices = _devices(rng)
        if not devices:
            continue
        name = node["metadata"]["name"]
        objects.append({
            "apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": name, "devices": devices,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1}},
        })  # fmt: skip
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
        if rng.random() < 0.75:
            template = rng.choice(sorted(TEMPLATES))
            pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
    return scenario


def _settle(admin: Client, pod: JSON) -> None:
    """Wait until the deleted copy's generated claims are gone (the garbage collector and the
    resourceclaim controller remove them), so the next scheduler sees its devices free."""
    if pod["spec"].get("resourceClaims"):
        wait_owned_claims_gone(admin, pod)


def wait_owned_claims_gone(admin: Client, pod: JSON, timeout: float = 60.0) -> None:
    """Until no ResourceClaim in the pod's namespace is owned by a pod of its name."""
    namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    deadline = time.monotonic() + timeout
    while True:
        claims = admin.list_items(API, "ResourceClaim", namespace)
        if not any(
            ref.get("kind") == "Pod" and ref.get("name") == name
            for c in claims
            for ref in c["metadata"].get("ownerReferences") or ()
        ):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"claims of {namespace}/{name} not gone {timeout:.0f}s after its deletion"
            )
        time.sleep(0.1)


def _compare(reference: Decision, trace: Trace, candidate: Decision) -> Verdict:
    message = reference.message
    if message is not None:
        for reason in _DROPPED_1_36:
            message = message.replace(reason, "")
    fixed = Decision(reference.node, reference.reason, message, reference.timed_out,
                     reference.nominated, list(reference.victims))  # fmt: skip
    return compare(fixed, trace, candidate)


register(
    Kind(
        "dra",
        "devices in ResourceSlices, claims from templates (selectors, counts, All, "
        "matchAttribute, prioritized lists)",
        _make,
        Sizes(nodes=20, running=40, pods=60),
        compare=_compare,
        settle=_settle,
        replayable=False,
    )
)
