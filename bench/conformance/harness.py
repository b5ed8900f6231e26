"""Run a scenario in lockstep through upstream kube-scheduler and one or more candidates.

One local control plane holds the scenario's state (nodes and running pods, created already
bound). Upstream kube-scheduler (the *reference*, ``--vmodule=schedule_one=10`` so it logs every
feasible node's score) and each candidate run side by side, every one with its own profile
name but otherwise the same KubeSchedulerConfiguration (``percentageOfNodesToScore: 100``).
For each pod of the scenario, in order:

1. a copy named ``<pod>-ref`` goes to the reference; its decision (bound node, or the
   PodScheduled=False reason and message) is read through the API and its scores from the log;
   the copy is then force-deleted;
2. the same for each candidate (``<pod>-<i>``), from the very same state;
3. if the reference placed the pod, the pod itself is created bound to the reference's node, so
   every scheduler sees the same next state whatever the candidates did.

Each scheduler has one pod watch, so it sees a deletion or a new bound pod before the next copy
it is asked to schedule: no sleeping is needed between steps.
A candidate named ``upstream`` is a second kube-scheduler: the self-check that proves the
method (ties, log parsing, messages) before any Corral decision is judged. A candidate named
``simulate`` is no process: ``corral simulate``'s engine decides offline from a snapshot of the
cluster at its turn, with the configuration the others run (``bench.conformance.simulated``).

The scenario's kind (``bench.conformance.kinds``) adds its services and their configuration,
its comparison, and for preemption the victims' bookkeeping: each decision's victims are
created again before the next scheduler decides, and upstream's are deleted before step 3.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bench.cluster import make_schedulable
from bench.conformance import groups, kinds, simulated
from bench.conformance.compare import Decision, LogParser, Trace, Verdict
from bench.conformance.generate import JSON, Scenario
from bench.schedulers import SchedulerConfig, SchedulerProcess, gate_args
from corral.k8s import ApiError, Client
from corral.scheduler.plugins.volume_binding.matching import ANN_BIND_COMPLETED
from corral.testing import LocalCluster

REFERENCE: Final = "conf-reference"
# Every feasible node's score (schedule_one.go) and, for pod groups, each member's attempt.
REFERENCE_VMODULE: Final = "schedule_one=10,schedule_one_podgroup=4"
DECISION_TIMEOUT: Final = 30.0
# Events are recorded asynchronously by both schedulers; a preemptor's is there within seconds.
EVENT_TIMEOUT: Final = 10.0
# The PV controller marks a pre-bound claim bind-completed within seconds; on a loaded machine
# it has taken longer than the first decisions.
CLAIMS_BOUND_TIMEOUT: Final = 180.0
POLL: Final = 0.02


class SchedulerNotReadyError(RuntimeError):
    """A scheduler did not bind its canary pod; ``exited`` when its process had died."""

    def __init__(self, message: str, *, kind: str, exited: bool) -> None:
        super().__init__(message)
        self.kind = kind
        self.exited = exited


@dataclass
class PodResult:
    index: int
    pod: str
    reference: Decision
    top: list[str]
    top_score: int | None
    candidates: dict[str, Decision] = field(default_factory=dict)
    verdicts: dict[str, Verdict] = field(default_factory=dict)

    def to_json(self) -> JSON:
        return {
            "index": self.index,
            "pod": self.pod,
            "reference": self.reference.__dict__,
            "top": self.top,
            "top_score": self.top_score,
            "candidates": {k: v.__dict__ for k, v in self.candidates.items()},
            "verdicts": {k: v.to_json() for k, v in self.verdicts.items()},
        }


@dataclass
class Report:
    seed: int
    candidates: list[str]
    results: list[PodResult] = field(default_factory=list)
    kind: str = "basic"

    def agreement(self, candidate: str) -> tuple[int, int]:
        """(agreeing, judged); the agreeing include those within upstream's race."""
        judged = [r.verdicts[candidate] for r in self.results if candidate in r.verdicts]
        return sum(v.agree for v in judged), len(judged)

    def within_race(self, candidate: str) -> int:
        """The agreeing verdicts that agree only within upstream's race (groups.RACE)."""
        judged = [r.verdicts[candidate] for r in self.results if candidate in r.verdicts]
        return sum(1 for v in judged if v.kind == groups.RACE)

    def disagreements(self, candidate: str) -> list[PodResult]:
        return [r for r in self.results if not r.verdicts[candidate].agree]

    def counts(self) -> dict[str, int]:
        placed = sum(1 for r in self.results if r.reference.node)
        ties = sum(1 for r in self.results if len(r.top) > 1)
        return {"pods": len(self.results), "placed": placed,
                "unschedulable": len(self.results) - placed, "tied": ties}  # fmt: skip

    def to_json(self) -> JSON:
        return {
            "seed": self.seed,
            "kind": self.kind,
            "candidates": self.candidates,
            "counts": self.counts(),
            "agreement": {c: self.agreement(c) for c in self.candidates},
            "results": [r.to_json() for r in self.results],
        }


