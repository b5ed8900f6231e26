"""Deciding whether a candidate scheduler agreed with upstream kube-scheduler on one pod.

Upstream breaks ties at random (``selectHost``: among nodes with the highest total score, a
random one wins), so "same node" is the wrong test. With ``percentageOfNodesToScore: 100``
upstream scores *every* feasible node, and at ``-v=10`` it logs each node's final score
("Calculated node's final score for pod"). The reference's top set is the nodes sharing the
highest score; the candidate agrees when:

- upstream bound the pod and the candidate chose a node in that top set (when upstream found a
  single feasible node it skips scoring and logs nothing: the top set is that node); or
- neither could place the pod and their FailedScheduling messages (the PodScheduled=False
  condition message) are identical.

Anything else is a disagreement: a different node, placed versus unschedulable, a different
message, or no decision at all.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Final

LOG_LINE: Final = re.compile(r'^[IWE]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\] "(?P<msg>[^"]+)" (?P<kv>.*)$')
KEY_VALUE: Final = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')

ATTEMPT: Final = "Attempting to schedule pod"
# A member's attempt within its pod group's cycle (schedule_one_podgroup.go, -v=4).
MEMBER_ATTEMPT: Final = "Attempting to schedule a pod belonging to a pod group"
PLUGIN_SCORE: Final = "Plugin scored node for pod"
FINAL_SCORE: Final = "Calculated node's final score for pod"
BOUND: Final = "Successfully bound pod to node"


@dataclass
class Decision:
    """What one scheduler did with a pod, as seen through the API."""

    node: str | None = None  # spec.nodeName once bound
    reason: str | None = None  # PodScheduled=False reason (Unschedulable, SchedulerError)
    message: str | None = None  # PodScheduled=False message (the FailedScheduling text)
    timed_out: bool = False
    # Preemption kinds only: status.nominatedNodeName when it was unschedulable, and the
    # scenario's pods ("namespace/name") deleted while it was being decided.
    nominated: str | None = None
    victims: list[str] = field(default_factory=list)
    # Grouped kinds only: its PodGroup's PodGroupInitiallyScheduled condition, as text.
    group: str | None = None

    def describe(self) -> str:
        if self.timed_out:
            return "no decision (timed out)"
        if self.node:
            return f"bound to {self.node}"
        return f"{self.reason}: {self.message}"


@dataclass
class Trace:
    """Upstream's scores for the pod's successful attempt (empty when it scored nothing)."""

    final: dict[str, int] = field(default_factory=dict)
    plugins: dict[str, dict[str, int]] = field(default_factory=dict)  # node -> plugin -> score
    bound: str | None = None

    def top(self) -> set[str]:
        if not self.final:
            return {self.bound} if self.bound else set()
        best = max(self.final.values())
        return {node for node, score in self.final.items() if score == best}


@dataclass
class Verdict:
    agree: bool
    # placed | unschedulable | node-differs | placed-vs-unschedulable | message-differs | timeout
    kind: str
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def compare(reference: Decision, trace: Trace, candidate: Decision) -> Verdict:
    if candidate.timed_out or reference.timed_out:
        who = "candidate" if candidate.timed_out else "upstream"
        return Verdict(False, "timeout", f"{who} made no decision")
    if reference.node:
        top = trace.top() or {reference.node}
        if candidate.node is None:
            return Verdict(
                False,
                "placed-vs-unschedulable",
                f"upstream bound to {reference.node} (top {sorted(top)}); candidate: "
                f"{candidate.describe()}",
            )
        if candidate.node in top:
            return Verdict(True, "placed", f"{candidate.node} in top set of {len(top)}")
        return Verdict(False, "node-differs", explain_scores(trace, candidate.node))
    if candidate.node:
        return Verdict(
            False,
            "placed-vs-unschedulable",
            f"upstream: {reference.describe()}; candidate bound to {candidate.node}",
        )
    if (reference.reason, reference.message) == (candidate.reason, candidate.message):
        return Verdict(True, "unschedulable", reference.message or "")
    return Verdict(
        False,
        "message-differs",
        f"upstream: {reference.reason}: {reference.message!r}\n"
        f"candidate: {candidate.reason}: {candidate.message!r}",
    )


def explain_scores(trace: Trace, chosen: str) -> str:
    """Upstream's view of the candidate's node next to its best nodes, plugin by plugin."""
    top = sorted(trace.top())
    lines = []
    if chosen not in trace.final:
        lines.append(f"candidate chose {chosen}, which upstream did not score (not feasible?)")
    else:
        lines.append(
            f"candidate chose {chosen} (upstream total {trace.final[chosen]}); upstream's top "
            f"{top[:5]} scored {trace.final[top[0]] if top else '?'}"
        )
    for node in [*top[:3], chosen]:
        if node in trace.plugins:
            parts = ", ".join(f"{p}={s}" for p, s in sorted(trace.plugins[node].items()))
            lines.append(f"  {node}: {parts}")
    return "\n".join(lines)


class LogParser:
    """Incremental parser of a kube-scheduler log written with ``--vmodule=schedule_one=10``.

    Keeps, per pod (``namespace/name``), the scores of its latest attempt and the node it was
    bound to. Feed it whole lines in order."""

    def __init__(self) -> None:
        self.traces: dict[str, Trace] = {}
        self._partial = ""

    def feed(self, text: str) -> None:
        text = self._partial + text
        lines = text.split("\n")
        self._partial = lines.pop()  # an unfinished last line waits for the next chunk
        for line in lines:
            self._line(line)

    def _line(self, line: str) -> None:
        match = LOG_LINE.match(line)
        if not match:
            return
        message = match["msg"]
        if message not in (ATTEMPT, MEMBER_ATTEMPT, PLUGIN_SCORE, FINAL_SCORE, BOUND):
            return
        values = {k: v.strip('"') for k, v in KEY_VALUE.findall(match["kv"])}
        pod = values.get("pod")
        if not pod:
            return
        if message in (ATTEMPT, MEMBER_ATTEMPT):
            self.traces[pod] = Trace()
            return
        trace = self.traces.setdefault(pod, Trace())
        if message == PLUGIN_SCORE:
            trace.plugins.setdefault(values["node"], {})[values["plugin"]] = int(values["score"])
        elif message == FINAL_SCORE:
            trace.final[values["node"]] = int(values["score"])
        else:
            trace.bound = values["node"]
