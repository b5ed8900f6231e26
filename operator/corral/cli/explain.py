"""``corral explain POD -n NS``: why is this live pod Pending?

The pod's scheduler is found by its ``spec.schedulerName``: the SchedulerProfile that has it
(read from the cluster), or ``--config`` (a KubeSchedulerConfiguration or SchedulerProfile, for
a scheduler Corral does not run); ``default-scheduler`` with neither is upstream's default
configuration, the cluster's kube-scheduler as installed. That profile then runs one cycle for
the pod over a snapshot of the cluster as the engine would read it
(:func:`corral.cli.simulate.read_cluster`), recorded: each node's Filter verdicts, the Score
table, PostFilter and the preemption candidates, extenders, Reserve and Permit, as
``simulate --explain`` prints them (the same data model and renderers).

Everything is read with the caller's own credentials and nothing is written. What they may not
read is left out and said (``note: could not read Pod outside namespace(s) team-a: ...``): a
tenant learns nothing of other tenants' pods, and is told the answer cannot count them.

Exit codes: 0 the pod would be placed now (or is bound already), 3 it would stay Pending,
1 invalid input (``--config``), 2 usage (credentials, a pod that cannot be read).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from corral.cli import clusterread, html_report, inputs
from corral.cli.explain_table import INDENT, explain_table
from corral.cli.problems import EXIT_OK, EXIT_UNSCHEDULABLE, InvalidInput, Problem, UsageError
from corral.cli.simulate import (
    DEFAULT_SCHEDULER,
    Input,
    describe,
    load_simulator,
    notes_of,
    read_cluster,
)
from corral.k8s import ApiError, Client
from corral.render import dump_yaml
from corral.scheduler.engine.simulate import MalformedPodError
from corral.scheduler.framework import explanation as x

EXPLAIN_KIND: Final = "PodExplanation"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="why a live pod is Pending: its scheduler's cycle over the cluster, recorded",
        description="Find the pod's scheduler by its schedulerName, run that profile once for "
        "the pod over a read-only snapshot of the cluster (your own credentials), and print "
        "what the cycle evaluated on every node. Exit 0 it would be placed now, 3 it would "
        "stay Pending, 1 invalid input, 2 usage.",
    )
    parser.add_argument("pod", metavar="POD", help="the pod's name")
    parser.add_argument("-n", "--namespace", default="default", help="the pod's namespace")
    parser.add_argument("--kubeconfig", metavar="PATH", help="kubeconfig (default: $KUBECONFIG)")
    parser.add_argument("--context", metavar="NAME", help="the kubeconfig context to use")
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="FILE",
        help="the scheduler's KubeSchedulerConfiguration or SchedulerProfile, instead of the "
        "cluster's SchedulerProfile of that schedulerName; repeatable",
    )
    parser.add_argument(
        "--read-namespace",
        action="append",
        default=[],
        metavar="NS",
        help="also read these namespaces when you may not list cluster-wide (the pod's own is "
        "always read); repeatable",
    )
    parser.add_argument(
        "--explain-all",
        action="store_true",
        help="every plugin's verdict on every node, passing ones too",
    )
    parser.add_argument("-o", "--output", choices=("text", "json", "yaml"), default="text")
    parser.add_argument("--html", type=Path, metavar="FILE", help="also write one HTML page: "
                        "the cycle's node x plugin table")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seed for breaking ties (default 0)")
    parser.set_defaults(handler=run)


def read_pod(client: Client, namespace: str, name: str) -> dict[str, Any]:
    try:
        pod: dict[str, Any] = client.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
    except ApiError as exc:
        if exc.not_found:
            raise UsageError(f"pod {namespace}/{name} not found") from None
        if exc.forbidden:
            raise UsageError(clusterread.forbidden_text(f"pod {namespace}/{name}", exc)) from None
        raise UsageError(f"reading pod {namespace}/{name}: {exc}") from None
    return {"apiVersion": "v1", "kind": "Pod", **pod}


def live_verdict(pod: Mapping[str, Any]) -> str:
    """What the pod's scheduler last said about it (its PodScheduled condition)."""
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if isinstance(cond, Mapping) and cond.get("type") == "PodScheduled":
            said = f"{cond.get('status')}"
            if cond.get("reason"):
                said += f" {cond['reason']}"
            return said + (f": {cond['message']}" if cond.get("message") else "")
    return "no PodScheduled condition yet (no scheduler has tried it)"


def run(args: argparse.Namespace) -> int:
    configs = inputs.documents(args.config) if args.config else []
    empty = [Problem(n, "contains no document") for n in inputs.empty(args.config, configs)]
    if empty:
        raise InvalidInput(empty)
    given = Input(configs)  # checked before the cluster is read: bad input costs no request
    client = clusterread.client_of(args.kubeconfig, args.context)
    pod = read_pod(client, args.namespace, args.pod)
    spec = pod.get("spec") or {}
    key = f"{args.namespace}/{args.pod}"
    scheduler = str(spec.get("schedulerName") or DEFAULT_SCHEDULER)
    if spec.get("nodeName"):
        print(f"{key} is bound to {spec['nodeName']}: nothing is pending")
        return EXIT_OK
    namespaces = list(dict.fromkeys([args.namespace, *args.read_namespace]))
    read_cluster(client, given, namespaces, profiles=not configs)
    given.pending = []  # only this pod: the question is its own next cycle
    named = {n for e in given.engines for n in e.config.scheduler_names}
    if scheduler not in named and scheduler != DEFAULT_SCHEDULER:
        raise UsageError(
            f"{key} names schedulerName {scheduler!r}, which no SchedulerProfile you can read "
            "has; give that scheduler's configuration with --config"
        )
    simulator = load_simulator(given, args.seed)
    try:
        placement = simulator.schedule(pod, explain=True)
    except MalformedPodError as exc:
        raise UsageError(f"pod {key}: {exc}") from None
    notes = notes_of(given, simulator)
    said = live_verdict(pod)
    if args.html is not None:
        sections = [
            html_report.cycle_section(e, f"attempt {e.attempt}") for e in placement.explanations
        ]
        title = f"Why is {key} Pending?"
        html_report.write(args.html, html_report.page(title, sections, [*notes, said]))
    if args.output != "text":
        body = {
            "apiVersion": x.API_VERSION,
            "kind": EXPLAIN_KIND,
            "pod": key,
            "schedulerName": scheduler,
            "liveCondition": said,
            "notes": notes,
            "verdict": placement.verdict,
            **({"node": placement.node} if placement.node else {}),
            **({"message": placement.message} if placement.message else {}),
            "explanations": [x.to_json(e) for e in placement.explanations],
        }
        text = json.dumps(body, indent=2) + "\n" if args.output == "json" else dump_yaml(body)
        sys.stdout.write(text)
    else:
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        print(f"{key}: schedulerName {scheduler}; its scheduler says: PodScheduled={said}")
        print(describe(placement))
        for e in placement.explanations:
            if len(placement.explanations) > 1:
                print(f"{INDENT}attempt {e.attempt}:")
            print(explain_table(e, every=args.explain_all))
    return EXIT_OK if placement.placed else EXIT_UNSCHEDULABLE
