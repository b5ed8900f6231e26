"""Extended resources backed by DRA: a DeviceClass provides ``example.com/gpu`` as its extended
resource; part of the nodes advertise that resource in allocatable (device plugin style,
checked by NodeResourcesFit the classic way), others publish GPUs in ResourceSlices (allocated
by DynamicResources through the claim the scheduler creates), some both, some neither. Pods ask
for 1-4 GPUs or more than any node has, some through the class's implicit name
``deviceclass.resource.kubernetes.io/<class>``, some GPU pods with a claim for a TPU beside
(the user's claim and the scheduler's allocated together).

Upstream fails PreBind ("nil or empty request mappings, no update of pod <ns>/<pod>
ExtendedResourceClaimStatus") for a pod with a claim of its own placed on a node whose device
plugin serves all its GPUs; Corral does the same, and :func:`_compare` ignores the copy's name
(``-ref`` / ``-<i>``) in that message.

Each copy's claims (created at PreBind or by the resourceclaim controller, owned by the pod)
are gone before the next scheduler
decides (:func:`_settle`). NodeResourcesFit scores with its default resources (cpu, memory):
scoring DRA-backed resources listed in ``scoringStrategy.resources`` is not implemented.
"""

from __future__ import annotations

import random
import re
from dataclasses import replace
from typing import Final

from bench.conformance.compare import Decision, Trace, Verdict, compare
from bench.conformance.generate import JSON, NAMESPACES, Scenario, build
from bench.conformance.kinds import Kind, Sizes, register
from bench.conformance.kinds.dra import wait_owned_claims_gone
from corral.k8s import Client

DRIVER: Final = "gpu.extended.conformance.corral.dev"
API: Final = "resource.k8s.io/v1"
GPU: Final = "example.com/gpu"
GPU_CLASS: Final = "conf-ext-gpu"
TPU_CLASS: Final = "conf-ext-tpu"  # no extended name: pods use the implicit one
IMPLICIT_TPU: Final = f"deviceclass.resource.kubernetes.io/{TPU_CLASS}"
TPU_TEMPLATE: Final = "one-tpu"


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
    tpu = {"name": "tpu", "exactly": {"deviceClassName": TPU_CLASS}}
    for namespace in sorted(NAMESPACES):
        objects.append({
            "apiVersion": API, "kind": "ResourceClaimTemplate",
            "metadata": {"name": TPU_TEMPLATE, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [tpu]}}},
        })  # fmt: skip
    return objects


def _make(rng: random.Random, seed: int, sizes: Sizes) -> Scenario:
    scenario = build(rng, seed, nodes=sizes.nodes, running=sizes.running, pods=sizes.pods)
    scenario.objects = _objects(scenario, rng)
    for pod in scenario.pods:
        draw = rng.random()
        if draw < 0.6:
            _request(pod, GPU, rng.choice((1, 1, 1, 2, 4, 9)))  # 9: more than any node has
            if rng.random() < 0.2:
                claim = {"name": "tpu", "resourceClaimTemplateName": TPU_TEMPLATE}
                pod["spec"]["resourceClaims"] = [claim]
        elif draw < 0.7:
            _request(pod, IMPLICIT_TPU, rng.choice((1, 2)))
    return scenario


def _settle(admin: Client, pod: JSON) -> None:
    """Wait until the deleted copy's claims are gone (the garbage collector removes them with
    their pod), so the next scheduler sees its devices free. Unlike ``dra``'s, also for a pod
    without resourceClaims: its extended resources' claim is the scheduler's own."""
    wait_owned_claims_gone(admin, pod)


_COPY: Final = re.compile(r"(/pod-\d+)-(?:ref|\d+) ExtendedResourceClaimStatus")


def _compare(reference: Decision, trace: Trace, candidate: Decision) -> Verdict:
    def named(d: Decision) -> Decision:
        if d.message is None:
            return d
        return replace(d, message=_COPY.sub(r"\1 ExtendedResourceClaimStatus", d.message))

    return compare(named(reference), trace, named(candidate))


register(
    Kind(
        "extended-dra",
        "extended resources backed by DRA (explicit and implicit names) beside nodes "
        "advertising them",
        _make,
        Sizes(nodes=20, running=40, pods=60),
        compare=_compare,
        settle=_settle,
        replayable=False,
    )
)
