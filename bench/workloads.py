"""Workloads modelled on upstream scheduler_perf (reference §7), sized by parameters.

Each workload has nodes (kwok, scheduler_perf's node template: 4 cpu, 32Gi, 110 pods), init
pods that set the scene and measured pods whose scheduling is timed. Differences from
scheduler_perf, kept identical for both schedulers:

- Init pods are created already bound (``spec.nodeName``, round-robin over the nodes) instead of
  being scheduled, which would cost minutes on a 2-core machine and is not measured anyway.
  Unschedulable's init pods are the exception: they must sit in the scheduler's queue.
- Pods go through the real admission chain, so priorities come from PriorityClasses rather
  than a literal ``spec.priority``.
- SchedulingWithMixedChurn recreates one node, one Service and one unschedulable
  high-priority pod every ``churn_interval`` seconds (scheduler_perf also churns PVCs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Final

from bench.dra_scene import claim_name
from bench.goals import API_BOUND, DEFAULT_GOALS, Goals

JSON = dict[str, Any]

INIT_NAMESPACE: Final = "sched-0"
MEASURED_NAMESPACE: Final = "sched-1"
ZONE: Final = "topology.kubernetes.io/zone"
HOSTNAME: Final = "kubernetes.io/hostname"
PRIORITY_CLASSES: Final = {"bench-low": 1, "bench-high": 1000}
# QueueingHintsChurn: nodes open one by one; the noise label changes but helps nobody.
OPEN_LABEL: Final = "bench.corral.dev/open"
NOISE_LABEL: Final = "bench.corral.dev/noise"


def pod(
    name: str,
    namespace: str,
    scheduler_name: str,
    *,
    cpu: str = "100m",
    memory: str = "500Mi",
    labels: dict[str, str] | None = None,
    priority_class: str | None = None,
    affinity: JSON | None = None,
    spread: list[JSON] | None = None,
) -> JSON:
    """scheduler_perf's pod-default (100m / 500Mi requests) with the given extras."""
    spec: JSON = {
        "schedulerName": scheduler_name,
        "terminationGracePeriodSeconds": 0,  # preemption victims go at once (kwok deletes them)
        "containers": [
            {
                "name": "pause",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": cpu, "memory": memory}},
            }
        ],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    if affinity:
        spec["affinity"] = affinity
    if spread:
        spec["topologySpreadConstraints"] = spread
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": spec,
    }


PodTemplate = Callable[[str, str, str], JSON]  # (name, namespace, scheduler name) -> pod


def default_pod(name: str, namespace: str, scheduler: str) -> JSON:
    return pod(name, namespace, scheduler)


def claim_pod(name: str, namespace: str, scheduler: str) -> JSON:
    """scheduler_perf's pod-with-claim-ref: no requests, one claim shared with four other pods."""
    obj = pod(name, namespace, scheduler)
    obj["spec"]["containers"][0]["resources"] = {"claims": [{"name": "resource"}]}
    obj["spec"]["resourceClaims"] = [{"name": "resource", "resourceClaimName": claim_name(name)}]
    return obj


def _pod_term(color: str, key: str) -> JSON:
    return {
        "labelSelector": {"matchLabels": {"color": color}},
        "topologyKey": key,
        "namespaces": [INIT_NAMESPACE, MEASURED_NAMESPACE],
    }


def anti_affinity_pod(name: str, namespace: str, scheduler: str) -> JSON:
    affinity = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [_pod_term("green", HOSTNAME)]
        }
    }
    return pod(name, namespace, scheduler, labels={"color": "green"}, affinity=affinity)


def affinity_pod(name: str, namespace: str, scheduler: str) -> JSON:
    affinity = {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_pod_term("blue", ZONE)]}
    }
    return pod(name, namespace, scheduler, labels={"color": "blue"}, affinity=affinity)


def node_affinity_pod(name: str, namespace: str, scheduler: str) -> JSON:
    term = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone1", "zone2"]}]}
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }
    return pod(name, namespace, scheduler, affinity=affinity)


