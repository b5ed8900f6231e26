"""Fake nodes managed by kwok: building them, parsing the CLI's node options, creating them.

A fake node carries the annotation kwok selects on, so kwok initialises it (conditions,
addresses), keeps it alive with a node Lease, and plays its kubelet: pods bound to it become
Running. Capacity and allocatable are set at creation (the API server keeps status on create).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

from corral.k8s import JSON, ApiError, Client

MANAGED_ANNOTATION: Final = "kwok.x-k8s.io/node"
FAKE_NODE_LABEL: Final = ("type", "kwok")
ZONE_LABEL: Final = "topology.kubernetes.io/zone"
REGION_LABEL: Final = "topology.kubernetes.io/region"
TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_TAINT = re.compile(r"^(?P<key>[^=:]+)(=(?P<value>[^:]*))?:(?P<effect>\w+)$")


class NodeSpecError(ValueError):
    """A malformed node option (label, taint); the message names the option and the value."""


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str

    def to_json(self) -> JSON:
        taint: JSON = {"key": self.key, "effect": self.effect}
        if self.value:
            taint["value"] = self.value
        return taint


def parse_labels(text: str) -> dict[str, str]:
    """``k=v,k2=v2`` -> mapping; an empty string is no labels."""
    labels: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise NodeSpecError(f"--labels: {item!r} is not key=value")
        labels[key] = value
    return labels


def parse_taints(text: str) -> list[Taint]:
    """``k=v:Effect,k:Effect`` -> taints, effects checked against the API's three."""
    taints = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        match = _TAINT.match(item)
        if not match:
            raise NodeSpecError(f"--taints: {item!r} is not key[=value]:Effect")
        if match["effect"] not in TAINT_EFFECTS:
            raise NodeSpecError(
                f"--taints: {item!r} has effect {match['effect']!r}; "
                f"allowed: {', '.join(TAINT_EFFECTS)}"
            )
        taints.append(Taint(match["key"], match["value"] or "", match["effect"]))
    return taints


def fake_node(
    name: str,
    *,
    cpu: str = "32",
    memory: str = "256Gi",
    pods: int = 110,
    labels: Mapping[str, str] | None = None,
    taints: Iterable[Taint] = (),
    extra_resources: Mapping[str, str] | None = None,
    ready: bool = False,
) -> JSON:
    """A kwok-managed node. ``ready``: created with a Ready condition already, for a lean
    control plane where no kwok reports one (the API server keeps status on create)."""
    resources = {"cpu": cpu, "memory": memory, "pods": str(pods), **(extra_resources or {})}
    node: JSON = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {MANAGED_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"},
            "labels": {
                FAKE_NODE_LABEL[0]: FAKE_NODE_LABEL[1],
                "kubernetes.io/hostname": name,
                # A kubelet registers its node with the beta pair as well (initialNode). Without
                # it kube-controller-manager's node lifecycle controller adds it to every node,
                # one PATCH each at 20 QPS, well into a benchmark's measured phase, and each
                # such label change requeues every pod DynamicResources rejected.
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "beta.kubernetes.io/arch": "amd64",
                **(labels or {}),
            },
        },
        "spec": {},
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }
    taint_list = [t.to_json() for t in taints]
    if taint_list:
        node["spec"]["taints"] = taint_list
    if ready:
        node["status"]["conditions"] = [
            {"type": "Ready", "status": "True", "reason": "KubeletReady",
             "message": "created Ready (lean control plane)"}
        ]  # fmt: skip
    return node


NOT_READY_TAINTS: Final = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def is_ready(node: Mapping[str, Any]) -> bool:
    conditions = node.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def is_schedulable(node: Mapping[str, Any]) -> bool:
    """Ready, and kube-controller-manager has lifted the not-ready taint it puts on every new
    node (it does so some seconds after Ready, node by node): only then can pods land."""
    taints = (node.get("spec") or {}).get("taints") or []
    return is_ready(node) and not any(t.get("key") in NOT_READY_TAINTS for t in taints)


def next_index(client: Client, prefix: str) -> int:
    """The first index after every existing ``<prefix>-<n>`` node."""
    pattern = re.compile(rf"^{re.escape(prefix)}-(\d+)$")
    taken = [
        int(m[1])
        for node in client.list_items("v1", "Node")
        if (m := pattern.match(node["metadata"]["name"]))
    ]
    return max(taken, default=-1) + 1


def add_nodes(
    client: Client,
    count: int,
    *,
    cpu: str = "32",
    memory: str = "256Gi",
    pods: int = 110,
    zones: int = 0,
    labels: Mapping[str, str] | None = None,
    taints: Iterable[Taint] = (),
    prefix: str = "kwok-node",
    wait: bool = True,
    timeout: float = 120.0,
    ready: bool = False,
) -> list[str]:
    """Create ``count`` fake nodes named ``<prefix>-<n>`` (numbering continues after existing
    ones); with ``zones`` > 0 they are spread round-robin over ``zone-0`` .. ``zone-<zones-1>``.
    Returns their names once all of them are Ready and schedulable (unless ``wait`` is false).
    ``ready``: created Ready (see :func:`fake_node`)."""
    if count < 0 or zones < 0:
        raise NodeSpecError("--count and --zones must not be negative")
    start = next_index(client, prefix)
    taint_list = list(taints)
    manifests = []
    for i in range(start, start + count):
        node_labels = dict(labels or {})
        if zones:
            node_labels.setdefault(ZONE_LABEL, f"zone-{i % zones}")
            node_labels.setdefault(REGION_LABEL, "region-0")
        manifests.append(
            fake_node(f"{prefix}-{i}", cpu=cpu, memory=memory, pods=pods,
                      labels=node_labels, taints=taint_list, ready=ready)
        )  # fmt: skip
    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(client.create, manifests))
    names = [m["metadata"]["name"] for m in manifests]
    if wait:
        wait_ready(client, names, timeout=timeout, schedulable=True)
    return names


def wait_ready(
    client: Client, names: Iterable[str], *, timeout: float = 120.0, schedulable: bool = False
) -> None:
    """Wait until every named node is Ready (and, with ``schedulable``, untainted by
    kube-controller-manager's not-ready taint)."""
    check = is_schedulable if schedulable else is_ready
    pending = set(names)
    deadline = time.monotonic() + timeout
    selector = f"{FAKE_NODE_LABEL[0]}={FAKE_NODE_LABEL[1]}"
    while pending:
        try:
            ready = {
                n["metadata"]["name"]
                for n in client.list_items("v1", "Node", label_selector=selector)
                if check(n)
            }
        except ApiError:
            ready = set()
        pending -= ready
        if not pending:
            return
        if time.monotonic() > deadline:
            sample = ", ".join(sorted(pending)[:5])
            raise TimeoutError(
                f"{len(pending)} node(s) not ready after {timeout:.0f}s "
                f"(e.g. {sample}); is kwok running? see logs/kwok.log"
            )
        time.sleep(0.25)
