"""``corral simulate --capacity``: how many more of this pod fit, where, and what stops the next.

Contract: the engine answers, not arithmetic. Copies of the template (``<name>-<i>``, each its
own uid) are placed one at a time by the same :class:`Simulator` that ``simulate`` runs (the
profile's real plugins: affinity, spread, volumes, devices and whatever else the profile has),
each on the cluster the copies before it left, until one is not placed. That one's reason is
the engine's FailedScheduling text, which a real pod made from the template would get. A copy
placed only by preempting others ends the count too (the count is of pods that fit without
evicting anything); the answer then names whom it would have evicted. ``limit`` stops a
template that fits without bound (no requests and no pod limit reached).

This is ``kubernetes-sigs/cluster-capacity``'s question, answered for any profile; its
documented example (4 nodes of 2 CPUs and 4 GB, a 150m/100Mi pod: 52, 13 per node, then
Insufficient cpu on every node; 46 with six more such pods running) is a unit test.
"""

from __future__ import annotations

import copy
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from corral.scheduler.engine.simulate import Placement, Simulator
from corral.scheduler.framework import explanation as x

DEFAULT_LIMIT: Final = 10_000


@dataclass
class Capacity:
    template: str  # namespace/name of the template
    fits: int = 0
    per_node: Counter[str] = field(default_factory=Counter)
    # Why the next copy is not placed (the engine's message), or that it would preempt.
    reason: str = ""
    next_pod: str = ""
    would_preempt: list[str] = field(default_factory=list)
    stopped_at_limit: bool = False
    explanation: x.Explanation | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "template": self.template,
            "fits": self.fits,
            "perNode": dict(sorted(self.per_node.items())),
        }
        if self.stopped_at_limit:
            out["stoppedAtLimit"] = True
        else:
            out["next"] = {"pod": self.next_pod, "reason": self.reason}
            if self.would_preempt:
                out["next"]["wouldPreempt"] = list(self.would_preempt)
        if self.explanation is not None:
            out["explanation"] = x.to_json(self.explanation)
        return out


def copy_of(template: Mapping[str, Any], index: int) -> dict[str, Any]:
    pod = copy.deepcopy(dict(template))
    meta = pod["metadata"] = dict(pod.get("metadata") or {})
    base = str(meta.get("name") or meta.get("generateName") or "pod").rstrip("-")
    meta["name"] = f"{base}-{index}"
    meta.pop("generateName", None)
    meta["uid"] = str(uuid.uuid4())
    return pod


def _key(template: Mapping[str, Any]) -> str:
    meta = template.get("metadata") if isinstance(template.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or meta.get('generateName')}"


def capacity(
    simulator: Simulator,
    template: Mapping[str, Any],
    *,
    limit: int = DEFAULT_LIMIT,
    explain: bool = False,
    on_placed: Callable[[Placement], None] | None = None,
) -> Capacity:
    """Place copies of ``template`` on ``simulator`` until one is not placed (or ``limit``)."""
    out = Capacity(_key(template))
    for index in range(limit + 1):
        if index == limit:
            out.stopped_at_limit = True
            return out
        pod = copy_of(template, index)
        placement = simulator.schedule(pod, explain=explain)
        if placement.placed and not placement.victims:
            out.fits += 1
            assert placement.node is not None
            out.per_node[placement.node] += 1
            if on_placed is not None:
                on_placed(placement)
            continue
        out.next_pod = placement.pod
        out.explanation = placement.explanation
        if placement.placed:
            out.would_preempt = list(placement.victims)
            out.reason = (
                f"fits on {placement.node} only by preempting {', '.join(placement.victims)}"
            )
        else:
            out.reason = placement.message
        return out
    return out  # pragma: no cover - the loop returns
