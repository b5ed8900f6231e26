"""Typed shapes of the Kubernetes object parts the engine reads: pods, nodes and the selectors
and affinity terms in them (``k8s.io/api`` core/v1 and meta/v1 field names).

Contract: these are views of raw JSON as the API server sends it, not validated values. Every
key is optional (``total=False``): an absent field and a JSON ``null`` are Go's zero value, so
readers keep their ``x.get(key) or default`` form. Only the fields the engine reads are named; a
raw object keeps every other field (``PodInfo.raw``). The shapes themselves are checked against
the pinned Go types by :mod:`corral.scheduler.backend.shapes` where objects enter; here they only
give the readers their types. Raw JSON whose kind is not modelled stays :data:`RawObject`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

# One object of any kind, read-only, as decoded from JSON.
RawObject = Mapping[str, Any]

# --- meta/v1 -----------------------------------------------------------------------------------


class LabelSelectorRequirement(TypedDict, total=False):
    key: str
    operator: str
    values: Sequence[str] | None


class LabelSelector(TypedDict, total=False):
    matchLabels: Mapping[str, str] | None
    matchExpressions: Sequence[LabelSelectorRequirement] | None


class ObjectMeta(TypedDict, total=False):
    name: str
    namespace: str
    uid: str
    resourceVersion: str
    labels: Mapping[str, str] | None
    annotations: Mapping[str, str] | None
    deletionTimestamp: str | None


# --- core/v1: node selection -------------------------------------------------------------------


class NodeSelectorRequirement(TypedDict, total=False):
    key: str
    operator: str
    values: Sequence[str] | None


class NodeSelectorTerm(TypedDict, total=False):
    matchExpressions: Sequence[NodeSelectorRequirement] | None
    matchFields: Sequence[NodeSelectorRequirement] | None


class NodeSelector(TypedDict, total=False):
    nodeSelectorTerms: Sequence[NodeSelectorTerm] | None


class PreferredSchedulingTerm(TypedDict, total=False):
    weight: int
    preference: NodeSelectorTerm | None


class NodeAffinity(TypedDict, total=False):
    requiredDuringSchedulingIgnoredDuringExecution: NodeSelector | None
    preferredDuringSchedulingIgnoredDuringExecution: Sequence[PreferredSchedulingTerm] | None


# --- core/v1: pod affinity ---------------------------------------------------------------------


class PodAffinityTerm(TypedDict, total=False):
    labelSelector: LabelSelector | None
    namespaces: Sequence[str] | None
    namespaceSelector: LabelSelector | None
    topologyKey: str


class WeightedPodAffinityTerm(TypedDict, total=False):
    weight: int
    podAffinityTerm: PodAffinityTerm


class PodAffinityRules(TypedDict, total=False):
    requiredDuringSchedulingIgnoredDuringExecution: Sequence[PodAffinityTerm] | None
    preferredDuringSchedulingIgnoredDuringExecution: Sequence[WeightedPodAffinityTerm] | None


class Affinity(TypedDict, total=False):
    nodeAffinity: NodeAffinity | None
    podAffinity: PodAffinityRules | None
    podAntiAffinity: PodAffinityRules | None


# --- core/v1: pods -----------------------------------------------------------------------------


class PodCondition(TypedDict, total=False):
    type: str
    status: str
    reason: str
    message: str
    lastProbeTime: str | None
    lastTransitionTime: str | None


class PodStatus(TypedDict, total=False):
    phase: str
    conditions: Sequence[PodCondition] | None
    nominatedNodeName: str
    startTime: str | None


class PodSpec(TypedDict, total=False):
    nodeName: str
    schedulerName: str
    priority: int | None
    priorityClassName: str
    preemptionPolicy: str | None
    nodeSelector: Mapping[str, str] | None
    affinity: Affinity | None
    tolerations: Sequence[RawObject] | None
    schedulingGates: Sequence[RawObject] | None
    containers: Sequence[RawObject] | None
    initContainers: Sequence[RawObject] | None
    volumes: Sequence[RawObject] | None
    resourceClaims: Sequence[RawObject] | None


class Pod(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: PodSpec | None
    status: PodStatus | None
