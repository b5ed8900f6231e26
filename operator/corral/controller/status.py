"""A profile's status as data: kstatus conditions, the status patch, the transition to announce.

Contract (kstatus, so Argo CD and Flux read health without custom scripts):
- ``Ready``, ``Reconciling`` and ``Stalled`` are always present. Exactly one outcome holds:
  ready (``Ready=True``), progressing (``Reconciling=True``, ``Ready=False``) or stalled
  (``Stalled=True``, ``Ready=False``); the other two conditions are ``False``.
- Every condition and ``status.observedGeneration`` carry the generation they describe.
- ``lastTransitionTime`` changes only when a condition's status changes, so an unchanged
  outcome produces an identical status and therefore no write.
- Extra conditions (``NodePoolOverlap``) are informational; kstatus ignores them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypedDict

READY: Final = "Ready"
RECONCILING: Final = "Reconciling"
STALLED: Final = "Stalled"
NODE_POOL_OVERLAP: Final = "NodePoolOverlap"
# Written by a shadow profile's engine (corral.scheduler.engine.shadow), never by the operator.
SHADOW: Final = "shadow"

OutcomeKind = Literal["ready", "progressing", "stalled"]


class Condition(TypedDict, total=False):
    """A metav1.Condition of the profile's status (kstatus reads Ready, Reconciling, Stalled)."""

    type: str
    status: str  # "True" | "False" | "Unknown"
    reason: str
    message: str
    observedGeneration: int
    lastTransitionTime: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one reconcile concluded."""

    kind: OutcomeKind
    reason: str  # CamelCase
    message: str


@dataclass(frozen=True, slots=True)
class Extra:
    """An informational condition: present with status True, or absent."""

    type: str
    reason: str
    message: str


def ready(message: str) -> Outcome:
    return Outcome("ready", "Ready", message)


def progressing(reason: str, message: str) -> Outcome:
    return Outcome("progressing", reason, message)


def stalled(reason: str, message: str) -> Outcome:
    return Outcome("stalled", reason, message)


def _condition(
    type_: str,
    status: bool,
    reason: str,
    message: str,
    *,
    generation: int,
    previous: Mapping[str, Condition],
    now: str,
) -> Condition:
    value = "True" if status else "False"
    before = previous.get(type_)
    changed = before is None or before.get("status") != value
    stamp = now if changed or before is None else before.get("lastTransitionTime", now)
    return {
        "type": type_,
        "status": value,
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
        "lastTransitionTime": stamp,
    }


def conditions(
    outcome: Outcome,
    generation: int,
    previous: Sequence[Condition],
    now: str,
    extras: Sequence[Extra] = (),
) -> list[Condition]:
    """The conditions for ``outcome``, keeping transition times of unchanged ones."""
    ctx: dict[str, Any] = {
        "generation": generation,
        "previous": {c.get("type", ""): c for c in previous},
        "now": now,
    }
    kind = outcome.kind
    quiet = ("AsExpected", "")

    def own(which: OutcomeKind) -> tuple[str, str]:
        return (outcome.reason, outcome.message) if kind == which else quiet

    out = [
        _condition(READY, kind == "ready", outcome.reason, outcome.message, **ctx),
        _condition(RECONCILING, kind == "progressing", *own("progressing"), **ctx),
        _condition(STALLED, kind == "stalled", *own("stalled"), **ctx),
    ]
    out += [_condition(e.type, True, e.reason, e.message, **ctx) for e in extras]
    return out


def build(
    *,
    outcome: Outcome,
    generation: int,
    previous: Mapping[str, Any],
    now: str,
    extras: Sequence[Extra] = (),
    scheduler_name: str | None = None,
    namespace: str | None = None,
    config_hash: str | None = None,
    leader: str | None = None,
    replicas: int | None = None,
    ready_replicas: int | None = None,
    pending_pods: int | None = None,
    shadow: bool = False,
) -> dict[str, Any]:
    """The whole status. A stalled profile keeps the config hash and counts it had: they still
    describe what is running, which a stall leaves untouched. ``status.shadow`` belongs to a
    shadow's engine: kept as it is while the profile is a shadow (so the patch never names it),
    dropped when it no longer is."""
    status: dict[str, Any] = {
        "observedGeneration": generation,
        "conditions": conditions(outcome, generation, previous.get("conditions", []), now, extras),
    }
    carried = {
        # The defaulted values, so that `kubectl get sp` shows them for profiles relying on
        # the operator's defaults (printer columns cannot read defaults from spec).
        "schedulerName": scheduler_name,
        "namespace": namespace,
        "configHash": config_hash,
        "leader": leader,
        "replicas": replicas,
        "readyReplicas": ready_replicas,
        "pendingPods": pending_pods,
    }
    for key, value in carried.items():
        kept = previous.get(key) if value is None and outcome.kind == "stalled" else value
        if kept is not None:
            status[key] = kept
    if shadow and previous.get(SHADOW) is not None:
        status[SHADOW] = previous[SHADOW]
    return status


def merge_patch(previous: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any] | None:
    """A JSON merge patch turning ``previous`` into ``desired`` (``None`` = already equal).
    Keys only in ``previous`` are removed with ``null``; lists are replaced whole."""
    patch: dict[str, Any] = {k: v for k, v in desired.items() if previous.get(k) != v}
    patch.update({k: None for k in previous if k not in desired})
    return patch or None


def summary(conds: Sequence[Condition]) -> tuple[str, str, str]:
    """What an Event announces a change of: Ready's status and reason, and Stalled's status."""
    by_type = {c.get("type"): c for c in conds}
    ready_c = by_type.get(READY, {})
    stalled_c = by_type.get(STALLED, {})
    return (
        str(ready_c.get("status", "Unknown")),
        str(ready_c.get("reason", "")),
        str(stalled_c.get("status", "Unknown")),
    )