def open_node_pod(name: str, namespace: str, scheduler: str) -> JSON:
    term = {"matchExpressions": [{"key": OPEN_LABEL, "operator": "In", "values": ["true"]}]}
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }
    return pod(name, namespace, scheduler, affinity=affinity)


def spreading_pod(name: str, namespace: str, scheduler: str) -> JSON:
    constraint = {
        "maxSkew": 5,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"color": "blue"}},
    }
    return pod(name, namespace, scheduler, labels={"color": "blue"}, spread=[constraint])


def low_priority_pod(name: str, namespace: str, scheduler: str) -> JSON:
    # Four fill a 4-cpu node to 3.6 cpu; a high-priority pod then needs three victims.
    return pod(name, namespace, scheduler, cpu="900m", priority_class="bench-low")


def high_priority_pod(name: str, namespace: str, scheduler: str) -> JSON:
    return pod(name, namespace, scheduler, cpu="3", priority_class="bench-high")


def large_cpu_pod(name: str, namespace: str, scheduler: str) -> JSON:
    # Larger than any node: stays unschedulable forever.
    return pod(name, namespace, scheduler, cpu="9", memory="500Mi")


def large_cpu_high_priority_pod(name: str, namespace: str, scheduler: str) -> JSON:
    return pod(name, namespace, scheduler, cpu="9", priority_class="bench-high")


@dataclass(frozen=True)
class Workload:
    name: str
    nodes: int
    init_pods: int
    measured_pods: int
    measured: PodTemplate
    init: PodTemplate | None = None
    init_bound: bool = True  # False: init pods are pending and must be tried by the scheduler
    node_labels: tuple[tuple[str, str], ...] = ()
    zones: int = 0  # > 0: nodes spread round-robin over zone-0..zone-<zones-1>
    churn_interval: float | None = None
    churn: str = "mixed"  # mixed: SchedulingWithMixedChurn's; relabel: QueueingHintsChurn's
    # > 0: a DRA workload (bench.dra_scene): a slice of this many devices per node, and claims
    # for the pods, init claims allocated on the nodes their bound pods are on.
    devices_per_node: int = 0
    description: str = ""
    # The bars its protocol run is judged against (scheduler_perf's ``threshold:``); they hold
    # for the workload's own sizes (default and ``--full``), not for sizes given on the command
    # line.
    goals: Goals = DEFAULT_GOALS
    # Scaling (``python -m bench scaling``): at most this many measured pods per node, where
    # the scene's capacity bounds them (one preemptor per node, one anti-affine pod per node,
    # the devices left for claims); None: unbounded.
    measured_per_node: float | None = None

    def sized(
        self, nodes: int | None, init_pods: int | None, measured_pods: int | None
    ) -> Workload:
        return replace(
            self,
            nodes=self.nodes if nodes is None else nodes,
            init_pods=self.init_pods if init_pods is None else init_pods,
            measured_pods=self.measured_pods if measured_pods is None else measured_pods,
        )

    def at_nodes(self, nodes: int, measured_pods: int | None = None) -> Workload:
        """This workload's scene on ``nodes`` nodes, for the scaling curve: the init pods keep
        their count per node (but Unschedulable's, a fixed queue, keep their count); the
        measured pods keep theirs, or ``measured_pods``, at most ``measured_per_node`` per
        node where the scene bounds them."""
        init = self.init_pods
        if self.init_bound:
            init = round(self.init_pods * nodes / self.nodes)
        measured = self.measured_pods if measured_pods is None else measured_pods
        if self.measured_per_node is not None:
            measured = min(measured, max(1, int(self.measured_per_node * nodes)))
        return replace(self, nodes=nodes, init_pods=init, measured_pods=measured)

    def params(self) -> JSON:
        return {
            "nodes": self.nodes,
            "init_pods": self.init_pods,
            "measured_pods": self.measured_pods,
            "churn_interval": self.churn_interval,
        }


_ZONE1 = ((ZONE, "zone1"),)

