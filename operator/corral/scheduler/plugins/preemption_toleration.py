"""PreemptionToleration (PostFilter) — scheduler-plugins' semantics (SP
``pkg/preemptiontoleration``, KEP 205).

Preemption as DefaultPreemption's evaluator does it, except that a victim's PriorityClass may
let it tolerate preemptors (annotations ``preemption-toleration.scheduling.x-k8s.io/``):

- ``minimum-preemptable-priority`` (int32; default the class's value + 1): a preemptor of at
  least this priority preempts the pod as usual;
- ``toleration-seconds`` (int64; default 0): below that priority the pod tolerates the
  preemptor for this long after it was scheduled (its ``PodScheduled=True`` condition's
  ``lastTransitionTime``; a pod without one tolerates); negative: forever; 0: not at all.

A victim candidate without ``priorityClassName`` never tolerates; one whose class is missing
makes its node's status an Error (``priorityclass.scheduling.k8s.io "<name>" not found``); one
whose annotations do not parse does not tolerate. A preemptor with ``preemptionPolicy: Never``
is tolerated by every pod (and is not eligible anyway). The rest is SP's copy of 1.35's
DefaultPreemption: a node without victims says ``No victims found on node <node> for preemptor
pod <pod>``, PDBs are charged with 1.36's ``filterPodsWithPDBViolation`` (every matching PDB),
and any lower-priority terminating pod on the nominated node makes the preemptor not eligible.

Corral's differences: the evaluator is the engine's (upstream 1.37's messages, and the engine's
asynchronous executor, where SP v0.35 preempts synchronously); a tenant scheduler's executor
still keeps other tenants' pods out of the victims.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

from corral.scheduler.config import plugin_args
from corral.scheduler.config.args import PreemptionTolerationArgs
from corral.scheduler.framework import listers
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.diagnosis import NodeToStatus
from corral.scheduler.framework.interface import Handle, PostFilterResult
from corral.scheduler.framework.status import Status, StatusError
from corral.scheduler.framework.types import PodInfo
from corral.scheduler.plugins import names
from corral.scheduler.plugins.helper.preemption.evaluator import Evaluator

NAME: Final = names.PREEMPTION_TOLERATION
ANNOTATION_PREFIX: Final = "preemption-toleration.scheduling.x-k8s.io/"
MINIMUM_PREEMPTABLE_PRIORITY: Final = ANNOTATION_PREFIX + "minimum-preemptable-priority"
TOLERATION_SECONDS: Final = ANNOTATION_PREFIX + "toleration-seconds"
NO_VICTIMS: Final = "No victims found on node {node} for preemptor pod {pod}"
CLASS_NOT_FOUND: Final = 'priorityclass.scheduling.k8s.io "{name}" not found'

_DECIMAL = re.compile(r"[+-]?[0-9]+")


def parse_int(text: str, bits: int) -> int:
    """Go's ``strconv.ParseInt(text, 10, bits)``; raises ValueError with Go's message."""
    if not _DECIMAL.fullmatch(text):
        raise ValueError(f'strconv.ParseInt: parsing "{text}": invalid syntax')
    value = int(text)
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise ValueError(f'strconv.ParseInt: parsing "{text}": value out of range')
    return value


def parse_policy(priority_class: Mapping[str, Any]) -> tuple[int, int]:
    """SP ``parsePreemptionTolerationPolicy``: (minimum preemptable priority, toleration
    seconds) of a PriorityClass; raises ValueError when an annotation does not parse."""
    annotations = (priority_class.get("metadata") or {}).get("annotations") or {}
    minimum = annotations.get(MINIMUM_PREEMPTABLE_PRIORITY)
    seconds = annotations.get(TOLERATION_SECONDS)
    value = int(priority_class.get("value") or 0)
    return (
        value + 1 if minimum is None else parse_int(str(minimum), 32),
        0 if seconds is None else parse_int(str(seconds), 64),
    )


def scheduled_at(pod: PodInfo) -> float | None:
    """The ``lastTransitionTime`` of the pod's first ``PodScheduled`` condition when it is
    True; None otherwise."""
    for condition in (pod.raw.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "PodScheduled":
            if condition.get("status") != "True":
                return None
            try:
                when = str(condition.get("lastTransitionTime") or "").replace("Z", "+00:00")
                return datetime.fromisoformat(when).timestamp()
            except ValueError:
                return None
    return None


def _duration_seconds(seconds: int) -> float:
    """``time.Duration(seconds) * time.Second`` in seconds, wrapping as Go's int64 does."""
    nanos = (seconds * 10**9 + 2**63) % 2**64 - 2**63
    return nanos / 1e9


def exempted(
    victim: PodInfo,
    preemptor: PodInfo,
    priority_class: Callable[[str], Mapping[str, Any] | None],
    now: float,
) -> bool:
    """SP ``ExemptedFromPreemption``: whether ``victim`` tolerates ``preemptor`` at ``now``.

    Raises :class:`StatusError` (Error) when the victim's PriorityClass does not exist."""
    class_name = str((victim.raw.get("spec") or {}).get("priorityClassName") or "")
    if not class_name:
        return False
    pc = priority_class(class_name)
    if pc is None:
        raise StatusError(Status.error(CLASS_NOT_FOUND.format(name=class_name)))
    if preemptor.preemption_policy == "Never":
        return True
    try:
        minimum, seconds = parse_policy(pc)
    except ValueError:  # SP logs it: the victim cannot tolerate
        return False
    if preemptor.priority >= minimum:
        return False
    if seconds < 0:
        return True
    since = scheduled_at(victim)
    if since is None:
        return True
    return since + _duration_seconds(seconds) > now


class PreemptionToleration:
    name: str = NAME

    def __init__(
        self,
        args: PreemptionTolerationArgs,
        handle: Handle,
        *,
        rng: random.Random | None = None,
        clock: Any = time.time,
    ) -> None:
        self.handle = handle
        self.clock = clock
        # The shared evaluator with SP's differences: victims that tolerate the preemptor are
        # left out, every matching PDB is charged (SP's copy of 1.36), any deleting pod on the
        # nominated node blocks it.
        self.evaluator = Evaluator(
            NAME,
            handle,
            args,
            rng=rng,
            clock=clock,
            victim_filter=self._not_exempted,
            no_victims=lambda node, pod: NO_VICTIMS.format(node=node, pod=pod.name),
            charge_every_pdb=True,
            blocks_nomination=lambda other: other.deleting,
        )

    def _not_exempted(self, preemptor: PodInfo) -> Callable[[PodInfo], bool]:
        objects = self.handle.objects
        now = float(self.clock())

        def priority_class(name: str) -> Mapping[str, Any] | None:
            return objects.get(listers.PRIORITY_CLASS, "", name) if objects is not None else None

        return lambda victim: not exempted(victim, preemptor, priority_class, now)

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        return self.evaluator.preempt(state, pod, statuses)


def new(args: object, handle: Handle) -> PreemptionToleration:
    return PreemptionToleration(plugin_args(NAME, args), handle)
