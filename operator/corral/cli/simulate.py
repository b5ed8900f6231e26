"""``corral simulate -f cluster.yaml [--explain]``: where would each pod go? No cluster needed.

The input is ordinary Kubernetes YAML (several files and documents, ``kind: List`` too): Nodes,
Pods with ``spec.nodeName`` (already running) and Pods without (to place, in file order), plus
the objects plugins read: Namespaces (namespaceSelector), Services, ReplicaSets and
StatefulSets (default spreading), PVCs, PVs, StorageClasses, CSINodes, PDBs, PriorityClasses.
The scheduler comes from a ``SchedulerProfile`` or ``KubeSchedulerConfiguration`` document, or
``--config``; without one, upstream's default configuration is used. Exit codes: 0 every pod
placed, 1 some pod unschedulable or invalid input, 2 usage errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from corral.api import ValidationError as ProfileError
from corral.api import load_profile
from corral.api.scheduler_config import scheduler_config_data
from corral.boundedio import InputError, read_input
from corral.cli import UsageError
from corral.scheduler.backend import shapes
from corral.scheduler.backend.records import MalformedObjectError
from corral.scheduler.config import ValidationError
from corral.scheduler.engine.frameworks import load_engine_config
from corral.scheduler.engine.simulate import PASS, Explanation, Placement, Simulator
from corral.yamlload import MAX_BYTES, YamlError, load_all

# A cluster file may describe thousands of nodes and pods, more than a profile ever needs.
MAX_CLUSTER_BYTES = 32 * 2**20
DEFAULT_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler"}],
}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "simulate",
        help="place pods on an in-memory cluster read from YAML",
        description="Run the scheduler engine over Nodes and Pods read from YAML, with no API "
        "server, and print where each pending pod goes or why it cannot be placed.",
    )
    parser.add_argument(
        "-f",
        "--filename",
        dest="files",
        action="append",
        required=True,
        metavar="FILE",
        help="YAML with Nodes, Pods and optionally a "
        "SchedulerProfile or KubeSchedulerConfiguration; repeatable",
    )
    parser.add_argument(
        "--config", type=Path, metavar="FILE", help="a KubeSchedulerConfiguration to use instead"
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="show every Filter plugin's verdict and every Score per node",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed for breaking ties between equally scored nodes (default 0)",
    )
    parser.set_defaults(handler=run)  # fmt: skip


def read_documents(files: list[str]) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for name in files:
        try:
            text = read_input(name, MAX_CLUSTER_BYTES)
            loaded = load_all(text, name, max_bytes=MAX_CLUSTER_BYTES)
        except (InputError, YamlError) as exc:
            raise UsageError(str(exc)) from None
        for n, doc in enumerate(loaded, start=1):
            if not isinstance(doc, dict):
                raise UsageError(f"{name}#{n}: every document must be a Kubernetes object")
            items = doc.get("items") if doc.get("kind") == "List" else [doc]
            if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
                raise UsageError(f"{name}#{n}: items: every item must be a Kubernetes object")
            for i, item in enumerate(items):
                # What the API server would refuse is refused here too, with its field path:
                # a wrong type, an apiVersion the engine does not read, a negative request.
                found = shapes.problem(item)
                if found is not None:
                    where = f"{name}#{n}" + (f" items[{i}]" if item is not doc else "")
                    raise UsageError(f"{where}: {found}")
            docs.extend(items)
    return docs


def choose_config(docs: list[dict[str, Any]], path: Path | None) -> dict[str, Any] | bytes:
    if path is not None:
        try:
            return read_input(str(path), MAX_BYTES, allow_stdin=False)
        except InputError as exc:
            raise UsageError(str(exc)) from None
    for doc in docs:
        if doc.get("kind") == "KubeSchedulerConfiguration":
            return doc
        if doc.get("kind") == "SchedulerProfile":
            return scheduler_config_data(load_profile(doc))
    return DEFAULT_CONFIG


def run(args: argparse.Namespace) -> int:
    docs = read_documents(args.files)
    nodes = [d for d in docs if d.get("kind") == "Node"]
    for node in nodes:
        status = node.get("status")
        if not isinstance(status, dict) or not status.get("allocatable"):
            raise UsageError(f"Node {_object_name(node)}: status.allocatable is required")
    try:
        simulator = Simulator(load_engine_config(choose_config(docs, args.config)), seed=args.seed)
    except (ValidationError, ProfileError) as exc:
        for err in exc.errors:
            print(f"config: {err}", file=sys.stderr)
        return 1
    try:
        return _place(simulator, docs, nodes, explain=args.explain)
    except MalformedObjectError as exc:
        raise UsageError(str(exc)) from None


def _place(
    simulator: Simulator, docs: list[dict[str, Any]], nodes: list[dict[str, Any]], *, explain: bool
) -> int:
    pods = [d for d in docs if d.get("kind") == "Pod"]
    for doc in docs:
        simulator.add_object(doc)
    for node in nodes:
        simulator.add_node(node)
    for doc in pods:
        if _node_name(doc):
            simulator.add_running_pod(doc)
    unplaced = 0
    for doc in pods:
        if _node_name(doc):
            continue
        placement = simulator.schedule(doc, explain=explain)
        print(describe(placement))
        if placement.explanation is not None:
            print(explain_table(placement.explanation))
        unplaced += placement.node is None
    return 1 if unplaced else 0


def _node_name(doc: dict[str, Any]) -> object:
    spec = doc.get("spec")
    return spec.get("nodeName") if isinstance(spec, dict) else None


def _object_name(doc: dict[str, Any]) -> str:
    meta = doc.get("metadata")
    return str(meta.get("name")) if isinstance(meta, dict) else "<unnamed>"


def describe(p: Placement) -> str:
    if p.node is None:
        return f"{p.pod}: unschedulable: {p.message}"
    return f"{p.pod} -> {p.node}  (evaluated {p.evaluated} nodes, {p.feasible} feasible)"


def explain_table(x: Explanation) -> str:
    """Filters (``ok`` or the reason) and weighted scores per node, best total first."""
    headers = ["NODE", *x.filters, *(f"{p}(x{x.weights.get(p, 1)})" for p in x.scores)]
    if x.scores:
        headers.append("TOTAL")
    rows = []
    for node in sorted(x.nodes, key=lambda n: (-x.total(n), n)):
        feasible = all(v.get(node) == PASS for v in x.filters.values())
        row = [node, *(x.filters[p].get(node, "") for p in x.filters)]
        row += [str(x.scores[p][node]) if node in x.scores[p] else "-" for p in x.scores]
        if x.scores:
            row.append(str(x.total(node)) if feasible and any(node in s for s in x.scores.values())
                       else "-")  # fmt: skip
        rows.append(row)
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in [headers, *rows]]  # fmt: skip
    return "\n".join(f"    {line}" for line in lines) + "\n"
