"""The operator: reconcile SchedulerProfiles into running schedulers (kopf).

Imports nothing of corral but :mod:`corral.api`, :mod:`corral.render` and :mod:`corral.k8s`.
One file per concern: ``handlers`` (kopf wiring), ``reconcile`` (one profile, level-based),
``apply`` (server-side apply, no churn, pruning), ``status`` (kstatus conditions),
``events``, ``guards`` (schedulerName conflicts, node-pool overlap), ``plugin_crds`` (plugins
whose CRD the cluster does not serve), ``pending`` (the pending-pod detector), ``engines`` (the
local engine runtime), ``peering`` (hot standby), ``queue``, ``state``, ``metrics`` (and
``metrics_server``, its HTTPS endpoint), ``settings``.
The public surface::

    settings = from_sources(flags)            # flags over CORRAL_* environment over defaults
    run(settings, Client.from_kubeconfig())   # blocks until SIGINT/SIGTERM
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
import threading
from typing import Any

import kopf

from corral.controller.handlers import Operator
from corral.controller.metrics_server import MetricsServing
from corral.controller.peering import Gate, PeeringError, ensure
from corral.controller.settings import Settings, SettingsError, from_sources
from corral.k8s import Client

__all__ = [
    "MetricsServing",
    "Operator",
    "PeeringError",
    "Settings",
    "SettingsError",
    "from_sources",
    "run",
]


def own_identity() -> str:
    """A peer identity: the pod's name in a cluster, else host/pid/random (as kopf does)."""
    pod = os.environ.get("POD_NAME") or os.environ.get("POD_ID")
    if pod:
        return pod
    return f"{socket.gethostname()}/{os.getpid()}/{random.randrange(16**6):06x}"


def run(
    settings: Settings,
    client: Client,
    *,
    peering: str | None = None,  # None: standalone
    priority: int | None = None,  # None: random, so two peers never tie (a tie pauses both)
    liveness: str | None = None,
    metrics: MetricsServing | None = None,
    stop_flag: asyncio.Event | threading.Event | None = None,  # for tests and benchmarks
    ready_flag: asyncio.Event | threading.Event | None = None,
) -> None:
    identity = own_identity()
    prio = priority if priority is not None else random.randint(1, 2**31 - 1)
    if peering:
        ensure(client, peering)
    gate = Gate(client, peering, identity, prio) if peering else None
    op = Operator(settings, client, gate=gate, metrics=metrics)
    kopf_settings = kopf.OperatorSettings()
    op.configure(kopf_settings)
    kwargs: dict[str, Any] = {
        "registry": op.registry(),
        "settings": kopf_settings,
        "clusterwide": True,
        "identity": identity,
        "liveness_endpoint": liveness,
        "stop_flag": stop_flag,
        "ready_flag": ready_flag,
    }
    if peering:
        kwargs.update(peering_name=peering, priority=prio, standalone=False)
    else:
        kwargs.update(standalone=True)
    kopf.run(**kwargs)
