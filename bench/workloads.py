"""Workloads modelled on upstream scheduler_perf (kubernetes test/integration/scheduler_perf),
sized by parameters.

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
- The pod-group workloads (scheduler_perf's podgroup/gangscheduling, podgroup/basicscheduling
  and workload_preemption's GangPreemptionBasic) run the API server and both schedulers with
  ``GenericWorkload=true``; their PodGroups are created before the measured phase (as
  scheduler_perf's createPodGroups waits for the informers), named ``gang-<index>``, each
  measured pod ``pod-<i>`` in ``gang-<i // pods_per_group>``. GangPreemptionBasic's init pods
  are bound, 10 per node (scheduler_perf schedules them; its host ports spread them the same).
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
PRIORITY_CLASSES: Final = {"bench-low": 1, "bench-high": 1000, "bench-gang": 8888888}
GENERIC_WORKLOAD: Final = {"GenericWorkload": True}
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


def gang_pod(name: str, namespace: str, scheduler: str) -> JSON:
    """scheduler_perf's gang-pod / basic-pod: 100m / 100Mi; its group is set by the driver."""
    return pod(name, namespace, scheduler, memory="100Mi")


def gang_preemptor_pod(name: str, namespace: str, scheduler: str) -> JSON:
    """workload_preemption's gang-pod at GangPreemptionBasic's 3970m: a whole node's room once
    every low-priority pod on it is gone."""
    return pod(name, namespace, scheduler, cpu="3970m", memory="100Mi", priority_class="bench-gang")


def gang_victim_pod(name: str, namespace: str, scheduler: str) -> JSON:
    """workload_preemption's pod-low-priority (40m / 100Mi, priority 0 there, 1 here)."""
    return pod(name, namespace, scheduler, cpu="40m", memory="100Mi", priority_class="bench-low")


def group_index(name: str, pods_per_group: int) -> int:
    """The group of measured pod ``pod-<i>``."""
    return int(name.rsplit("-", 1)[1]) // pods_per_group


def pod_group(name: str, namespace: str, policy: str, pods_per_group: int,
              priority_class: str | None) -> JSON:  # fmt: skip
    """scheduler_perf's podgroup.yaml: a gang of ``pods_per_group`` or the basic policy."""
    spec: JSON = {
        "schedulingPolicy": (
            {"gang": {"minCount": pods_per_group}} if policy == "gang" else {"basic": {}}
        )
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}  # fmt: skip


SP_GROUP_LABEL: Final = "scheduling.x-k8s.io/pod-group"  # scheduler-plugins' pod label
SP_SCHEDULING: Final = "scheduling.x-k8s.io/v1alpha1"
# The profile both schedulers would run for a Coscheduling workload: SP's plugin in place of
# PrioritySort at every point it implements (SP's Helm chart renders it through multiPoint).
COSCHEDULING_PROFILE: Final[JSON] = {
    "plugins": {
        "multiPoint": {"enabled": [{"name": "Coscheduling"}],
                       "disabled": [{"name": "PrioritySort"}]},
    },
}  # fmt: skip


def sp_gangs(measured_pods: int, sizes: tuple[int, ...]) -> list[int]:
    """The gang sizes, in order, the measured pods fall into: ``sizes`` over and over, the last
    gang cut to the pods left."""
    out: list[int] = []
    left, i = measured_pods, 0
    while left > 0:
        size = min(sizes[i % len(sizes)], left)
        out.append(size)
        left -= size
        i += 1
    return out


def sp_pod_group(name: str, namespace: str, min_member: int) -> JSON:
    """scheduler-plugins' PodGroup (``scheduling.x-k8s.io/v1alpha1``) of ``min_member``."""
    return {"apiVersion": SP_SCHEDULING, "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minMember": min_member}}  # fmt: skip


# The profile of a CapacityScheduling workload: SP's plugin, its own preemption in place of
# DefaultPreemption (as SP's README configures it).
CAPACITY_PROFILE: Final[JSON] = {
    "plugins": {
        "multiPoint": {"enabled": [{"name": "CapacityScheduling"}],
                       "disabled": [{"name": "DefaultPreemption"}]},
    },
}  # fmt: skip
POD_MILLI_CPU: Final = 100  # pod()'s default requests
POD_MEMORY_MI: Final = 500


