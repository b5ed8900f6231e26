"""Taints and tolerations: compact records, parsing from API JSON, and upstream's matching."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

NO_SCHEDULE: Final = "NoSchedule"
PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
NO_EXECUTE: Final = "NoExecute"
# Effects the Filter checks (upstream ``helper.DoNotScheduleTaintsFilterFunc``).
DO_NOT_SCHEDULE_EFFECTS: Final = frozenset({NO_SCHEDULE, NO_EXECUTE})

TAINT_NODE_UNSCHEDULABLE: Final = "node.kubernetes.io/unschedulable"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = ""


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = ""  # "" means Equal
    value: str = ""
    effect: str = ""  # "" matches every effect

    def tolerates(self, taint: Taint) -> bool:
        """Upstream ``Toleration.ToleratesTaint``."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return self.operator == "Exists"


def tolerations_tolerate(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


def find_untolerated(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], effects: frozenset[str]
) -> Taint | None:
    """The first taint with one of ``effects`` that no toleration tolerates, in node order."""
    for taint in taints:
        if taint.effect in effects and not tolerations_tolerate(tolerations, taint):
            return taint
    return None


def _text(item: Mapping[str, Any], what: str, key: str) -> str:
    """A string field of a taint or toleration; raises ``TypeError`` naming it otherwise."""
    value = item.get(key) or ""
    if not isinstance(value, str):
        raise TypeError(f"{what}.{key} must be a string, got {type(value).__name__}")
    return value


def parse_taints(raw: Sequence[Mapping[str, Any]] | None) -> tuple[Taint, ...]:
    return tuple(
        Taint(
            key=_text(t, f"taints[{i}]", "key"),
            value=_text(t, f"taints[{i}]", "value"),
            effect=_text(t, f"taints[{i}]", "effect"),
        )
        for i, t in enumerate(raw or ())
    )


def parse_tolerations(raw: Sequence[Mapping[str, Any]] | None) -> tuple[Toleration, ...]:
    return tuple(
        Toleration(
            key=_text(t, f"tolerations[{i}]", "key"),
            operator=_text(t, f"tolerations[{i}]", "operator"),
            value=_text(t, f"tolerations[{i}]", "value"),
            effect=_text(t, f"tolerations[{i}]", "effect"),
        )
        for i, t in enumerate(raw or ())
    )
