"""The engine over an in-memory cluster: no API server, same framework, same decisions.

Nodes and running pods go into a real :class:`Cache`, and the other kinds plugins read
(Namespaces, Services, PVCs, PDBs, ... :data:`WATCHED_KINDS`) into the same
:class:`ObjectStore` the informers fill; each pod to place runs the real scheduling and binding
cycles of its profile (Bind only records the node; the volume bindings PreBind writes are
completed by :mod:`.simulated_storage`, as the PV controller and provisioners would). As
admission would, a pod's ``priorityClassName`` is resolved into ``spec.priority`` and
``spec.preemptionPolicy`` from the PriorityClasses given. A placed pod is then added to
the cache as bound, so later pods see it, exactly as the informer would confirm it. Ties are
broken by a seeded RNG, so a simulation is repeatable.

``explain`` re-evaluates every Filter plugin on every node (not only up to the first failure)
and reports the weighted scores of the feasible nodes, for the ``--explain`` table.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.objects import ADDED, WATCHED_KINDS, ObjectStore
from corral.scheduler.backend.records import MalformedObjectError, node_from_json, pod_from_json
from corral.scheduler.engine.frameworks import (
    EngineConfig,
    build_frameworks,
    defaulted,
    engine_registry,
    load_extenders,
)
from corral.scheduler.engine.simulated_storage import SimulatedStorage
from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.runtime.schedule_one import binding_cycle, scheduling_cycle
from corral.scheduler.framework.runtime.schedule_pod import PodScheduler
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.types import PodInfo

PASS = "ok"


@dataclass
class Explanation:
    nodes: list[str]
    filters: dict[str, dict[str, str]] = field(default_factory=dict)  # plugin -> node -> verdict
    scores: dict[str, dict[str, int]] = field(default_factory=dict)  # plugin -> node -> weighted
    weights: dict[str, int] = field(default_factory=dict)

    def total(self, node: str) -> int:
        return sum(by_node.get(node, 0) for by_node in self.scores.values())


@dataclass
class Placement:
    pod: str
    node: str | None
    message: str = ""
    evaluated: int = 0
    feasible: int = 0
    explanation: Explanation | None = None


class _Recorder:
    """The simulated PodBinder: Bind succeeds and remembers where the pod went."""

    def __init__(self) -> None:
        self.bound: dict[str, str] = {}

    def __call__(self, pod: PodInfo, node_name: str) -> None:
        self.bound[pod.uid] = node_name


class Simulator:
    def __init__(self, engine: EngineConfig, *, seed: int = 0) -> None:
        self.binder = _Recorder()
        self.objects = ObjectStore()
        self.storage = SimulatedStorage(self.objects)
        frameworks = build_frameworks(
            engine, engine_registry(), self.binder, objects=self.objects,
            object_updater=self.storage,
        )  # fmt: skip
        pct = defaulted(engine.config.percentage_of_nodes_to_score, "percentageOfNodesToScore")
        rng = random.Random(seed)
        extenders = load_extenders(engine)
        self.schedulers = {
            name: PodScheduler(fwk, percentage_of_nodes_to_score=pct, rng=rng, extenders=extenders)
            for name, fwk in frameworks.items()
        }
        self.default_profile = engine.profiles[0].scheduler_name
        self.cache = Cache()
        self._uids = 0

    def _admit(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """What the API server would add: a distinct uid (hand-written pods have none), the
        default namespace, and the priority and preemptionPolicy of ``priorityClassName``."""
        if not isinstance(raw.get("metadata") or {}, Mapping):
            raise MalformedObjectError(f"{raw.get('kind')}: metadata must be an object")
        if not isinstance(raw.get("spec") or {}, Mapping):
            raise MalformedObjectError(f"{raw.get('kind')}: spec must be an object")
        meta = dict(raw.get("metadata") or {})
        if not meta.get("uid"):
            self._uids += 1
            meta["uid"] = f"simulated-{self._uids}"
        meta.setdefault("namespace", "default")
        spec = raw.get("spec") or {}
        class_name = spec.get("priorityClassName")
        if spec.get("priority") is None and class_name:
            priority_class = self.objects.get(listers.PRIORITY_CLASS, "", str(class_name))
            if priority_class is not None:
                spec = {**spec, "priority": int(priority_class.get("value") or 0)}
                policy = priority_class.get("preemptionPolicy")
                if policy and not spec.get("preemptionPolicy"):
                    spec["preemptionPolicy"] = policy
        return {**raw, "metadata": meta, "spec": spec}

    def add_object(self, raw: Mapping[str, Any]) -> bool:
        """Keep an object of a kind plugins read; False (ignored) for any other kind."""
        kind = str(raw.get("kind") or "")
        if kind not in WATCHED_KINDS:
            return False
        self.objects.apply(kind, ADDED, raw)
        return True

    def add_node(self, raw: Mapping[str, Any]) -> None:
        self.cache.add_node(node_from_json(raw))

    def add_running_pod(self, raw: Mapping[str, Any]) -> None:
        self.cache.add_pod(pod_from_json(self._admit(raw)))

    def schedule(self, raw: Mapping[str, Any], *, explain: bool = False) -> Placement:
        """Raises :class:`MalformedObjectError` for a pod whose fields plugins cannot read: the
        API server would have refused it (the engine fails such a pod as a plugin bug)."""
        try:
            return self._schedule(raw, explain=explain)
        except MalformedObjectError:
            raise
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
            meta = raw.get("metadata")
            name = meta.get("name") if isinstance(meta, Mapping) else None
            what = " ".join(f"{type(exc).__name__}: {exc}".split())
            raise MalformedObjectError(
                f"Pod {name or '<unnamed>'}: a field plugins read has the wrong shape ({what})"
            ) from None

    def _schedule(self, raw: Mapping[str, Any], *, explain: bool) -> Placement:
        raw = self._admit(raw)
        spec = raw.get("spec") or {}
        if not spec.get("schedulerName"):
            raw = {**raw, "spec": {**spec, "schedulerName": self.default_profile}}
        pod = pod_from_json(raw)
        scheduler = self.schedulers.get(pod.scheduler_name)
        if scheduler is None:
            known = ", ".join(sorted(self.schedulers))
            return Placement(pod.key, None, f"no profile named {pod.scheduler_name!r} ({known})")
        snapshot = self.cache.snapshot()
        explanation = self._explain(scheduler, pod, snapshot) if explain else None
        state = CycleState()
        outcome = scheduling_cycle(scheduler, state, pod, snapshot, self.cache)
        if not outcome.ok or outcome.result is None:
            fit = outcome.fit_error
            status = outcome.status
            message = fit.message() if fit is not None else (status.message if status else "")
            return Placement(pod.key, None, message, explanation=explanation)
        result = outcome.result
        if explanation is not None:
            for plugin, scores in result.plugin_scores.items():
                explanation.scores[plugin] = {
                    snapshot.names[int(slot)]: int(score)
                    for slot, score in zip(result.slots, scores, strict=True)
                }
        failed = binding_cycle(scheduler, state, pod, result.suggested_host, self.cache)
        if failed is not None:
            return Placement(pod.key, None, failed.message, explanation=explanation)
        self.cache.add_pod(replace(pod, node_name=result.suggested_host))
        return Placement(pod.key, result.suggested_host, "", result.evaluated_nodes,
                         result.feasible_nodes, explanation)  # fmt: skip

    def _explain(self, scheduler: PodScheduler, pod: PodInfo, snapshot: Snapshot) -> Explanation:
        fwk = scheduler.fwk
        names = [snapshot.names[int(slot)] for slot in snapshot.order]
        out = Explanation(names, weights={s.name: s.weight for s in fwk.score_steps})
        state = CycleState()
        _result, status, _plugins = fwk.run_pre_filter(state, pod, snapshot)
        if status is not None and not status.is_success:
            out.filters["PreFilter"] = dict.fromkeys(names, status.message)
            return out
        for step in fwk.filter_steps:
            verdicts: dict[str, str] = {}
            verdict = None if step.batch is None else step.batch(state, pod, snapshot)
            if verdict is not None:
                for slot in snapshot.order.tolist():
                    if verdict.passed[slot]:
                        verdicts[snapshot.names[slot]] = PASS
                    else:
                        code = 0 if verdict.reasons is None else int(verdict.reasons[slot])
                        verdicts[snapshot.names[slot]] = verdict.describe(code).message
            else:
                assert step.single is not None
                for slot in snapshot.order.tolist():
                    s = step.single(state, pod, snapshot.node_info(slot))
                    verdicts[snapshot.names[slot]] = (
                        PASS if s is None or s.is_success else s.message
                    )
            out.filters[step.name] = verdicts
        return out