def elastic_quota(namespace: str, min_pods: int, max_pods: int) -> JSON:
    """scheduler-plugins' ElasticQuota as room for ``min_pods`` and ``max_pods`` default pods,
    in cpu and memory both (a resource a present ``max`` does not name may not be used)."""

    def room(pods: int) -> dict[str, str]:
        return {"cpu": f"{pods * POD_MILLI_CPU}m", "memory": f"{pods * POD_MEMORY_MI}Mi"}

    return {"apiVersion": SP_SCHEDULING, "kind": "ElasticQuota",
            "metadata": {"name": "quota", "namespace": namespace},
            "spec": {"min": room(min_pods), "max": room(max_pods)}}  # fmt: skip


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
    # > 0: a pod-group workload: the measured pods in groups of this many (gate GenericWorkload
    # on the API server and both schedulers), each group's PodGroup of ``group_policy``.
    pods_per_group: int = 0
    group_policy: str = "gang"  # or "basic"
    group_priority_class: str | None = None
    # Non-empty: a Coscheduling workload (scheduler-plugins' PodGroups, no gate): the measured
    # pods in gangs of these sizes, over and over (``sp_gangs``), each labelled into its
    # PodGroup ``sp-gang-<index>`` of that minMember; the profile enables Coscheduling.
    sp_gang_sizes: tuple[int, ...] = ()
    # A CapacityScheduling workload: an ElasticQuota for the init and the measured namespace
    # (``elastic_quotas``); the profile enables CapacityScheduling.
    sp_quotas: bool = False
    # Only Corral runs it: upstream kube-scheduler has no such plugin (its rival,
    # scheduler-plugins' own image, cannot be built here).
    corral_only: bool = False
    description: str = ""
    # The bars its protocol run is judged against (scheduler_perf's ``threshold:``); they hold
    # for the workload's own sizes (default and ``--full``), not for sizes given on the command
    # line.
    goals: Goals = DEFAULT_GOALS
    # Scaling (``python -m bench scaling``): at most this many measured pods per node, where
    # the scene's capacity bounds them (one preemptor per node, one anti-affine pod per node,
    # the devices left for claims); None: unbounded.
    measured_per_node: float | None = None

    @property
    def feature_gates(self) -> dict[str, bool]:
        return dict(GENERIC_WORKLOAD) if self.pods_per_group else {}

    def pod_groups(self, namespace: str) -> list[JSON]:
        """The measured pods' PodGroups (none for a plain workload). A last group left short by
        a ``--pods`` that is no multiple of the group size is a gang of what it has (a minCount
        above its members would never be placed and the run would never end)."""
        size = self.pods_per_group
        if not size:
            return []
        count = -(-self.measured_pods // size)
        return [
            pod_group(f"gang-{g}", namespace, self.group_policy,
                      min(size, self.measured_pods - g * size), self.group_priority_class)
            for g in range(count)
        ]  # fmt: skip

    def sp_pod_groups(self, namespace: str) -> list[JSON]:
        """The measured pods' scheduler-plugins PodGroups (none unless ``sp_gang_sizes``)."""
        if not self.sp_gang_sizes:
            return []
        sizes = sp_gangs(self.measured_pods, self.sp_gang_sizes)
        return [sp_pod_group(f"sp-gang-{g}", namespace, n) for g, n in enumerate(sizes)]

    def _sp_gang_of(self, name: str) -> int:
        index = int(name.rsplit("-", 1)[1])
        for g, size in enumerate(sp_gangs(self.measured_pods, self.sp_gang_sizes)):
            if index < size:
                return g
            index -= size
        raise ValueError(f"{name}: past the last of {self.measured_pods} measured pods")

    def elastic_quotas(self, init_namespace: str, measured_namespace: str) -> list[JSON]:
        """A ``sp_quotas`` workload's quotas, so that every pod passes both of PreFilter's rules
        and only by borrowing: the measured namespace is guaranteed half its pods' requests and may
        use all of it; the init namespace is guaranteed its bound pods' and the other half,
        which it leaves unused (the sum of mins is exactly what all pods request)."""
        if not self.sp_quotas:
            return []
        measured, init = self.measured_pods, self.init_pods
        half = measured // 2
        return [
            elastic_quota(measured_namespace, half, measured),
            elastic_quota(init_namespace, init + measured - half, init + measured),
        ]

    @property
    def profile_extra(self) -> JSON:
        """What the workload adds to the scheduler's profile (plugins, pluginConfig)."""
        if self.sp_quotas:
            return dict(CAPACITY_PROFILE)
        return dict(COSCHEDULING_PROFILE) if self.sp_gang_sizes else {}

    def measured_pod(self, name: str, namespace: str, scheduler: str) -> JSON:
        obj = self.measured(name, namespace, scheduler)
        if self.sp_gang_sizes:
            obj["metadata"]["labels"][SP_GROUP_LABEL] = f"sp-gang-{self._sp_gang_of(name)}"
        if self.pods_per_group:
            group = group_index(name, self.pods_per_group)
            obj["spec"]["schedulingGroup"] = {"podGroupName": f"gang-{group}"}
            if self.group_priority_class:
                obj["spec"]["priorityClassName"] = self.group_priority_class
        return obj

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
            **({"pods_per_group": self.pods_per_group, "group_policy": self.group_policy}
               if self.pods_per_group else {}),
            **({"sp_gang_sizes": list(self.sp_gang_sizes)} if self.sp_gang_sizes else {}),
            **({"sp_quotas": True} if self.sp_quotas else {}),
        }  # fmt: skip


