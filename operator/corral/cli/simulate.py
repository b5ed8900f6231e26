"""``corral simulate -f cluster.yaml [--explain]``: where would each pod go? No cluster needed.

The input is ordinary Kubernetes YAML (files, directories, ``kind: List``: a ``kubectl get -A -o
yaml`` snapshot works as is): Nodes, Pods with ``spec.nodeName`` (running) and Pods without (to
place), the objects plugins read, and the schedulers: every SchedulerProfile and
KubeSchedulerConfiguration among the inputs and ``--config`` files, each one engine, the
profile's tenancy included. Each pending pod goes to the profile its ``schedulerName`` names;
``default-scheduler`` is upstream's default configuration unless one is given. The engine's
queue, cache and cycles then run until nothing more can happen
(:class:`corral.scheduler.engine.simulate.Simulator`). Every assumption made about hand-written
objects, and every object left out, is reported (``note:`` lines on stderr). Exit codes: 0
every pod placed (or nothing to place), 1 invalid input, 2 usage, 3 some pod not placed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from corral.api import check_profile, default_catalog
from corral.api.scheduler_config import scheduler_config_data, unmounted_secrets
from corral.api.types import SchedulerProfile
from corral.cli import clusterread, html_report, inputs, workloads
from corral.cli.capacity import DEFAULT_LIMIT, Capacity, capacity
from corral.cli.explain_table import INDENT, explain_table
from corral.cli.problems import EXIT_OK, EXIT_UNSCHEDULABLE, InvalidInput, Problem, UsageError
from corral.cli.scheduler import parse_feature_gates
from corral.cli.validate import CONFIG, PROFILE, kind_of
from corral.k8s import Client
from corral.render import dump_yaml
from corral.scheduler.backend import shapes
from corral.scheduler.backend.objects import WATCHED_KINDS, kinds_for
from corral.scheduler.backend.records import MalformedObjectError
from corral.scheduler.config import FeatureGates, FieldError, ValidationError
from corral.scheduler.config.decode import encode
from corral.scheduler.engine.frameworks import engine_declarations, load_engine_config
from corral.scheduler.engine.simulate import (
    GATED,
    PREEMPTED,
    SCHEDULED,
    SP_GROUP_API,
    MalformedPodError,
    Placement,
    SimulatedEngine,
    Simulator,
    Tenancy,
    sp_kind,
)
from corral.scheduler.framework import explanation as x
from corral.scheduler.framework import labels
from corral.yamlload import load_all

# A cluster file may describe thousands of nodes and pods, more than a profile ever needs.
MAX_CLUSTER_BYTES: Final = 32 * 2**20
MAX_CLUSTER_TOTAL_BYTES: Final = 2 * MAX_CLUSTER_BYTES  # all the -f files of one simulate
DEFAULT_SCHEDULER: Final = "default-scheduler"
DEFAULT_CONFIG: Final = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": DEFAULT_SCHEDULER}],
}
UPSTREAM_DEFAULT: Final = "upstream's default configuration"
# Kinds whose pods simulate does not make: give it the Pods (kubectl get pods -o yaml).
WORKLOADS: Final = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job",
                              "CronJob", "ReplicationController"})  # fmt: skip
REPORT_KIND: Final = "Simulation"
CAPACITY_KIND: Final = "Capacity"
POD_GROUP: Final = "PodGroup"
WORKLOAD: Final = "Workload"  # scheduling.k8s.io: its controller makes the PodGroups


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="place pods on an in-memory cluster read from YAML",
        description="Run the scheduler engine over Nodes and Pods read from YAML (a kubectl get "
        "-A -o yaml snapshot works), with no API server, and print where each pending pod goes "
        "or why it cannot be placed. Exit 0 every pod placed, 1 invalid input, 2 usage, "
        "3 some pod not placed.",
    )
    inputs.add_file_arguments(
        parser, "YAML with Nodes, Pods, the objects plugins read, and SchedulerProfiles or "
        "KubeSchedulerConfigurations; Deployments, ReplicaSets, StatefulSets and Jobs are "
        "expanded into their pods", required=False,
    )  # fmt: skip
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="FILE",
        help="a KubeSchedulerConfiguration or SchedulerProfile to run besides those in -f; "
        "repeatable",
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="per pod, what its last cycle evaluated: PreFilter, every node's Filter failures, "
        "extenders, weighted Scores, preemption, Reserve and Permit",
    )
    parser.add_argument(
        "--explain-all",
        action="store_true",
        help="with --explain: every plugin's verdict on every node, passing ones too",
    )
    parser.add_argument(
        "-o",
        "--output",
        choices=("text", "json", "yaml"),
        default="text",
        help="text (default), or one report as json or yaml (docs/explain.md has its schema)",
    )
    live = parser.add_argument_group("a live cluster (read-only, with your own credentials)")
    live.add_argument("--from-cluster", action="store_true",
                      help="take the cluster from the API server: what the engine's informers "
                      "would read, and its SchedulerProfiles (-f adds pods and workloads, "
                      "--config a candidate profile)")  # fmt: skip
    live.add_argument("--kubeconfig", metavar="PATH", help="kubeconfig (default: $KUBECONFIG)")
    live.add_argument("--context", metavar="NAME", help="the kubeconfig context to use")
    live.add_argument("-n", "--namespace", action="append", default=[], metavar="NS",
                      help="where to read namespaced objects you may not list cluster-wide "
                      "(a tenant's own namespaces); repeatable")  # fmt: skip
    live.add_argument(
        "--save-snapshot",
        type=Path,
        metavar="FILE",
        help="write what was read as one kind: List, to replay with -f FILE",
    )
    parser.add_argument(
        "--capacity",
        action="store_true",
        help="count how many more of the pod given with -f fit, where, and why the next one "
        "does not (copies placed one at a time by the engine)",
    )
    parser.add_argument(
        "--limit", type=int, metavar="N", help=f"with --capacity: stop after N ({DEFAULT_LIMIT})"
    )
    parser.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="also write one self-contained HTML page: node x plugin verdicts and scores, a "
        "capacity bar per node",
    )
    parser.add_argument(
        "--feature-gates",
        default="",
        metavar="NAME=BOOL[,...]",
        help="gates of the engines a KubeSchedulerConfiguration configures, as `corral "
        "scheduler --feature-gates` (a SchedulerProfile's are its spec.featureGates), e.g. "
        "GenericWorkload=true for PodGroups",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed for breaking ties between equally scored nodes (default 0)",
    )
    parser.set_defaults(handler=run)


# --- the schedulers --------------------------------------------------------------------------


def _tenancy(profile: SchedulerProfile) -> Tenancy | None:
    tenancy = profile.spec.tenancy
    if tenancy is None or (not tenancy.namespaces and tenancy.namespace_selector is None):
        return None
    raw = encode(tenancy.namespace_selector) if tenancy.namespace_selector is not None else None
    scope = list(tenancy.namespaces)
    if raw is not None:
        scope.append("a namespace selector")
    return Tenancy(
        namespaces=frozenset(tenancy.namespaces),
        selector=None if raw is None else labels.parse(raw),
        description=", ".join(scope),
    )


def engine_of(
    doc: inputs.Document, gates: FeatureGates | None = None
) -> tuple[SimulatedEngine, list[str]]:
    """The engine a SchedulerProfile (with its ``spec.featureGates``) or a
    KubeSchedulerConfiguration document (with ``gates``, ``--feature-gates``) configures, and
    notes on how it differs offline; raises :class:`InvalidInput` with its problems.

    An extender's ``tlsSecretRef`` Secret is mounted only in the scheduler's pods: offline the
    extender is called without it (its other ``tlsConfig`` settings kept), and a note says so.
    """
    try:
        if kind_of(doc) == PROFILE:
            profile, errors = check_profile(doc.data, catalog=default_catalog())
            if profile is None:
                raise InvalidInput(doc.problems(errors))
            data = scheduler_config_data(profile, mounted=False)
            config = load_engine_config(data, profile.gates)
            source = f"{PROFILE} {profile.name} ({doc.label})"
            notes = [f"{source}: {line}: called here without that Secret's certificate, key "
                     "and CA" for line in unmounted_secrets(profile)]  # fmt: skip
            return SimulatedEngine(source, config, _tenancy(profile), profile.name), notes
        config = load_engine_config(doc.data, gates)
        return SimulatedEngine(f"{CONFIG} ({doc.label})", config), []
    except ValidationError as exc:
        raise InvalidInput(doc.problems(exc.errors)) from None


def _describe_engine(engine: SimulatedEngine) -> str:
    names = ", ".join(engine.config.scheduler_names)
    served = f", serving {engine.tenancy.description}" if engine.tenancy is not None else ""
    gates = engine.config.gates.flag()
    return f"{names}: {engine.source}{served}" + (f", gates {gates}" if gates else "")


# --- the cluster -----------------------------------------------------------------------------


class Input:
    """The documents of a simulation, sorted by what simulate does with them."""

    def __init__(self, docs: list[inputs.Document], gates: FeatureGates | None = None) -> None:
        self.gates = gates  # --feature-gates, for KubeSchedulerConfigurations
        self.engines: list[SimulatedEngine] = []
        self.nodes: list[inputs.Document] = []
        self.running: list[inputs.Document] = []
        self.pending: list[inputs.Document] = []
        self.objects: list[inputs.Document] = []
        self.ignored: Counter[str] = Counter()
        self.workloads: Counter[str] = Counter()
        # Workloads of -f expanded into their pods: (kind, name, pods made).
        self.expanded: list[tuple[str, str, int]] = []
        # The first pod of each workload of -f: --capacity's templates.
        self.templates: list[inputs.Document] = []
        self.unread: list[str] = []  # what a snapshot of a cluster could not read
        self.read_workloads = 0  # scheduling.k8s.io Workloads of a snapshot
        self.left_out: list[str] = []  # profiles of a cluster not run, and why
        self.offline: list[str] = []  # how the engines run differs from their pods'
        self.add(docs)

    def add(self, docs: Sequence[inputs.Document], *, snapshot: bool = False) -> None:
        """Sort ``docs``; those of a ``snapshot`` of a cluster are never expanded (their
        workloads' pods are in it), and their profiles give way to the ones given."""
        problems: list[Problem] = []
        given_names = {n for e in self.engines for n in e.config.scheduler_names}
        for doc in docs:
            if not isinstance(doc.data, Mapping):
                problems.append(doc.problem("must be a Kubernetes object"))
                continue
            kind = doc.kind
            # What the API server would refuse is refused here too, with its field path: a
            # wrong type, an apiVersion the engine does not read, a negative request.
            shape_errors = [FieldError(*_split(found)) for found in shapes.problems(doc.data)]
            if shape_errors:
                problems += doc.problems(shape_errors)
                continue
            if kind_of(doc) in (PROFILE, CONFIG) and kind:
                problems += self._add_engine(doc, given_names, snapshot=snapshot)
            elif kind in workloads.EXPANDED and not snapshot:
                problems += self._expand(doc)
            elif kind == "Node":
                self.nodes.append(doc)
                problems += _node_problems(doc)
            elif kind == "Pod":
                spec = doc.data.get("spec")
                bound = isinstance(spec, Mapping) and spec.get("nodeName")
                (self.running if bound else self.pending).append(doc)
                if not bound and not snapshot:
                    self.templates.append(doc)
            elif (
                kind in WATCHED_KINDS
                or kind in ("ResourceClaimTemplate", POD_GROUP)
                or sp_kind(doc.data) is not None
            ):
                self.objects.append(doc)
                if kind in WORKLOADS and not snapshot:
                    self.workloads[kind] += 1
            elif kind in WORKLOADS:
                self.workloads[kind] += 1
                self.ignored[kind] += 1
            elif kind == WORKLOAD and snapshot:
                self.read_workloads += 1  # kept in the snapshot; its PodGroups are read
            else:
                self.ignored[kind or "<no kind>"] += 1
        if problems:
            raise InvalidInput(problems)

    def _add_engine(
        self, doc: inputs.Document, given_names: set[str], *, snapshot: bool
    ) -> list[Problem]:
        """A SchedulerProfile or KubeSchedulerConfiguration of ``docs``: run, or left out (a
        shadow; one of a snapshot whose schedulerName a given one takes)."""
        assert isinstance(doc.data, Mapping)
        spec = doc.data.get("spec")  # of any type yet: engine_of checks it
        if kind_of(doc) == PROFILE and isinstance(spec, Mapping) and spec.get("shadow"):
            self.left_out.append(f"SchedulerProfile {doc.name} is a shadow: it places "
                                 "no pod, so it is not run")  # fmt: skip
            return []
        try:
            engine, offline = engine_of(doc, self.gates)
        except InvalidInput as exc:
            return list(exc.problems)
        taken = given_names & set(engine.config.scheduler_names)
        if snapshot and taken:
            self.left_out.append(f"{engine.source}: replaced by the one given for "
                                 f"schedulerName {', '.join(sorted(taken))}")  # fmt: skip
            return []
        self.engines.append(engine)
        self.offline += offline
        return []

    def _expand(self, doc: inputs.Document) -> list[Problem]:
        try:
            made = workloads.expand(doc.data)
        except workloads.WorkloadError as exc:
            return [doc.problem(exc.message, exc.path)]
        self.expanded.append((made.kind, made.name, len(made.pods)))
        self.objects += [replace(doc, data=obj) for obj in made.objects]
        pods = [replace(doc, data=pod) for pod in made.pods]
        self.pending += pods
        self.templates += pods[:1]
        return []


def _split(found: str) -> tuple[str, str]:
    """``path: what`` (:func:`shapes.problems`) as a field path and its message."""
    path, sep, what = found.partition(": ")
    return (path, what) if sep else ("<root>", found)


def _node_problems(doc: inputs.Document) -> list[Problem]:
    status = doc.data.get("status")
    if isinstance(status, Mapping) and status.get("allocatable"):
        return []
    where = "status.allocatable" if isinstance(status, Mapping) else "status"
    return [doc.problem("required: the node's capacity (the kubelet reports it)", where)]


def notes_of(given: Input, simulator: Simulator) -> list[str]:
    out = ["profiles: " + "; ".join(_describe_engine(e) for e in given.engines)]
    out += given.left_out + given.offline
    out += [f"{kind} {name}: {n} pod(s) made from its template, as its controller would"
            for kind, name, n in given.expanded]  # fmt: skip
    if given.unread:
        out += [f"{line}; so this simulation does not count it" for line in given.unread]
    if given.read_workloads:
        out.append(f"{given.read_workloads} {WORKLOAD}(s) in the cluster: the scheduler reads "
                   "the PodGroups made for them")  # fmt: skip
    for kind, n in sorted(given.ignored.items()):
        if kind == WORKLOAD:
            out.append(f"ignored {n} {kind} (the scheduler reads the PodGroups its controller "
                       "makes, not Workloads: give the PodGroups)")  # fmt: skip
        elif kind not in WORKLOADS:
            out.append(f"ignored {n} {kind} (not a kind the engine reads)")
    groups = sum(1 for d in given.objects if d.kind == POD_GROUP
                 and not str(d.data.get("apiVersion") or "").startswith(SP_GROUP_API))  # fmt: skip
    if groups and not any(e.config.gates.generic_workload for e in given.engines):
        out.append(f"{groups} {POD_GROUP}(s), but no profile has the GenericWorkload gate: "
                   "their pods are scheduled one by one, as kube-scheduler without it")  # fmt: skip
    for kind, n in sorted(given.workloads.items()):
        if kind in workloads.EXPANDED:
            continue
        out.append(f"{n} {kind}: its pods are not generated; give the Pods themselves "
                   "(kubectl get pods -o yaml)")  # fmt: skip
    return out + simulator.notes.lines()


def load_simulator(given: Input, seed: int) -> Simulator:
    if not any(DEFAULT_SCHEDULER in e.config.scheduler_names for e in given.engines):
        given.engines.append(SimulatedEngine(UPSTREAM_DEFAULT, load_engine_config(DEFAULT_CONFIG)))
    try:
        simulator = Simulator(given.engines, seed=seed)
    except ValidationError as exc:
        raise InvalidInput(Problem(e.path, e.message) for e in exc.errors) from None
    for doc in given.objects:
        _at(doc, lambda d=doc: simulator.add_object(d.data))
    simulator.settle_volumes()
    for doc in given.nodes:
        _at(doc, lambda d=doc: simulator.add_node(d.data))
    for doc in given.running:
        _at(doc, lambda d=doc: simulator.add_running_pod(d.data))
    return simulator


def _at(doc: inputs.Document, call: Any) -> Any:
    """``call()``, a malformed object reported at its document."""
    try:
        return call()
    except MalformedObjectError as exc:
        raise InvalidInput([_malformed(doc, exc)]) from None


def _malformed(doc: inputs.Document, exc: MalformedObjectError) -> Problem:
    """At the field when the error names it, else at the object."""
    path = getattr(exc, "path", "")
    detail = getattr(exc, "detail", "")
    if path and detail:
        return doc.problems([FieldError(path, detail)])[0]
    return doc.problem(str(exc))


# --- output ----------------------------------------------------------------------------------


def describe(p: Placement) -> str:
    if p.verdict == SCHEDULED:
        extra = ""
        if p.victims:
            extra += f"; preempted {', '.join(p.victims)}"
        if p.attempts > 1:
            extra += f"; attempt {p.attempts}"
        nodes = f"{p.evaluated} node" + ("" if p.evaluated == 1 else "s")
        return f"{p.pod} -> {p.node}  (evaluated {nodes}, {p.feasible} feasible{extra})"
    if p.verdict == PREEMPTED:
        return f"{p.pod}: preempted by {p.preempted_by} after it was placed on {p.node}"
    words = {"Unschedulable": "unschedulable", "SchedulerError": "error", "Gated": "gated",
             "NamespaceNotServed": "not served", "NoSchedulerProfile": "no profile"}  # fmt: skip
    nominated = f" (nominated node {p.nominated_node})" if p.nominated_node else ""
    given_up = f" (given up after {p.attempts} attempts)" if p.given_up else ""
    return f"{p.pod}: {words.get(p.verdict, p.verdict)}: {p.message}{nominated}{given_up}"


def pod_groups(placements: list[Placement], simulator: Simulator) -> dict[str, dict[str, Any]]:
    """The PodGroups the pod-group cycle took, in the order of their first member: each one's
    ``PodGroupInitiallyScheduled`` condition (``{}`` when none was written)."""
    out: dict[str, dict[str, Any]] = {}
    for p in placements:
        if p.pod_group and p.pod_group not in out:
            found = simulator.pod_group_condition(p.pod_group)
            out[p.pod_group] = {k: found[k] for k in ("status", "reason", "message")
                                if k in found} if found is not None else {}  # fmt: skip
    return out


def describe_group(key: str, condition: dict[str, Any]) -> str:
    if not condition:
        return f"podgroup {key}: no condition (its cycle never ran)"
    reason, message = condition.get("reason", ""), condition.get("message", "")
    return f"podgroup {key}: {reason}" + (f": {message}" if message else "")


def report(
    placements: list[Placement],
    notes: list[str],
    given: Input,
    groups: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    profiles = [
        {
            "schedulerName": name,
            "source": e.source,
            **({"namespaces": e.tenancy.description} if e.tenancy is not None else {}),
        }
        for e in given.engines
        for name in e.config.scheduler_names
    ]
    return {
        "apiVersion": x.API_VERSION,
        "kind": REPORT_KIND,
        "profiles": profiles,
        "notes": notes,
        "placements": [
            {
                "pod": p.pod,
                "schedulerName": p.profile,
                "verdict": p.verdict,
                **({"node": p.node} if p.node else {}),
                **({"message": p.message} if p.message else {}),
                "evaluatedNodes": p.evaluated,
                "feasibleNodes": p.feasible,
                "attempts": p.attempts,
                **({"givenUp": True} if p.given_up else {}),
                **({"nominatedNodeName": p.nominated_node} if p.nominated_node else {}),
                **({"victims": p.victims} if p.victims else {}),
                **({"preemptedBy": p.preempted_by} if p.preempted_by else {}),
                **({"podGroup": p.pod_group} if p.pod_group else {}),
                **(
                    {"explanations": [x.to_json(e) for e in p.explanations]}
                    if p.explanations
                    else {}
                ),
            }
            for p in placements
        ],
        **(
            {"podGroups": [{"name": k, "condition": c} for k, c in groups.items()]}
            if groups
            else {}
        ),
    }


def run(args: argparse.Namespace) -> int:
    _check_flags(args)
    docs = inputs.documents(
        args.files,
        recursive=args.recursive,
        max_bytes=MAX_CLUSTER_BYTES,
        max_total=MAX_CLUSTER_TOTAL_BYTES,
    )
    configs = inputs.documents(args.config) if args.config else []
    files = inputs.expand([*args.files, *args.config], recursive=args.recursive)
    empty = [Problem(name, "contains no document") for name in inputs.empty(files, docs + configs)]
    if empty:
        raise InvalidInput(empty)
    gates = parse_feature_gates(args.feature_gates) if args.feature_gates else None
    saved = _saved_snapshots(docs)
    given = Input(configs + [d for d in docs if id(d.source) not in saved], gates)
    given.add([d for d in docs if id(d.source) in saved], snapshot=True)
    given.unread += [line for listing in saved.values() for line in clusterread.unread_of(listing)]
    if args.from_cluster:
        _from_cluster(args, given)
    simulator = load_simulator(given, args.seed)
    before = simulator.cache.snapshot()
    explain = args.explain or args.explain_all or args.html is not None
    if args.capacity:
        return _capacity(args, given, simulator, explain=explain)
    try:
        placements = simulator.run([d.data for d in given.pending], explain=explain)
    except MalformedPodError as exc:
        raise InvalidInput([_malformed(given.pending[exc.index], exc)]) from None
    notes = notes_of(given, simulator)
    groups = pod_groups(placements, simulator)
    if args.html is not None:
        sections = [html_report.cycle_section(p.explanations[-1], describe(p))
                    for p in placements if p.explanations]  # fmt: skip
        placed = Counter(p.node for p in placements if p.placed and p.node)
        usage = html_report.usage(before, simulator.cache.snapshot(),
                                  {n: f"{k} placed" for n, k in placed.items()})  # fmt: skip
        sections.append(html_report.capacity_section(usage))
        html_report.write(args.html, html_report.page("corral simulate", sections, notes))
    if args.output != "text":
        body = report(placements, notes, given, groups)
        sys.stdout.write(json.dumps(body, indent=2) + "\n" if args.output == "json"
                         else dump_yaml(body))  # fmt: skip
    else:
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        if not placements:
            print(f"nothing to place: {len(given.nodes)} nodes, {len(given.running)} pods "
                  "bound to them, no pending pod")  # fmt: skip
        for p in placements:
            print(describe(p))
            if not (args.explain or args.explain_all):
                continue  # recorded for --html only
            if p.pod_group and not p.explanations and p.verdict != GATED:
                print(f"{INDENT}not evaluated: the pod-group cycle of {p.pod_group} stopped "
                      "before this member")  # fmt: skip
            shown = [e for e in p.explanations[:-1] if e.preemption and e.preemption.chosen]
            shown += p.explanations[-1:]
            for e in shown:
                if len(shown) > 1:
                    print(f"{INDENT}attempt {e.attempt}:")
                print(explain_table(e, every=args.explain_all))
        for key, condition in groups.items():
            print(describe_group(key, condition))
    return EXIT_OK if all(p.placed for p in placements) else EXIT_UNSCHEDULABLE


def _check_flags(args: argparse.Namespace) -> None:
    if not args.files and not args.from_cluster:
        raise UsageError("give -f FILE (a cluster and pods written in YAML), --from-cluster, "
                         "or both")  # fmt: skip
    if not args.from_cluster:
        for flag, value in (
            ("--save-snapshot", args.save_snapshot),
            ("-n", args.namespace),
            ("--kubeconfig", args.kubeconfig),
            ("--context", args.context),
        ):
            if value:
                raise UsageError(f"{flag} goes with --from-cluster")  # fmt: skip
    if args.limit is not None and not args.capacity:
        raise UsageError("--limit goes with --capacity")
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit {args.limit}: must be at least 1")


# --- a live cluster ----------------------------------------------------------------------------


def _snapshot_docs(listing: Mapping[str, Any], name: str) -> list[inputs.Document]:
    """The items of a List read from a cluster, as documents of one source (JSON is YAML, so a
    problem is located in it as in a file)."""
    source = inputs.Source(name, json.dumps(listing, indent=1).encode("utf-8"))
    items = listing.get("items") or []
    return [inputs.Document(source, 0, item, 1, i) for i, item in enumerate(items)]


def _saved_snapshots(docs: Sequence[inputs.Document]) -> dict[int, Mapping[str, Any]]:
    """The sources that are snapshots saved by --save-snapshot (a List annotated so), by the id
    of their source, with that List: they are read as a snapshot of a cluster again (their
    pending pods are the cluster's, not templates; their workloads not expanded again)."""
    out: dict[int, Mapping[str, Any]] = {}
    marker = clusterread.ANNOTATION.encode("utf-8")
    for source in {id(d.source): d.source for d in docs if d.item is not None}.values():
        if marker not in source.text:
            continue
        for loaded in load_all(source.text, source.name):
            if isinstance(loaded, Mapping) and loaded.get("kind") == "List":
                meta = loaded.get("metadata")
                notes = meta.get("annotations") if isinstance(meta, Mapping) else None
                if isinstance(notes, Mapping) and clusterread.ANNOTATION in notes:
                    out[id(source)] = loaded
    return out


def _kinds(engines: Sequence[SimulatedEngine]) -> list[str]:
    """What the engines' plugins read, as the engine's informers derive it."""
    names = {n for e in engines for p in e.config.profiles for n in p.plugin_names()}
    return kinds_for(d for d in engine_declarations() if d.name in names)


def _from_cluster(args: argparse.Namespace, given: Input) -> None:
    client = clusterread.client_of(args.kubeconfig, args.context)
    read_cluster(client, given, args.namespace, save=args.save_snapshot)


def read_cluster(
    client: Client,
    given: Input,
    namespaces: Sequence[str],
    *,
    save: Path | None = None,
    profiles: bool = True,
) -> None:
    """Add to ``given`` what the engine would read from the cluster (its SchedulerProfiles too,
    unless ``profiles`` is False), as the caller may read it; ``save`` writes it as a List."""
    found, unread = clusterread.read_profiles(client) if profiles else ([], [])
    given.add(_snapshot_docs({"items": found}, f"cluster {client.server} (SchedulerProfiles)"),
              snapshot=True)  # fmt: skip
    engines = list(given.engines)
    if not any(DEFAULT_SCHEDULER in e.config.scheduler_names for e in engines):
        engines.append(SimulatedEngine(UPSTREAM_DEFAULT, load_engine_config(DEFAULT_CONFIG)))
    snapshot = clusterread.read(client, _kinds(engines), namespaces)
    snapshot.items[:0] = found
    snapshot.unread[:0] = unread
    listing = snapshot.as_list()
    given.add(_snapshot_docs({"items": snapshot.items[len(found):]},
                             f"cluster {client.server}"), snapshot=True)  # fmt: skip
    given.unread += [str(u) for u in snapshot.unread]
    if save is not None:
        try:
            save.write_text(dump_yaml(listing), encoding="utf-8")
        except OSError as exc:
            why = exc.strerror or exc
            raise UsageError(f"--save-snapshot: cannot write {save}: {why}") from None


# --- capacity ----------------------------------------------------------------------------------


def _capacity(
    args: argparse.Namespace,
    given: Input,
    simulator: Simulator,
    *,
    explain: bool,
) -> int:
    if len(given.templates) != 1:
        given_n = "none" if not given.templates else f"{len(given.templates)}"
        raise UsageError(
            "--capacity counts copies of one pod: give one Pod without spec.nodeName (or one "
            f"workload) with -f, not {given_n}"
        )
    template = given.templates[0]
    fixed = [d for d in given.pending if d not in given.templates]
    try:  # the cluster's own pending pods are ahead of the copies in the queue
        simulator.run([d.data for d in fixed])
    except MalformedPodError as exc:
        raise InvalidInput([_malformed(fixed[exc.index], exc)]) from None
    start = simulator.cache.snapshot()
    try:
        found = capacity(simulator, template.data, limit=args.limit or DEFAULT_LIMIT,
                         explain=explain)  # fmt: skip
    except MalformedPodError as exc:
        raise InvalidInput([_malformed(template, exc)]) from None
    notes = notes_of(given, simulator)
    if fixed:
        notes.append(f"{len(fixed)} pending pod(s) of the input placed first, as the queue "
                     "would")  # fmt: skip
    if args.html is not None:
        fit = {n: f"{k} more fit" for n, k in found.per_node.items()}
        usage = html_report.usage(start, simulator.cache.snapshot(), fit)
        sections = [html_report.capacity_section(usage, f"{found.fits} more of {found.template}")]
        if found.explanation is not None:
            why = f"{found.next_pod}: {found.reason}"
            sections.append(html_report.cycle_section(found.explanation, why))
        page = html_report.page("corral simulate --capacity", sections, notes)
        html_report.write(args.html, page)
    if args.output != "text":
        body = {"apiVersion": x.API_VERSION, "kind": CAPACITY_KIND, "notes": notes,
                "capacity": found.to_json()}  # fmt: skip
        sys.stdout.write(json.dumps(body, indent=2) + "\n" if args.output == "json"
                         else dump_yaml(body))  # fmt: skip
        return EXIT_OK
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    print(describe_capacity(found))
    if (args.explain or args.explain_all) and found.explanation is not None:
        print(explain_table(found.explanation, every=args.explain_all))
    return EXIT_OK


def describe_capacity(found: Capacity) -> str:
    lines = [f"{found.template}: {found.fits} more fit"]
    lines += [f"{INDENT}{node}: {n}" for node, n in sorted(found.per_node.items())]
    if found.stopped_at_limit:
        lines.append(f"stopped at the limit ({found.fits}); more may fit")
    else:
        lines.append(f"the next one ({found.next_pod}) stays Pending: {found.reason}")
    return "\n".join(lines)
