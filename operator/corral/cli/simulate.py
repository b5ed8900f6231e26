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
from collections.abc import Mapping
from typing import Any, Final

from corral.api import check_profile, default_catalog
from corral.api.scheduler_config import scheduler_config_data
from corral.api.types import SchedulerProfile
from corral.cli import inputs
from corral.cli.explain_table import INDENT, explain_table
from corral.cli.problems import EXIT_OK, EXIT_UNSCHEDULABLE, InvalidInput, Problem
from corral.cli.validate import CONFIG, PROFILE, kind_of
from corral.render import dump_yaml
from corral.scheduler.backend import shapes
from corral.scheduler.backend.objects import WATCHED_KINDS
from corral.scheduler.backend.records import MalformedObjectError
from corral.scheduler.config import FieldError, ValidationError
from corral.scheduler.config.decode import encode
from corral.scheduler.engine.frameworks import load_engine_config
from corral.scheduler.engine.simulate import (
    PREEMPTED,
    SCHEDULED,
    MalformedPodError,
    Placement,
    SimulatedEngine,
    Simulator,
    Tenancy,
)
from corral.scheduler.framework import explanation as x
from corral.scheduler.framework import labels

# A cluster file may describe thousands of nodes and pods, more than a profile ever needs.
MAX_CLUSTER_BYTES: Final = 32 * 2**20
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
        "KubeSchedulerConfigurations"
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


def engine_of(doc: inputs.Document) -> SimulatedEngine:
    """The engine a SchedulerProfile or KubeSchedulerConfiguration document configures;
    raises :class:`InvalidInput` with its problems."""
    try:
        if kind_of(doc) == PROFILE:
            profile, errors = check_profile(doc.data, catalog=default_catalog())
            if profile is None:
                raise InvalidInput(doc.problems(errors))
            config = load_engine_config(scheduler_config_data(profile))
            return SimulatedEngine(f"{PROFILE} {profile.name} ({doc.label})", config,
                                   _tenancy(profile), profile.name)  # fmt: skip
        return SimulatedEngine(f"{CONFIG} ({doc.label})", load_engine_config(doc.data))
    except ValidationError as exc:
        raise InvalidInput(doc.problems(exc.errors)) from None


def _describe_engine(engine: SimulatedEngine) -> str:
    names = ", ".join(engine.config.scheduler_names)
    served = f", serving {engine.tenancy.description}" if engine.tenancy is not None else ""
    return f"{names}: {engine.source}{served}"


# --- the cluster -----------------------------------------------------------------------------


class Input:
    """The documents of a simulation, sorted by what simulate does with them."""

    def __init__(self, docs: list[inputs.Document]) -> None:
        self.engines: list[SimulatedEngine] = []
        self.nodes: list[inputs.Document] = []
        self.running: list[inputs.Document] = []
        self.pending: list[inputs.Document] = []
        self.objects: list[inputs.Document] = []
        self.ignored: Counter[str] = Counter()
        self.workloads: Counter[str] = Counter()
        problems: list[Problem] = []
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
                try:
                    self.engines.append(engine_of(doc))
                except InvalidInput as exc:
                    problems += exc.problems
            elif kind == "Node":
                self.nodes.append(doc)
                problems += _node_problems(doc)
            elif kind == "Pod":
                spec = doc.data.get("spec")
                bound = isinstance(spec, Mapping) and spec.get("nodeName")
                (self.running if bound else self.pending).append(doc)
            elif kind in WATCHED_KINDS or kind == "ResourceClaimTemplate":
                self.objects.append(doc)
                if kind in WORKLOADS:
                    self.workloads[kind] += 1
            elif kind in WORKLOADS:
                self.workloads[kind] += 1
                self.ignored[kind] += 1
            else:
                self.ignored[kind or "<no kind>"] += 1
        if problems:
            raise InvalidInput(problems)


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


def _notes(given: Input, simulator: Simulator) -> list[str]:
    out = ["profiles: " + "; ".join(_describe_engine(e) for e in given.engines)]
    for kind, n in sorted(given.ignored.items()):
        if kind not in WORKLOADS:
            out.append(f"ignored {n} {kind} (not a kind the engine reads)")
    for kind, n in sorted(given.workloads.items()):
        out.append(f"{n} {kind}: its pods are not generated; give the Pods themselves "
                   "(kubectl get pods -o yaml)")  # fmt: skip
    return out + simulator.notes.lines()


def _load(given: Input, seed: int) -> Simulator:
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
        return f"{p.pod} -> {p.node}  (evaluated {p.evaluated} nodes, {p.feasible} feasible{extra})"
    if p.verdict == PREEMPTED:
        return f"{p.pod}: preempted by {p.preempted_by} after it was placed on {p.node}"
    words = {"Unschedulable": "unschedulable", "SchedulerError": "error", "Gated": "gated",
             "NamespaceNotServed": "not served", "NoSchedulerProfile": "no profile"}  # fmt: skip
    nominated = f" (nominated node {p.nominated_node})" if p.nominated_node else ""
    given_up = f" (given up after {p.attempts} attempts)" if p.given_up else ""
    return f"{p.pod}: {words.get(p.verdict, p.verdict)}: {p.message}{nominated}{given_up}"


def report(placements: list[Placement], notes: list[str], given: Input) -> dict[str, Any]:
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
                **(
                    {"explanations": [x.to_json(e) for e in p.explanations]}
                    if p.explanations
                    else {}
                ),
            }
            for p in placements
        ],
    }


def run(args: argparse.Namespace) -> int:
    docs = inputs.documents(args.files, recursive=args.recursive, max_bytes=MAX_CLUSTER_BYTES)
    configs = inputs.documents(args.config) if args.config else []
    files = inputs.expand([*args.files, *args.config], recursive=args.recursive)
    empty = [Problem(name, "contains no document") for name in inputs.empty(files, docs + configs)]
    if empty:
        raise InvalidInput(empty)
    given = Input(configs + docs)
    simulator = _load(given, args.seed)
    explain = args.explain or args.explain_all
    try:
        placements = simulator.run([d.data for d in given.pending], explain=explain)
    except MalformedPodError as exc:
        raise InvalidInput([_malformed(given.pending[exc.index], exc)]) from None
    notes = _notes(given, simulator)
    if args.output != "text":
        body = report(placements, notes, given)
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
            shown = [e for e in p.explanations[:-1] if e.preemption and e.preemption.chosen]
            shown += p.explanations[-1:]
            for e in shown:
                if len(shown) > 1:
                    print(f"{INDENT}attempt {e.attempt}:")
                print(explain_table(e, every=args.explain_all))
    return EXIT_OK if all(p.placed for p in placements) else EXIT_UNSCHEDULABLE