_ZONE1 = ((ZONE, "zone1"),)

# Defaults fit a 2-core machine in a few minutes per workload and scheduler, with measured
# phases long enough (about 10-30 s) that a second's hiccup does not move the mean by 15%;
# FULL is scheduler_perf's 5000-node size (its SchedulingBasic 5000Nodes workloads).
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

# The pod-group workloads (issue 39): in the protocol when named (``--workload``), at both
# sizes, but not in the default set (``make bench-protocol`` without ``--workload``, the
# scaling curve): they need GenericWorkload on the control plane and both schedulers and have
# no figures yet. GangPreemptionBasic's init pods are 10 per node; its scaling would need them
# per node (``measured_per_node`` and init alike), which ``at_nodes`` does not do.
POD_GROUPS: Final[dict[str, Workload]] = {
    w.name: w
    for w in (
        Workload("GangScheduling", 500, 0, 3000, gang_pod, pods_per_group=3,
                 description="gangs of 3 (minCount 3), pods 100m/100Mi (GenericWorkload)"),
        Workload("PodGroupBasicScheduling", 500, 0, 3000, gang_pod, pods_per_group=3,
                 group_policy="basic",
                 description="basic PodGroups of 3, pods 100m/100Mi (GenericWorkload)"),
        Workload("GangPreemptionBasic", 100, 1000, 100, gang_preemptor_pod, gang_victim_pod,
                 pods_per_group=10, group_priority_class="bench-gang",
                 description="10 low-priority 40m pods per node; gangs of 10 pods of 3970m "
                 "preempt whole nodes (GenericWorkload)"),
    )
}  # fmt: skip

# scheduler-plugins' plugins (issue 40), run when named and by Corral alone (``corral_only``):
# gangs of 4 to 64 (4, 8, 16, 32, 64 over and over: 124 pods a round) over 1,000 nodes.
SP_PLUGINS: Final[dict[str, Workload]] = {
    w.name: w
    for w in (
        Workload("Coscheduling", 1000, 0, 1240, gang_pod, sp_gang_sizes=(4, 8, 16, 32, 64),
                 corral_only=True,
                 description="scheduler-plugins' PodGroups: gangs of 4, 8, 16, 32 and 64 "
                 "(minMember = size), pods 100m/100Mi; Corral only"),
        Workload("CapacityScheduling", 1000, 1000, 2000, default_pod, init=default_pod,
                 sp_quotas=True, corral_only=True,
                 description="scheduler-plugins' ElasticQuotas: the measured namespace "
                 "borrows half its pods' requests from the init namespace's unused min; pods "
                 "100m/500Mi; Corral only"),
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
    "GangScheduling": (5000, 0, 9000),  # 5000Nodes_3000Gangs_9000Pods
    "PodGroupBasicScheduling": (5000, 0, 9000),  # 5000Nodes_3000Groups_9000Pods
    # 100Nodes_1PreemptorGang_100Pods_Evicting_1000InitPods (scheduler_perf's largest is 100
    # nodes; the full size is its one gang of 100, FULL_GROUPS).
    "GangPreemptionBasic": (100, 1000, 100),
    "Coscheduling": (5000, 0, 9920),  # 80 rounds of 4+8+16+32+64
    "CapacityScheduling": (5000, 5000, 10000),
}
# Group sizes that change with the full size.
FULL_GROUPS: Final[dict[str, int]] = {"GangPreemptionBasic": 100}


def workloads(full: bool = False, *, named: bool = False) -> dict[str, Workload]:
    """The default set at the default or full size; ``named``: with the pod-group workloads,
    which run only when named."""
    chosen = {**DEFAULT, **POD_GROUPS, **SP_PLUGINS} if named else dict(DEFAULT)
    if not full:
        return chosen
    out = {name: w.sized(*FULL_SIZES[name]) for name, w in chosen.items()}
    for name, size in FULL_GROUPS.items():
        if name in out:
            out[name] = replace(out[name], pods_per_group=size)
    return out


def goals_of(name: str) -> Goals:
    """The bars of the workload named ``name`` (the default bars for a name not defined here,
    such as a test's)."""
    found = DEFAULT.get(name) or POD_GROUPS.get(name) or SP_PLUGINS.get(name) or OPT_IN.get(name)
    return found.goals if found else DEFAULT_GOALS
