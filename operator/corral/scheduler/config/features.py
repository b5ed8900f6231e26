"""kube-scheduler's feature gates at the pinned release, and the ones Corral's engine honours.

Contract:
- :data:`TABLE` is every gate the pinned kube-scheduler knows, with its default, stage, lock and
  dependencies, exactly as the binary registers them (``feature_gates.json``, generated from the
  kube-scheduler command's own registrations by ``hack/gen-feature-gates``).
- :func:`parse_flag` reads ``--feature-gates`` as kube-scheduler does (``Name=bool`` pairs,
  comma-separated, spaces trimmed, Go's ParseBool values, an optional ``kube:`` component
  prefix) and raises :class:`FeatureGateError` with kube-scheduler's wording.
- :func:`problems` is the refusal of a set of gates: first upstream's own (an unrecognized gate
  ends the check, as upstream; a locked gate set to its other value; a gate not available at the
  emulated version; an enabled gate whose dependencies are off), then Corral's: a gate set to a
  value other than its default that the engine does not implement. Every gate at its default is
  accepted (the engine decides as upstream does with defaults).
- :class:`FeatureGates` answers ``enabled(name)`` for a validated set.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Final

from corral.scheduler.config.errors import shown

GENERIC_WORKLOAD: Final = "GenericWorkload"
TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: Final = "TopologyAwareWorkloadScheduling"
COMPOSITE_POD_GROUP: Final = "CompositePodGroup"
POD_GROUP_PREEMPTION_POLICY: Final = "PodGroupPreemptionPolicy"

# Gates the engine implements both ways: setting one to its non-default value changes decisions
# exactly as it does upstream.
IMPLEMENTED: Final = frozenset({GENERIC_WORKLOAD})
# Why a gate of the workload family is not (yet) implemented; shown in its refusal.
NOT_IMPLEMENTED_REASONS: Final = {
    TOPOLOGY_AWARE_WORKLOAD_SCHEDULING: "topology-aware placements (alpha) are not implemented",
    COMPOSITE_POD_GROUP: "CompositePodGroup hierarchies (alpha) are not implemented",
    POD_GROUP_PREEMPTION_POLICY: "the PodGroup's own preemptionPolicy (alpha) is not implemented",
}
# What the engine itself reads cluster-wide and writes (where it may bind) when a gate is on,
# beside its plugins' declarations: with GenericWorkload it watches PodGroups and writes their
# status conditions (upstream's system:kube-scheduler rules for the gate; no Workloads).
SCHEDULING_GROUP: Final = "scheduling.k8s.io"
GATE_CLUSTER_READS: Final[Mapping[str, tuple[tuple[str, str], ...]]] = {
    GENERIC_WORKLOAD: ((SCHEDULING_GROUP, "podgroups"),),
}
GATE_NAMESPACED_WRITES: Final[Mapping[str, tuple[tuple[str, str, tuple[str, ...]], ...]]] = {
    GENERIC_WORKLOAD: ((SCHEDULING_GROUP, "podgroups/status", ("patch", "update")),),
}
_COMPONENT_PREFIX: Final = "kube:"
_TABLE_FILE: Final = "feature_gates.json"
_TRUE: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE: Final = frozenset({"0", "f", "F", "FALSE", "false", "False"})


class FeatureGateError(ValueError):
    """A ``--feature-gates`` value kube-scheduler would refuse (its message)."""


@dataclass(frozen=True, slots=True)
class GateSpec:
    name: str
    default: bool
    stage: str  # ALPHA, BETA, GA, DEPRECATED or PRE-ALPHA
    locked: bool
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GateTable:
    emulation_version: str
    min_compatibility_version: str
    gates: Mapping[str, GateSpec] = field(default_factory=dict)


@functools.cache
def table() -> GateTable:
    raw = json.loads(resources.files(__package__).joinpath(_TABLE_FILE).read_text())
    gates = {str(g["name"]): _spec(g) for g in raw["gates"]}
    return GateTable(raw["emulationVersion"], raw["minCompatibilityVersion"], gates)


def _spec(g: Mapping[str, object]) -> GateSpec:
    depends = g.get("dependsOn") or ()
    assert isinstance(depends, list | tuple)
    return GateSpec(
        str(g["name"]),
        bool(g["default"]),
        str(g["stage"]),
        bool(g["locked"]),
        tuple(str(d) for d in depends),
    )


def parse_bool(text: str) -> bool | None:
    """Go's ``strconv.ParseBool``; None when it would fail."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def parse_flag(text: str) -> dict[str, bool]:
    """``Name=bool[,Name=bool...]`` as kube-scheduler's flag reads it; a later pair wins."""
    out: dict[str, bool] = {}
    for item in text.split(","):
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if name.startswith(_COMPONENT_PREFIX):
            name = name[len(_COMPONENT_PREFIX) :]
        if not sep:
            raise FeatureGateError(f"missing bool value for {name}")
        value = value.strip()
        parsed = parse_bool(value)
        if parsed is None:
            raise FeatureGateError(
                f"invalid value of {name}={value}, err: "
                f'strconv.ParseBool: parsing "{value}": invalid syntax'
            )
        out[name] = parsed
    return out


