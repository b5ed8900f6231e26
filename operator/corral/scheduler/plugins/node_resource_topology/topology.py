"""What NodeResourceTopologyMatch reads of a NodeResourceTopology object
(``topology.node.k8s.io/v1alpha2``, one per node, named as the node): its NUMA zones and the
kubelet's TopologyManager configuration (SP ``pluginhelpers.go`` createNUMANodeList,
``nodeconfig/topologymanager.go``).

- A NUMA zone is a zone of type ``Node`` named ``node-<id>`` (id 0..63; SP's maxNUMAId); its
  resources are the zones' ``available`` amounts, its costs the distances to other NUMA zones
  by id. Other zones (sockets, cores) and badly named ones are left out.
- TopologyManager: scope ``container``, policy ``none``, maxNUMANodes 8 unless the object says
  otherwise: first the deprecated ``topologyPolicies[0]``, then the attributes
  ``topologyManagerPolicy``, ``topologyManagerScope``, ``topologyManagerMaxNUMANodes`` (invalid
  values ignored; the maximum must be > 1 and is capped at 1024).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from corral.scheduler.config import quantity

ZONE_TYPE_NUMA_NODE: Final = "Node"
NUMA_NAME_PREFIX: Final = "node-"
MAX_NUMA_ID: Final = 64  # ids at or above are not NUMA nodes SP can index

SCOPE_CONTAINER: Final = "container"
SCOPE_POD: Final = "pod"
POLICY_NONE: Final = "none"
POLICY_BEST_EFFORT: Final = "best-effort"
POLICY_RESTRICTED: Final = "restricted"
POLICY_SINGLE_NUMA_NODE: Final = "single-numa-node"
DEFAULT_MAX_NUMA_NODES: Final = 8
LIMIT_NUMA_NODES: Final = 1024

ATTRIBUTE_SCOPE: Final = "topologyManagerScope"
ATTRIBUTE_POLICY: Final = "topologyManagerPolicy"
ATTRIBUTE_MAX_NUMA_NODES: Final = "topologyManagerMaxNUMANodes"

_SCOPES: Final = (SCOPE_CONTAINER, SCOPE_POD)
_POLICIES: Final = (POLICY_NONE, POLICY_BEST_EFFORT, POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE)
# The deprecated topologyPolicies values (noderesourcetopology-api v1alpha2): (policy, scope).
LEGACY_POLICIES: Final[Mapping[str, tuple[str, str]]] = {
    "SingleNUMANodePodLevel": (POLICY_SINGLE_NUMA_NODE, SCOPE_POD),
    "SingleNUMANodeContainerLevel": (POLICY_SINGLE_NUMA_NODE, SCOPE_CONTAINER),
    "BestEffortPodLevel": (POLICY_BEST_EFFORT, SCOPE_POD),
    "BestEffortContainerLevel": (POLICY_BEST_EFFORT, SCOPE_CONTAINER),
    "RestrictedPodLevel": (POLICY_RESTRICTED, SCOPE_POD),
    "RestrictedContainerLevel": (POLICY_RESTRICTED, SCOPE_CONTAINER),
}


@dataclass(slots=True)
class NUMANode:
    """One NUMA zone: its id, what is available on it (mutable: the filter and LeastNUMANodes
    subtract container by container), its distances to other NUMA zones by id."""

    numa_id: int
    resources: dict[str, Fraction]
    costs: dict[int, int] = field(default_factory=dict)

    def copy(self) -> NUMANode:
        return NUMANode(self.numa_id, dict(self.resources), self.costs)


@dataclass(frozen=True, slots=True)
class TopologyManager:
    scope: str = SCOPE_CONTAINER
    policy: str = POLICY_NONE
    max_numa_nodes: int = DEFAULT_MAX_NUMA_NODES


def numa_id(name: object) -> int | None:
    """``node-<id>`` → id (noderesourcetopology-api ``numanode.NameToID``), else None."""
    if not isinstance(name, str) or not name.startswith(NUMA_NAME_PREFIX):
        return None
    value = _atoi(name[len(NUMA_NAME_PREFIX) :])
    return value if value is not None and value >= 0 else None


def numa_nodes(nrt: Mapping[str, Any]) -> list[NUMANode]:
    """The NUMA zones of an NRT object, in its order."""
    nodes: list[NUMANode] = []
    zones = nrt.get("zones")
    for zone in zones if isinstance(zones, Sequence) else ():
        if not isinstance(zone, Mapping) or zone.get("type") != ZONE_TYPE_NUMA_NODE:
            continue
        nid = numa_id(zone.get("name"))
        if nid is None or nid >= MAX_NUMA_ID:
            continue
        nodes.append(NUMANode(nid, _resources(zone.get("resources")), _costs(zone.get("costs"))))
    return nodes


def _resources(raw: object) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for info in raw if isinstance(raw, Sequence) else ():
        if not isinstance(info, Mapping) or not isinstance(info.get("name"), str):
            continue
        try:
            out[info["name"]] = quantity.parse(info.get("available", 0))
        except (quantity.QuantityError, ValueError):
            continue  # the CRD's schema refuses it; nothing to count
    return out


def _costs(raw: object) -> dict[int, int]:
    out: dict[int, int] = {}
    for cost in raw if isinstance(raw, Sequence) else ():
        if not isinstance(cost, Mapping):
            continue
        nid, value = numa_id(cost.get("name")), cost.get("value")
        if nid is None or nid > MAX_NUMA_ID or not isinstance(value, int):
            continue
        out[nid] = value
    return out


def topology_manager(nrt: Mapping[str, Any]) -> TopologyManager:
    scope, policy, max_nodes = SCOPE_CONTAINER, POLICY_NONE, DEFAULT_MAX_NUMA_NODES
    policies = nrt.get("topologyPolicies")
    if isinstance(policies, Sequence) and not isinstance(policies, str) and policies:
        legacy = LEGACY_POLICIES.get(str(policies[0]))
        if legacy is not None:
            policy, scope = legacy
    attributes = nrt.get("attributes")
    for attr in attributes if isinstance(attributes, Sequence) else ():
        if not isinstance(attr, Mapping):
            continue
        name, value = attr.get("name"), attr.get("value")
        if name == ATTRIBUTE_SCOPE and value in _SCOPES:
            scope = str(value)
        elif name == ATTRIBUTE_POLICY and value in _POLICIES:
            policy = str(value)
        elif name == ATTRIBUTE_MAX_NUMA_NODES:
            count = _atoi(value)
            if count is not None and count > 1:
                max_nodes = min(count, LIMIT_NUMA_NODES)
    return TopologyManager(scope, policy, max_nodes)


_INT64: Final = 2**63


def _atoi(value: object) -> int | None:
    """Go's ``strconv.Atoi``: an optional sign and decimal digits, within int64 (a longer
    string is out of range there, and past CPython's digit limit for int())."""
    if not isinstance(value, str):
        return None
    sign = value[:1] in ("+", "-")
    digits = value[sign:]
    if not (digits.isdigit() and digits.isascii()) or len(digits) > 19:
        return None
    number = int(value)
    return number if -_INT64 <= number < _INT64 else None
