"""Every Binding the API server was asked for, from its audit log, and the fault tests' verdict:
each pod bound exactly once, none lost.

The fault control plane (``tests/e2e/faults/conftest.py``) runs kube-apiserver with
:data:`AUDIT_POLICY`: each ``pods/binding`` create is logged when it is received and when it is
answered (with the Binding as sent: the pod's UID and the target node), and each Node deletion
when it is answered. A Binding received but never answered is one an API server crash cut;
whether it was committed shows only in the pod. So does one answered 504 when the client's
connection was reset mid-request: kube-apiserver may have committed it to etcd already. And so
does one answered 409 because etcd became unreachable mid-request (kube-apiserver's message:
``Operation cannot be fulfilled on pods/binding "p": rpc error: code = Unavailable ...``): one
etcd-crash run of ``make faults`` had three pods bound whose only Bindings were 409s, and the
audit log of the next shows 557 such 409s (there each pod's later Binding took it).

Contract of :func:`verdict`: for every pod the test created, the pod still exists with a
``spec.nodeName``; the API server accepted exactly one Binding for its UID (or none with a 201,
and one was cut or answered with a 5xx or etcd's Unavailable, see above), naming that node; no
node holds more than its allocatable CPU. Refused Bindings (409 for a pod already bound, 429,
5xx) are counted, not failed: which ones a fault provokes is what the tests measure.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from corral.k8s import JSON, Client

# kube-apiserver's answer when etcd could not be reached mid-request (a 409, or a 5xx): the
# write may have been committed.
ETCD_UNAVAILABLE: Final = "rpc error: code = Unavailable"

AUDIT_POLICY: Final = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "rules": [
        {
            "level": "Request",
            "verbs": ["create"],
            "resources": [{"group": "", "resources": ["pods/binding"]}],
        },
        {
            "level": "Metadata",
            "omitStages": ["RequestReceived"],
            "verbs": ["delete"],
            "resources": [{"group": "", "resources": ["nodes"]}],
        },
        {"level": "None"},
    ],
}


def audit_args(policy: Path, log: Path) -> list[str]:
    """kube-apiserver's flags for :data:`AUDIT_POLICY`, written to ``policy``, logging to
    ``log`` (JSON lines, written before each answer is complete: the log backend blocks)."""
    policy.write_text(json.dumps(AUDIT_POLICY))
    return [
        f"--audit-policy-file={policy}",
        f"--audit-log-path={log}",
        "--audit-log-format=json",
        "--audit-log-mode=blocking",
        "--audit-log-maxsize=0",  # no rotation: one file for the cluster's life
    ]


def _stamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@dataclass(frozen=True)
class Binding:
    """One ``pods/binding`` create as the API server saw it. ``code`` is 0 for a request
    received and never answered (the server was killed in between): the body is logged only
    with the answer, so such a record has no ``uid`` nor ``node``."""

    namespace: str
    pod: str
    uid: str
    node: str
    code: int
    received: float  # the API server's wall clock, seconds since the epoch
    source: str  # the client's address (a fault proxy's source address tells processes apart)
    reason: str = ""
    message: str = ""

    @property
    def outcome_unknown(self) -> bool:
        """Cut by a crash (no body logged), answered with a 5xx, or with etcd unreachable:
        the API server may have taken it without saying so."""
        return self.code == 0 or self.code >= 500 or ETCD_UNAVAILABLE in self.message


@dataclass(frozen=True)
class NodeDeletion:
    name: str
    code: int
    received: float


def _events(path: Path) -> Iterable[JSON]:
    if not path.exists():
        return
    with path.open("rb") as f:
        for line in f:
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError:
                    continue  # the last line of a killed server may be cut


def bindings(audit_log: Path, namespace: str) -> list[Binding]:
    """The Bindings asked for pods of ``namespace``, in the order they were received."""
    received: dict[str, Binding] = {}
    answered: dict[str, Binding] = {}
    for event in _events(audit_log):
        ref = event.get("objectRef") or {}
        if ref.get("subresource") != "binding" or ref.get("namespace") != namespace:
            continue
        body = event.get("requestObject") or {}
        status = event.get("responseStatus") or {}
        record = Binding(
            namespace=namespace,
            pod=str(ref.get("name") or ""),
            uid=str((body.get("metadata") or {}).get("uid") or ""),
            node=str((body.get("target") or {}).get("name") or ""),
            code=int(status.get("code") or 0),
            received=_stamp(event["requestReceivedTimestamp"]),
            source=str((event.get("sourceIPs") or [""])[0]),
            reason=str(status.get("reason") or ""),
            message=str(status.get("message") or ""),
        )
        if event.get("stage") == "RequestReceived":
            received[event["auditID"]] = record
        elif event.get("stage") in ("ResponseComplete", "Panic"):
            answered[event["auditID"]] = record
    cut = [r for audit_id, r in received.items() if audit_id not in answered]
    return sorted([*answered.values(), *cut], key=lambda b: b.received)


def node_deletions(audit_log: Path) -> list[NodeDeletion]:
    out = []
    for event in _events(audit_log):
        ref = event.get("objectRef") or {}
        if ref.get("resource") == "nodes" and event.get("verb") == "delete":
            code = int((event.get("responseStatus") or {}).get("code") or 0)
            out.append(NodeDeletion(str(ref.get("name")), code, _stamp(event["stageTimestamp"])))
    return out


class AuditTail:
    """Follows the audit log as it grows: how many Bindings of one namespace were accepted so
    far (to time a fault "in the middle" of a burst)."""

    def __init__(self, audit_log: Path, namespace: str) -> None:
        self.path = audit_log
        self.needle = f'"namespace":"{namespace}"'.encode()
        self.offset = audit_log.stat().st_size if audit_log.exists() else 0
        self.accepted = 0
        self._partial = b""

    def poll(self) -> int:
        with self.path.open("rb") as f:
            f.seek(self.offset)
            data = self._partial + f.read()
            self.offset = f.tell()
        *lines, self._partial = data.split(b"\n")
        for line in lines:
            if b'"subresource":"binding"' in line and self.needle in line:
                event = json.loads(line)
                if (event.get("responseStatus") or {}).get("code") == 201:
                    self.accepted += 1
        return self.accepted

    def wait_for(self, accepted: int, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while self.poll() < accepted:
            assert time.monotonic() < deadline, (
                f"only {self.accepted} of {accepted} Bindings accepted after {timeout:.0f}s"
            )
            time.sleep(0.05)
        return self.accepted


@dataclass
class Verdict:
    """What a fault run did to the Bindings; ``failures`` lists every broken promise."""

    pods: int = 0
    bound: int = 0
    accepted: int = 0
    cut: int = 0  # received and never answered (a killed API server)
    committed_cut: int = 0  # pods bound by a Binding taken without a 201 (cut, or a 5xx)
    refused: Counter[str] = field(default_factory=Counter)  # "409 Conflict" -> count
    failures: list[str] = field(default_factory=list)

    def summary(self) -> str:
        refused = ", ".join(f"{k}: {v}" for k, v in sorted(self.refused.items())) or "none"
        return (
            f"{self.pods} pods, {self.bound} bound, {self.accepted} Bindings accepted, "
            f"{self.cut} cut, {self.committed_cut} taken without a 201, refused: {refused}"
        )

    def check(self) -> None:
        shown = "\n  ".join(self.failures[:20])
        more = f"\n  ... and {len(self.failures) - 20} more" if len(self.failures) > 20 else ""
        assert not self.failures, f"{self.summary()}\n  {shown}{more}"


def verdict(
    kube: Client,
    namespace: str,
    created: Mapping[str, str],
    audit_log: Path,
    *,
    gone_nodes: frozenset[str] = frozenset(),
) -> Verdict:
    """Judge the run (see the module's contract). ``created`` maps pod name -> UID; pods bound
    to one of ``gone_nodes`` (deleted by the test) are judged by the caller, not here."""
    pods = {p["metadata"]["name"]: p for p in kube.list_items("v1", "Pod", namespace)}
    by_pod: dict[str, list[Binding]] = defaultdict(list)  # names are unique within a test
    result = Verdict(pods=len(created))
    for record in bindings(audit_log, namespace):
        by_pod[record.pod].append(record)
        if record.code == 0:
            result.cut += 1
        elif record.code == 201:
            result.accepted += 1
        else:
            result.refused[f"{record.code} {record.reason}"] += 1
    for name, uid in sorted(created.items()):
        pod = pods.get(name)
        if pod is None or pod["metadata"]["uid"] != uid:
            result.failures.append(f"{name}: lost (deleted or replaced)")
            continue
        node = pod["spec"].get("nodeName") or ""
        if not node:
            result.failures.append(f"{name}: never bound")
            continue
        result.bound += 1
        accepted = [b for b in by_pod[name] if b.code == 201 and b.uid == uid]
        # Taken without a 201: cut by a crash (no body logged), or answered with a 5xx or with
        # etcd unreachable, naming this node.
        unanswered = [
            b for b in by_pod[name] if b.code == 0 or (b.outcome_unknown and b.node == node)
        ]
        if len(accepted) > 1:
            result.failures.append(f"{name}: {len(accepted)} Bindings accepted")
        elif not accepted and not unanswered:
            result.failures.append(f"{name}: bound to {node} with no Binding in the audit log")
        elif accepted and accepted[0].node != node:
            result.failures.append(f"{name}: Binding to {accepted[0].node}, bound to {node}")
        elif not accepted:
            result.committed_cut += 1
    result.failures.extend(overcommitted(kube, pods.values(), gone_nodes))
    return result


def _millicores(quantity: str) -> int:
    if quantity.endswith("m"):
        return int(quantity[:-1])
    return int(float(quantity) * 1000)


def overcommitted(kube: Client, pods: Iterable[JSON], skip: frozenset[str]) -> list[str]:
    """Nodes whose bound pods request more CPU than they allow: an engine that lost track of
    a Binding it made (forgot an assumed pod the server had bound) would place another there."""
    allocatable = {
        n["metadata"]["name"]: _millicores(n["status"]["allocatable"]["cpu"])
        for n in kube.list_items("v1", "Node")
    }
    requested: Counter[str] = Counter()
    for pod in pods:
        node = pod["spec"].get("nodeName")
        if not node or node in skip:
            continue
        for container in pod["spec"]["containers"]:
            cpu = ((container.get("resources") or {}).get("requests") or {}).get("cpu")
            if cpu:
                requested[node] += _millicores(str(cpu))
    return [
        f"node {node}: {used}m CPU requested of {allocatable.get(node, 0)}m"
        for node, used in sorted(requested.items())
        if node in allocatable and used > allocatable[node]
    ]


def wait_bound(kube: Client, namespace: str, names: Iterable[str], timeout: float) -> float:
    """Wait until every named pod has a node (or ``timeout``); returns the seconds waited.
    Never fails: :func:`verdict` says what is missing."""
    wanted = set(names)
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        try:
            pods = kube.list_items("v1", "Pod", namespace)
        except Exception:  # the API server may be restarting under a fault
            time.sleep(1.0)
            continue
        bound = {p["metadata"]["name"] for p in pods if p["spec"].get("nodeName")}
        if wanted <= bound:
            break
        time.sleep(0.5)
    return time.monotonic() - started


def engine_bound(logs: Iterable[str]) -> Counter[tuple[str, str]]:
    """(pod key, node) -> how many "Successfully bound" lines the engines' logs hold."""
    out: Counter[tuple[str, str]] = Counter()
    for text in logs:
        for line in text.splitlines():
            if "Successfully bound pod to node" not in line:
                continue
            fields = dict(_kv(line))
            out[(fields.get("pod", ""), fields.get("node", ""))] += 1
    return out


def _kv(line: str) -> Iterable[tuple[str, str]]:
    for key in ("pod", "node"):
        marker = f'{key}="'
        start = line.find(marker)
        if start >= 0:
            end = line.find('"', start + len(marker))
            yield key, line[start + len(marker) : end]


def engine_claims_agree(
    kube: Client, namespace: str, logs: Iterable[str], *, ignore: Iterable[str] = ()
) -> list[str]:
    """The engines' "Successfully bound" lines against the API: each pod at most once, and on
    the node it is bound to (pods in ``ignore``, deleted since, only the first)."""
    skip = set(ignore)
    pods = {p["metadata"]["name"]: p for p in kube.list_items("v1", "Pod", namespace)}
    failures = []
    per_pod: Counter[str] = Counter()
    for (key, node), count in engine_bound(logs).items():
        ns, _, name = key.partition("/")
        if ns != namespace:
            continue
        per_pod[name] += count
        actual = (pods.get(name) or {}).get("spec", {}).get("nodeName")
        if actual != node and name not in skip:
            failures.append(f"{name}: an engine logged it bound to {node}; the API has {actual}")
    failures += [f"{name}: logged bound {n} times" for name, n in per_pod.items() if n > 1]
    return failures


def pod_uids(kube: Client, namespace: str, names: Iterable[str]) -> dict[str, str]:
    wanted = set(names)
    return {
        p["metadata"]["name"]: p["metadata"]["uid"]
        for p in kube.list_items("v1", "Pod", namespace)
        if p["metadata"]["name"] in wanted
    }


def log_line(test: str, **figures: Any) -> str:
    """One line of figures a fault test prints (collected into the notes and the docs)."""
    shown = " ".join(f"{k}={v}" for k, v in figures.items())
    return f"[fault] {test}: {shown}"
