"""DeviceTaintRules over the ``dra`` kind's scenario: rules taint a node's whole pool (driver and
pool), one device name in every pool, or one device, with the effects NoSchedule or None
(informational), and about a third of the claiming pods use a copy of their template whose
requests tolerate the taint (any effect, or only NoSchedule with the rule's value). Both
schedulers must keep tainted devices from the other requests alike.

No NoExecute rules: the schedulers treat them as NoSchedule (the allocator's unit tables), but
kube-controller-manager's device taint eviction honours only tolerations that name the
NoExecute effect (1.37's ``claimEvictionTime``), so it deleted bound copies whose claims
tolerated the taint with a bare ``Exists`` before the harness read the decision.
"""

from __future__ import annotations

import copy
import random
from typing import Final

from bench.conformance.generate import JSON, NAMESPACES, Scenario
from bench.conformance.kinds import Kind, Sizes, dra, register
from bench.conformance.kinds.dra import _compare, _settle
from bench.conformance.kinds.dra import _make as _dra_scenario

KEY: Final = "conformance.corral.dev/maintenance"
EFFECTS: Final = ("NoSchedule", "NoSchedule", "None")
TOLERATIONS: Final = (
    [{"key": KEY, "operator": "Exists"}],
    [{"key": KEY, "operator": "Equal", "value": "planned", "effect": "NoSchedule"}],
)


def _tolerant(devices: JSON, tolerations: list[JSON]) -> JSON:
    out = copy.deepcopy(devices)
    for request in out["requests"]:
        for body in [request["exactly"]] if "exactly" in request else request["firstAvailable"]:
            body["tolerations"] = copy.deepcopy(tolerations)
    return out


def _rule(name: str, selector: JSON, rng: random.Random) -> JSON:
    taint = {"key": KEY, "value": rng.choice(("planned", "broken")), "effect": rng.choice(EFFECTS)}
    return {
        "apiVersion": dra.API,
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {"deviceSelector": selector, "taint": taint},
    }


def _make(rng: random.Random, seed: int, sizes: Sizes) -> Scenario:
    scenario = _dra_scenario(rng, seed, sizes)
    pools = [o["spec"]["pool"]["name"] for o in scenario.objects if o["kind"] == "ResourceSlice"]
    rules = [
        _rule(f"pool-{i}", {"driver": dra.DRIVER, "pool": pool}, rng)
        for i, pool in enumerate(p for p in pools if rng.random() < 0.3)
    ]
    rules.append(_rule("every-gpu-1", {"device": "gpu-1"}, rng))
    if pools:
        rules.append(_rule("one", {"pool": rng.choice(pools), "device": "gpu-0"}, rng))
    scenario.objects.extend(rules)
    variants = {
        f"{name}-tolerant-{i}": _tolerant(devices, tolerations)
        for name, devices in dra.TEMPLATES.items()
        for i, tolerations in enumerate(TOLERATIONS)
    }
    for namespace in sorted(NAMESPACES):
        for name, devices in variants.items():
            scenario.objects.append({
                "apiVersion": dra.API, "kind": "ResourceClaimTemplate",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"spec": {"devices": devices}},
            })  # fmt: skip
    for pod in scenario.pods:
        for claim in pod["spec"].get("resourceClaims", ()):
            if rng.random() < 0.35:
                index = rng.randrange(len(TOLERATIONS))
                claim["resourceClaimTemplateName"] += f"-tolerant-{index}"
    return scenario


register(
    Kind(
        "dra-taints",
        "the dra kind's devices tainted by DeviceTaintRules (pool, device name, one device; "
        "NoSchedule, None), a third of the claims tolerating them",
        _make,
        Sizes(nodes=20, running=40, pods=60),
        compare=_compare,
        settle=_settle,
        replayable=False,
    )
)
