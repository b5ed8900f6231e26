"""Extended resources backed by DRA: a DeviceClass provides ``example.com/gpu`` as its extended
resource; part of the nodes advertise that resource in allocatable (device plugin style,
checked by NodeResourcesFit the classic way), others publish GPUs in ResourceSlices (allocated
by DynamicResources through the claim the scheduler creates), some both, some neither. Pods ask
for 1-4 GPUs or more than any node has, some through the class's implicit name
``deviceclass.resource.kubernetes.io/<class>``.

Each copy's claim (created at PreBind, owned by the pod) is gone before the next scheduler
decides (:func:`_settle`). NodeResourcesFit scores with its default resources (cpu, memory):
scoring DRA-backed resources listed in ``scoringStrategy.resources`` is not implemented.
"""

from __future__ import annotations

import random
import time
from typing import Final

from bench.conformance.generate import JSON, Scenario, build
from bench.conformance.kinds import Kind, Sizes, register
from corral.k8s import Client

DRIVER: Final = "gpu.extended.conformance.corral.dev"
API: Final = "resource.k8s.io/v1"
GPU: Final = "example.com/gpu"
GPU_CLASS: Final = "conf-ext-gpu"
TPU_CLASS: Final = "conf-ext-tpu"  # no extended name: pods use the implicit one
IMPLICIT_TPU: Final = f"deviceclass.resource.kubernetes.io/{TPU_CLASS}"
ANNOTATION: Final = "resource.kubernetes.io/extended-resource-claim"


def _request(pod: JSON, resource: str, amount: int) -> None:
    resources = pod["spec"]["containers"][0]["resources"]
    resources["requests"][resource] = str(amount)
    resources.setdefault("limits", {})[resource] = str(amount)  # extended: limits = requests


def _devices(kind: str, count: int) -> list[JSON]:
    return [{"name": f"{kind}-{i}", "attributes": {"kind": {"string": kind}}} for i in range(count)]


def _objects(scenario: Scenario, rng: random.Random) -> list[JSON]:
    def selector(kind: str) -> JSON:
        expression = (
            f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].kind == "{kind}"'
        )
        return {"cel": {"expression": expression}}

    objects: list[JSON] = [
        {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": GPU_CLASS},
         "spec": {"selectors": [selector("gpu")], "extendedResourceName": GPU}},
        {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": TPU_CLASS},
         "spec": {"selectors": [selector("tpu")]}},
    ]  # fmt: skip
    for node in scenario.nodes:
        name = node["metadata"]["name"]
        where = rng.choice(("plugin", "dra", "dra", "both", "none"))
        if where in ("plugin", "both"):
            amount = str(rng.choice((1, 2, 4)))
            node["status"]["capacity"][GPU] = node["status"]["allocatable"][GPU] = amount
        if where in ("dra", "both"):
            devices = _devices("gpu", rng.choice((1, 2, 4))) + _devices("tpu", rng.choice((0, 2)))
            objects.append({
                "apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": f"{name}-ext"},
                "spec": {"driver": DRIVER, "nodeName": name, "devices": devices,
                         "pool": {"name": name, "generation": 1, "resourceSliceCount": 1}},
            })  # fmt: skip
    return objects


def _make(rng: random.Random, seed: int, sizes: Sizes) -> Scenario:
    scenario = build(rng, seed, nodes=sizes.nodes, running=sizes.running, pods=sizes.pods)
    scenario.objects = _objects(scenario, rng)
    for pod in scenario.pods:
        draw = rng.random()
        if draw < 0.6:
            _request(pod, GPU, rng.choice((1, 1, 1, 2, 4, 9)))  # 9: more than any node has
        elif draw < 0.7:
            _request(pod, IMPLICIT_TPU, rng.choice((1, 2)))
    return scenario


def _settle(admin: Client, pod: JSON) -> None:
    """Wait until the deleted copy's claim for extended resources is gone (the garbage
    collector removes it with its pod), so the next scheduler sees its devices free."""
    namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    deadline = time.monotonic() + 60
    while True:
        claims = admin.list_items(API, "ResourceClaim", namespace)
        if not any(
            (c["metadata"].get("annotations") or {}).get(ANNOTATION) == "true"
            and any(r.get("name") == name for r in c["metadata"].get("ownerReferences") or ())
            for c in claims
        ):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"claim of {namespace}/{name} not gone 60s after its deletion")
        time.sleep(0.1)


register(
    Kind(
        "extended-dra",
        "extended resources backed by DRA (explicit and implicit names) beside nodes "
        "advertising them",
        _make,
        Sizes(nodes=20, running=40, pods=60),
        settle=_settle,
        replayable=False,
    )
)