def _decision(
    client: Client,
    namespace: str,
    name: str,
    timeout: float,
    process: SchedulerProcess,
    *,
    through_preemption: bool = False,
) -> Decision:
    """The pod's outcome. ``through_preemption``: an unschedulable pod with a nominated node is
    followed until it is bound (its victims gone), the nominated node kept in the decision."""
    path = f"/api/v1/namespaces/{namespace}/pods/{name}"
    deadline = time.monotonic() + timeout
    nominated = None
    while time.monotonic() < deadline and process.alive():
        pod = client.request("GET", path)
        node = pod.get("spec", {}).get("nodeName")
        if node:
            return Decision(node=node, nominated=nominated)
        status = pod.get("status", {})
        for condition in status.get("conditions") or []:
            if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
                nominated = nominated or status.get("nominatedNodeName")
                if not (through_preemption and nominated):
                    return Decision(reason=condition.get("reason"),
                                    message=condition.get("message"))  # fmt: skip
        time.sleep(POLL)
    return Decision(timed_out=True, nominated=nominated)


def _first_failure(client: Client, namespace: str, name: str) -> str | None:
    """The message of the pod's first FailedScheduling Event (a preemptor's, once it is bound:
    its condition is gone), or None when it was bound at the first attempt."""
    params = {"fieldSelector": f"involvedObject.name={name},reason=FailedScheduling"}
    deadline = time.monotonic() + EVENT_TIMEOUT
    while True:
        events = (
            client.request("GET", f"/api/v1/namespaces/{namespace}/events", params=params).get(
                "items"
            )
            or []
        )
        if events or time.monotonic() > deadline:
            break
        time.sleep(POLL)
    events.sort(key=lambda e: e.get("eventTime") or e.get("firstTimestamp") or "")
    return events[0].get("message") if events else None


def _force_delete(client: Client, namespace: str, name: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods/{name}"
    body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
    try:
        client.request("DELETE", path, body=body)
    except ApiError as exc:
        if not exc.not_found:
            raise
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            client.request("GET", path)
        except ApiError as exc:
            if exc.not_found:
                return
            raise
        time.sleep(POLL)
    raise TimeoutError(f"pod {namespace}/{name} not gone 30s after a forced delete")


class _ReferenceLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.parser = LogParser()

    def trace(self, key: str, expect_bound: str | None, timeout: float = 10.0) -> Trace:
        """The pod's trace; when it was bound, wait until the log shows the binding too."""
        deadline = time.monotonic() + timeout
        while True:
            with self.path.open("rb") as log:
                log.seek(self.offset)
                chunk = log.read()
            self.offset += len(chunk)
            self.parser.feed(chunk.decode(errors="replace"))
            trace = self.parser.traces.get(key, Trace())
            if expect_bound is None or trace.bound == expect_bound:
                return trace
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"reference log has no binding of {key} to {expect_bound} after "
                    f"{timeout:.0f}s (is it running with --vmodule=schedule_one=10?)"
                )
            time.sleep(POLL)


def setup_state(cluster: LocalCluster, scenario: Scenario) -> None:
    admin = cluster.admin
    for obj in scenario.cluster_objects():
        admin.create(obj)
    for node in scenario.nodes:
        admin.create(node)
    make_schedulable(admin, [n["metadata"]["name"] for n in scenario.nodes])
    for obj in scenario.objects:
        admin.create(obj)
    for pod in scenario.running:
        admin.create(pod)
    _wait_claims_bound(admin, scenario.objects)


def _wait_claims_bound(admin: Client, objects: list[JSON]) -> None:
    """Wait until the PV controller has marked every claim created with a volume name
    bind-completed. Until then both schedulers' VolumeBinding counts such a claim as an unbound
    Immediate one (upstream ``isPVCFullyBound``), so a decision would depend on how far the
    controller had got, not on the scenario."""
    pending = {
        (o["metadata"]["namespace"], o["metadata"]["name"])
        for o in objects
        if o.get("kind") == "PersistentVolumeClaim" and o["spec"].get("volumeName")
    }
    deadline = time.monotonic() + CLAIMS_BOUND_TIMEOUT
    while pending:
        for namespace, name in sorted(pending):
            claim = admin.request(
                "GET", f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}"
            )
            if ANN_BIND_COMPLETED in (claim["metadata"].get("annotations") or {}):
                pending.discard((namespace, name))
        if pending and time.monotonic() > deadline:
            names = ", ".join(f"{ns}/{n}" for ns, n in sorted(pending))
            raise RuntimeError(
                f"claims not bound by the PV controller after {CLAIMS_BOUND_TIMEOUT:.0f}s: {names}"
            )
        if pending:
            time.sleep(0.2)


