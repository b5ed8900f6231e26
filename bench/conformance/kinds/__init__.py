"""Scenario kinds: each one a small module that registers how its scenarios are made and judged.

A :class:`Kind` says how to build a :class:`~bench.conformance.generate.Scenario` from a seed
(nodes, running pods, pods to schedule, the profile both schedulers run, any other API objects
to create), and optionally: services to start beside the schedulers (their configuration
extras, e.g. an extender's URL), how a candidate's decision is compared with upstream's, and
whether the harness must record and restore preemption victims. Adding a kind is one module
in this package calling :func:`register`, plus its name in ``_MODULES`` (see the recipe in
docs/benchmarks/conformance.md, "Scenario kinds").

The same (kind, seed, sizes) gives the same scenario on any machine: a kind draws only from
the ``random.Random`` it is given.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import Final

from bench.conformance.compare import Decision, Trace, Verdict, compare
from bench.conformance.generate import JSON, Scenario
from corral.k8s import Client
from corral.testing import LocalCluster

Make = Callable[[random.Random, int, "Sizes"], Scenario]
Compare = Callable[[Decision, Trace, Decision], Verdict]
# Starts what the schedulers need (closed by the stack after the run); returns top-level
# KubeSchedulerConfiguration fields given to the reference and the candidates alike.
Services = Callable[[ExitStack, LocalCluster, Scenario], JSON]


@dataclass(frozen=True)
class Sizes:
    nodes: int
    running: int
    pods: int


@dataclass(frozen=True)
class Kind:
    name: str
    summary: str  # one line, shown by ``python -m bench.conformance --list-kinds``
    make: Make  # (rng, seed, sizes) -> the scenario, with ``kind`` set to ``name``
    sizes: Sizes  # the defaults; the command line may override each
    compare: Compare = compare
    # The harness lists the scenario's pods around every decision, reports the deleted ones as
    # the decision's victims and recreates them before the next scheduler decides.
    preemption: bool = False
    services: Services | None = None
    # Whether ``bench.conformance.replay`` can judge it offline (no services, no victims).
    replayable: bool = True
    # Called after each decision's copy is deleted, before the next scheduler decides: waits
    # until what the copy left behind is gone (e.g. its generated ResourceClaims).
    settle: Callable[[Client, JSON], None] | None = None
    # Given to the API server, the controller manager and every scheduler (--feature-gates).
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    # Members of a PodGroup (``Scenario.pod_groups``) are decided together, in one round per
    # group (bench.conformance.groups); other pods one by one.
    grouped: bool = False


KINDS: dict[str, Kind] = {}
# Modules registering kinds, imported on first use (each imports this package).
_MODULES: Final = (
    "basic",
    "pod_level",
    "extended",
    "profiles",
    "preemption",
    "extenders",
    "large",
    "storage",
    "dra",
    "dra_capacity",
    "dra_taints",
    "extended_dra",
    "gang",
)


def register(kind: Kind) -> Kind:
    if kind.name in KINDS:
        raise ValueError(f"scenario kind {kind.name!r} registered twice")
    KINDS[kind.name] = kind
    return kind


def _load() -> None:
    if len(KINDS) < len(_MODULES):
        for module in _MODULES:
            importlib.import_module(f"{__name__}.{module}")


def names() -> list[str]:
    _load()
    return sorted(KINDS)


def get(name: str) -> Kind:
    _load()
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(
            f"unknown scenario kind {name!r}; expected one of {', '.join(names())}"
        ) from None


def scenario(
    name: str,
    seed: int,
    *,
    nodes: int | None = None,
    running: int | None = None,
    pods: int | None = None,
) -> Scenario:
    """The scenario of kind ``name`` for ``seed``; unset sizes are the kind's defaults."""
    kind = get(name)
    sizes = Sizes(
        nodes if nodes is not None else kind.sizes.nodes,
        running if running is not None else kind.sizes.running,
        pods if pods is not None else kind.sizes.pods,
    )
    # A string seed hashes the same everywhere (random's version 2 seeding); the kind's name
    # in it keeps two kinds' scenarios for one seed independent.
    made = kind.make(random.Random(f"{name}:{seed}"), seed, sizes)
    return replace(made, kind=name)