# Defaults fit a 2-core machine in a few minutes per workload and scheduler, with measured
# phases long enough (about 10-30 s) that a second's hiccup does not move the mean by 15%;
# FULL is scheduler_perf's 5000-node size (reference §7).
DEFAULT: Final[dict[str, Workload]] = {
    w.name: w
    for w in (
        Workload("SchedulingBasic", 500, 500, 3000, default_pod, default_pod,
                 description="default pods (100m/500Mi)", goals=API_BOUND),
        Workload("SchedulingPodAntiAffinity", 1000, 100, 800, anti_affinity_pod,
                 anti_affinity_pod, measured_per_node=0.8,
                 description="required anti-affinity on hostname, color=green"),
        Workload("SchedulingPodAffinity", 500, 500, 1500, affinity_pod, affinity_pod,
                 node_labels=_ZONE1, description="required affinity on zone, color=blue"),
        Workload("SchedulingNodeAffinity", 500, 500, 3000, node_affinity_pod,
                 node_affinity_pod, node_labels=_ZONE1, goals=API_BOUND,
                 description="required node affinity zone In [zone1, zone2]"),
        Workload("TopologySpreading", 500, 500, 2000, spreading_pod, default_pod, zones=3,
                 description="3 zones, DoNotSchedule maxSkew 5 on zone"),
        Workload("PreemptionBasic", 200, 800, 200, high_priority_pod, low_priority_pod,
                 measured_per_node=1.0,
                 description="4 low-priority pods (900m) per node, then 3-cpu high-priority pods"),
        Workload("Unschedulable", 500, 100, 3000, default_pod, large_cpu_pod, init_bound=False,
                 goals=API_BOUND,
                 description="unschedulable 9-cpu pods in the queue, then default pods"),
        Workload("SchedulingWithMixedChurn", 500, 0, 3000, default_pod, churn_interval=1.0,
                 goals=API_BOUND,
                 description="a node, a Service and an unschedulable pod recreated every second"),
        Workload("SchedulingWithResourceClaim", 200, 1000, 1000, claim_pod, claim_pod,
                 devices_per_node=2, measured_per_node=5.0,
                 description="2 devices per node; 5 pods share each ResourceClaim; init claims "
                 "use half the devices"),
    )
}  # fmt: skip

# Run only when named (``--workload``): not in the default set, the protocol or its documents.
# QueueingHintsChurn counts scheduling attempts (RunResult.attempts) more than it times: 40
# pods fit an open node, so the pods wait for about measured/40 rounds of churn. Its churn
# paces itself on the scheduler's attempts (bench.driver._RelabelChurn), not on the interval.
OPT_IN: Final[dict[str, Workload]] = {
    "QueueingHintsChurn": Workload(
        "QueueingHintsChurn", 20, 0, 200, open_node_pod, churn_interval=1.0, churn="relabel",
        description="pods wait for open nodes; round after round one node opens, then "
        "another's noise label changes, each once the attempts have settled",
    ),
}  # fmt: skip

FULL_SIZES: Final[dict[str, tuple[int, int, int]]] = {
    "SchedulingBasic": (5000, 1000, 10000),
    "SchedulingPodAntiAffinity": (5000, 1000, 2000),
    "SchedulingPodAffinity": (5000, 5000, 5000),
    "SchedulingNodeAffinity": (5000, 5000, 10000),
    "TopologySpreading": (5000, 5000, 5000),
    "PreemptionBasic": (1000, 4000, 1000),
    "Unschedulable": (5000, 200, 10000),
    "SchedulingWithMixedChurn": (5000, 0, 10000),
    "SchedulingWithResourceClaim": (500, 2500, 2500),  # scheduler_perf's 5000pods_500nodes
}


def workloads(full: bool = False) -> dict[str, Workload]:
    if not full:
        return dict(DEFAULT)
    return {name: w.sized(*FULL_SIZES[name]) for name, w in DEFAULT.items()}


def goals_of(name: str) -> Goals:
    """The bars of the workload named ``name`` (the default bars for a name not defined here,
    such as a test's)."""
    found = DEFAULT.get(name) or OPT_IN.get(name)
    return found.goals if found else DEFAULT_GOALS