def _canary(admin: Client, scheduler_name: str, process: SchedulerProcess) -> None:
    name = f"canary-{scheduler_name}"
    admin.create({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulerName": scheduler_name, "terminationGracePeriodSeconds": 0,
                 "tolerations": [{"operator": "Exists"}],
                 "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"requests": {"cpu": "1m"}}}]},
    })  # fmt: skip
    decision = _decision(admin, "default", name, 180.0, process)
    if not decision.node:
        raise SchedulerNotReadyError(
            f"{scheduler_name} ({process.kind}) did not bind its canary pod: "
            f"{decision.describe()}; log tail:\n{process.log_tail(10)}",
            kind=process.kind,
            exited=not process.alive(),
        )
    _force_delete(admin, "default", name)


def run(
    cluster: LocalCluster,
    scenario: Scenario,
    candidates: list[str],
    *,
    disabled_plugins: tuple[str, ...] = (),
    say: Callable[[str], None] = lambda _: None,
) -> Report:
    """Schedule every pod of ``scenario`` by the reference and each candidate (see module doc).
    The cluster must be fresh (no nodes); the schedulers and the kind's services are started
    and stopped here."""
    kind = kinds.get(scenario.kind)
    setup_state(cluster, scenario)
    processes: list[SchedulerProcess] = []
    names = {kind: f"conf-{i}-{kind}" for i, kind in enumerate(candidates)}
    with ExitStack() as services:
        config_extra = kind.services(services, cluster, scenario) if kind.services else {}

        def config(name: str) -> Path:
            return SchedulerConfig(
                scheduler_name=name,
                percentage_of_nodes_to_score=100,
                disabled_plugins=disabled_plugins,
                profile_extra=scenario.profile,
                config_extra=config_extra,
            ).write(cluster, f"{name}.yaml")

        try:
            gates = gate_args(dict(kind.feature_gates))
            reference = SchedulerProcess.start(
                "upstream", cluster, config(REFERENCE),
                extra_args=["--v=2", f"--vmodule={REFERENCE_VMODULE}", *gates],
                log_name="conf-reference",
            )  # fmt: skip
            processes.append(reference)
            by_candidate: dict[str, SchedulerProcess | Path] = {}
            for candidate, name in names.items():
                if candidate == simulated.SIMULATE:
                    by_candidate[candidate] = config(name)
                    continue
                process = SchedulerProcess.start(
                    candidate, cluster, config(name), extra_args=gates, log_name=name
                )
                processes.append(process)
                by_candidate[candidate] = process
            admin = cluster.admin
            for scheduler_name, process in zip(
                [REFERENCE, *(n for c, n in names.items() if c != simulated.SIMULATE)],
                processes,
                strict=True,
            ):
                _canary(admin, scheduler_name, process)
            lockstep = _Lockstep(admin, _ReferenceLog(reference.log), kind, names, reference,
                                 by_candidate, {_key(p): p for p in scenario.running})  # fmt: skip
            report = Report(scenario.seed, list(candidates), kind=scenario.kind)
            if kind.grouped:
                rounds = groups.units(scenario)
            else:
                rounds = ((i, None, [p]) for i, p in enumerate(scenario.pods))
            for index, template, pods in rounds:
                if template is None:
                    results = [lockstep.one(index, pods[0])]
                else:
                    results = lockstep.group(index, template, pods)
                report.results.extend(results)
                for result in results:
                    bad = [k for k, v in result.verdicts.items() if not v.agree]
                    say(f"{scenario.kind} seed {scenario.seed} pod {result.index}: "
                        f"{result.reference.describe()[:80]}"
                        + (f"  DISAGREE {bad}" if bad else ""))  # fmt: skip
                for process in processes:
                    if not process.alive():
                        raise RuntimeError(f"{process.kind} exited:\n{process.log_tail()}")
            return report
        finally:
            for process in processes:
                process.stop()


def _copy(original: JSON, name: str, scheduler_name: str) -> JSON:
    pod = copy.deepcopy(original)
    pod["metadata"]["name"] = name
    pod["spec"]["schedulerName"] = scheduler_name
    return pod