@dataclass(frozen=True, slots=True)
class Problem:
    """One refusal: the gate it is about and the message."""

    gate: str
    message: str


def upstream_problems(settings: Mapping[str, bool]) -> list[Problem]:
    """kube-scheduler's refusals of ``settings``, in its wording."""
    tab = table()
    errs: list[Problem] = []
    for name, value in settings.items():
        spec = tab.gates.get(name)
        if spec is None:  # upstream stops at the first
            return [Problem(name, f"unrecognized feature gate: {shown(name)}")]
        if spec.locked and spec.default != value:
            errs.append(
                Problem(
                    name,
                    f"cannot set feature gate {shown(name)} to {_go_bool(value)}, "
                    f"feature is locked to {_go_bool(spec.default)}",
                )
            )
        elif spec.stage == "PRE-ALPHA":
            errs.append(
                Problem(
                    name,
                    f"cannot set feature gate {shown(name)} to {_go_bool(value)}, feature is "
                    f"PreAlpha at emulated version {tab.emulation_version}, min compatibility "
                    f"version {tab.min_compatibility_version}",
                )
            )
    if errs:
        return errs
    gates = FeatureGates(settings)
    for name in sorted(tab.gates):
        spec = tab.gates[name]
        if not spec.depends_on or not gates.enabled(name):
            continue
        off = [d for d in spec.depends_on if not gates.enabled(d)]
        if off:
            errs.append(
                Problem(
                    name,
                    f"{shown(name)} is enabled, but depends on features that are disabled: "
                    f"[{' '.join(off)}]",
                )
            )
    return errs


def corral_problems(settings: Mapping[str, bool]) -> list[Problem]:
    """Gates set away from their default that the engine does not implement."""
    tab = table()
    errs: list[Problem] = []
    for name, value in settings.items():
        spec = tab.gates[name]
        if value == spec.default or name in IMPLEMENTED:
            continue
        why = NOT_IMPLEMENTED_REASONS.get(name, "the engine runs it only at its default")
        errs.append(
            Problem(
                name,
                f"{name}={_go_bool(value)} is not implemented by Corral's engine: {why} "
                f"(default {_go_bool(spec.default)}; implemented both ways: "
                f"{', '.join(sorted(IMPLEMENTED))})",
            )
        )
    return errs


def problems(settings: Mapping[str, bool]) -> list[Problem]:
    """Every refusal of ``settings``: upstream's first, Corral's only when upstream has none."""
    return upstream_problems(settings) or corral_problems(settings)


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """An explicit set of gates over the pinned defaults."""

    settings: Mapping[str, bool] = field(default_factory=dict)

    def enabled(self, name: str) -> bool:
        if name in self.settings:
            return self.settings[name]
        spec = table().gates.get(name)
        return spec.default if spec is not None else False

    @property
    def generic_workload(self) -> bool:
        return self.enabled(GENERIC_WORKLOAD)

    def flag(self) -> str:
        """The ``--feature-gates`` value for these settings, sorted by name ("" when none)."""
        return ",".join(f"{n}={_go_bool(v)}" for n, v in sorted(self.settings.items()))

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, bool]]) -> FeatureGates:
        return cls(dict(pairs))


DEFAULT: Final = FeatureGates()
