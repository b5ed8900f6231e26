"""Everything the engine checks when it starts, run offline: no API server, no credentials.

Contract: :func:`check_startable` raises :class:`ValidationError` for exactly the problems that
would stop :class:`corral.scheduler.engine.Engine` from starting with this configuration (a
plugin the engine does not implement, plugin args its constructor refuses, unusable extender
TLS material or timeouts, leader election timings the elector refuses). ``corral validate`` and
``corral scheduler`` (before it loads credentials) call it, so a configuration that passes
always starts; the engine builds the same parts with the same functions.
"""

from __future__ import annotations

from corral.scheduler.config import FieldError, ValidationError
from corral.scheduler.engine.frameworks import (
    EngineConfig,
    build_frameworks,
    defaulted,
    engine_registry,
    load_extenders,
)
from corral.scheduler.engine.leaderelection import LeaderElectionConfig
from corral.scheduler.framework.types import PodInfo

_DURATION_FIELDS = ("leaseDuration", "renewDeadline", "retryPeriod")


def leader_election_config(engine: EngineConfig, identity: str) -> LeaderElectionConfig:
    """The elector's settings from ``leaderElection``; raises :class:`ValidationError`."""
    election = engine.config.leader_election
    try:
        return LeaderElectionConfig(
            namespace=defaulted(election.resource_namespace, "resourceNamespace"),
            name=defaulted(election.resource_name, "resourceName"),
            identity=identity,
            lease_duration=engine.seconds(election.lease_duration),
            renew_deadline=engine.seconds(election.renew_deadline),
            retry_period=engine.seconds(election.retry_period),
        )
    except ValueError as exc:  # "<field> must be ...": the message names the field
        first = str(exc).split()[0]
        where = f"leaderElection.{first}" if first in _DURATION_FIELDS else "leaderElection"
        raise ValidationError([FieldError(where, str(exc))]) from None


def _no_binding(pod: PodInfo, node_name: str) -> None:
    raise RuntimeError("preflight never binds")


def check_startable(engine: EngineConfig) -> None:
    """Build what the engine builds at start, and throw it away."""
    errors: list[FieldError] = []
    for build in (
        lambda: build_frameworks(engine, engine_registry(), _no_binding),
        lambda: load_extenders(engine),
        lambda: (
            engine.config.leader_election.leader_elect is False
            or leader_election_config(engine, "preflight")
        ),
    ):
        try:
            build()
        except ValidationError as exc:
            errors += exc.errors
    if errors:
        raise ValidationError(errors)