def _key(pod: JSON) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


@dataclass
class _Lockstep:
    """The scenario's bound pods as the harness created them, and each pod's lockstep round."""

    admin: Client
    log: _ReferenceLog
    kind: kinds.Kind
    names: dict[str, str]  # candidate -> scheduler name
    reference: SchedulerProcess
    # candidate -> its process, or for ``simulate`` the configuration it decides with
    candidates: dict[str, SchedulerProcess | Path]
    state: dict[str, JSON]  # "namespace/name" -> the bound pod

    def _decide(self, pod: JSON, process: SchedulerProcess) -> Decision:
        """Create ``pod``, read its decision; on preemption kinds, record the state's pods it
        deleted as victims and create them again. The copy is deleted before returning."""
        namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        self.admin.create(pod)
        decision = _decision(self.admin, namespace, name, DECISION_TIMEOUT, process,
                             through_preemption=self.kind.preemption)  # fmt: skip
        _force_delete(self.admin, namespace, name)
        if self.kind.settle is not None:
            self.kind.settle(self.admin, pod)
        if self.kind.preemption:
            decision.victims = sorted(self._missing())
            if decision.victims:
                decision.message = _first_failure(self.admin, namespace, name)
            if decision.victims and not decision.nominated:
                # Bound before a poll saw its nominatedNodeName (the API server clears it on
                # binding): upstream preempts on one node, so the victims' node is the one.
                nodes = {self.state[v]["spec"]["nodeName"] for v in decision.victims}
                decision.nominated = ",".join(sorted(nodes))
            self._restore(decision.victims)
        return decision

    def _missing(self) -> set[str]:
        present = {
            _key(p)
            for p in self.admin.request("GET", "/api/v1/pods").get("items") or []
            if not p["metadata"].get("deletionTimestamp")
        }
        return set(self.state) - present

    def one(self, index: int, original: JSON) -> PodResult:
        namespace, base = original["metadata"]["namespace"], original["metadata"]["name"]
        ref_name = f"{base}-ref"
        reference = self._decide(_copy(original, ref_name, REFERENCE), self.reference)
        trace = self.log.trace(f"{namespace}/{ref_name}", reference.node)
        top = sorted(trace.top()) if reference.node else []
        if reference.node and reference.node not in (top or [reference.node]):
            raise RuntimeError(f"{ref_name}: bound to {reference.node}, not in its own top {top}")
        result = PodResult(index, base, reference, top,
                           max(trace.final.values()) if trace.final else None)  # fmt: skip
        for i, (candidate, scheduler_name) in enumerate(self.names.items()):
            copy_ = _copy(original, f"{base}-{i}", scheduler_name)
            runs = self.candidates[candidate]
            decision = (
                simulated.decide(self.admin, runs, copy_, gates=self.kind.feature_gates)
                if isinstance(runs, Path) else self._decide(copy_, runs)
            )  # fmt: skip
            result.candidates[candidate] = decision
            result.verdicts[candidate] = self.kind.compare(reference, trace, decision)
        # The next state is upstream's: its victims gone, the pod bound where it put it.
        for victim in reference.victims:
            namespace_, name = victim.split("/", 1)
            _force_delete(self.admin, namespace_, name)
            del self.state[victim]
        if reference.node:
            state = copy.deepcopy(original)
            state["spec"]["nodeName"] = reference.node
            state["spec"]["schedulerName"] = REFERENCE
            self.admin.create(state)
            self.state[_key(state)] = state
        return result

    # --- pod groups (Kind.grouped; bench.conformance.groups) ------------------------------

    def _decide_group(
        self,
        template: JSON,
        members: list[JSON],
        suffix: str,
        scheduler: str,
        process: SchedulerProcess,
    ) -> list[Decision]:
        """One scheduler's decisions for the group's members, in the members' order; the
        copies are deleted and the victims created again before returning."""
        group, pods = groups.copies(template, members, suffix, scheduler)
        namespace, unit = group["metadata"]["namespace"], group["metadata"]["name"]
        self.admin.create(group)
        for pod in pods:
            self.admin.create(pod)
        for pod in pods:
            self.admin.request(
                "PATCH", f"/api/v1/namespaces/{namespace}/pods/{pod['metadata']['name']}",
                body={"spec": {"schedulingGates": None}}, content_type=groups.MERGE_PATCH,
            )  # fmt: skip
        names = [p["metadata"]["name"] for p in pods]

        def read() -> dict[str, tuple[Decision | None, str | None]]:
            items = self.admin.list_items("v1", "Pod", namespace,
                                          label_selector=f"{groups.UNIT_LABEL}={unit}")  # fmt: skip
            return {p["metadata"]["name"]: groups.member(p) for p in items}

        seen = groups.observe(read, names, waiting=groups.expects_waiting(template),
                              alive=process.alive, timeout=DECISION_TIMEOUT)  # fmt: skip
        condition = groups.condition(self.admin.get(groups.GROUP_API, "PodGroup", unit,
                                                    namespace))  # fmt: skip
        victims = sorted(self._missing())
        decisions = []
        for name in names:
            decision = seen[name]
            decision.group = condition
            decision.victims = victims
            if victims:
                decision.message = _first_failure(self.admin, namespace, name)
            decisions.append(decision)
        for name in names:
            _force_delete(self.admin, namespace, name)
        _delete_group(self.admin, namespace, unit)
        self._restore(victims)
        return decisions

    def _restore(self, victims: list[str]) -> None:
        for victim in victims:
            namespace, name = victim.split("/", 1)
            _force_delete(self.admin, namespace, name)  # when still terminating
            self.admin.create(self.state[victim])

    def group(self, first: int, template: JSON, members: list[JSON]) -> list[PodResult]:
        """One PodGroup's round (bench.conformance.groups): a result per member."""
        decided = self._decide_group(template, members, "ref", REFERENCE, self.reference)
        references: list[tuple[Decision, Trace]] = []
        results: list[PodResult] = []
        for offset, (original, decision) in enumerate(zip(members, decided, strict=True)):
            namespace, base = original["metadata"]["namespace"], original["metadata"]["name"]
            trace = self.log.trace(f"{namespace}/{base}-ref", decision.node)
            references.append((decision, trace))
            top = sorted(trace.top()) if decision.node else []
            best = max(trace.final.values()) if trace.final else None
            results.append(PodResult(first + offset, base, decision, top, best))
        for i, (candidate, scheduler_name) in enumerate(self.names.items()):
            runs = self.candidates[candidate]
            if isinstance(runs, Path):  # corral simulate: offline, from the same state
                group, pods = groups.copies(template, members, str(i), scheduler_name)
                got = simulated.decide_group(self.admin, runs, group, pods,
                                             gates=self.kind.feature_gates)  # fmt: skip
            else:
                got = self._decide_group(template, members, str(i), scheduler_name, runs)
            verdicts = groups.judge(references, got, self.kind.compare)
            for result, decision, verdict in zip(results, got, verdicts, strict=True):
                result.candidates[candidate] = decision
                result.verdicts[candidate] = verdict
        # The next state is upstream's: its victims gone, the bound members where it put them.
        for victim in decided[0].victims if decided else []:
            namespace, name = victim.split("/", 1)
            _force_delete(self.admin, namespace, name)
            self.state.pop(victim, None)
        placed = [(m, d.node) for m, d in zip(members, decided, strict=True) if d.node]
        if placed:
            self.admin.create(copy.deepcopy(template))
        for original, node in placed:
            state = copy.deepcopy(original)
            state["spec"]["nodeName"] = node
            state["spec"]["schedulerName"] = REFERENCE
            self.admin.create(state)
            self.state[_key(state)] = state
        return results


def _delete_group(admin: Client, namespace: str, name: str) -> None:
    admin.delete(groups.GROUP_API, "PodGroup", name, namespace)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            admin.get(groups.GROUP_API, "PodGroup", name, namespace)
        except ApiError as exc:
            if exc.not_found:
                return
            raise
        time.sleep(POLL)
    raise TimeoutError(f"PodGroup {namespace}/{name} not gone 30s after its delete")


def save(report: Report, scenario: Scenario, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"report": report.to_json(), "scenario": scenario.to_json()},
                               indent=1))  # fmt: skip


def summary(reports: list[Report]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    candidates = sorted({c for r in reports for c in r.candidates})
    for candidate in candidates:
        agree = sum(r.agreement(candidate)[0] for r in reports)
        total = sum(r.agreement(candidate)[1] for r in reports)
        race = sum(r.within_race(candidate) for r in reports)
        out[candidate] = {
            "agree": agree,  # with the race's; exactly: agree - race
            "race": race,  # agree only within upstream's race (bench.conformance.groups)
            "disagree": total - agree,
            "total": total,
            "rate": agree / total if total else 0.0,
            "disagreements": [
                {"seed": r.seed, "kind": r.kind, **d.to_json()}
                for r in reports
                for d in r.disagreements(candidate)
            ],
        }
    return out
