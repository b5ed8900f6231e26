"""Defaults of a SchedulerProfile.

Contract: :func:`apply_defaults` returns a new profile with every optional knob the renderer
needs filled in; the CRD's ``default:`` values say the same thing, so a profile read back from
the API server and one read from a file render alike. Plugin args are not defaulted here: the
engine applies upstream defaults when it loads the rendered config.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Final

from corral import __version__
from corral.api.types import LeaderElectionSpec, SchedulerProfile

# A profile's scheduler fields default as a KubeSchedulerConfiguration's do (one source).
from corral.scheduler.config.defaults import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE,
    DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
    DEFAULT_POD_MAX_BACKOFF_SECONDS,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
)

DEFAULT_NAMESPACE: Final = "corral-system"
IMAGE_REPOSITORY: Final = "ghcr.io/corral-dev/corral"
DEFAULT_IMAGE: Final = f"{IMAGE_REPOSITORY}:{__version__}"  # the release's own image
DEFAULT_REPLICAS: Final = 2
DEFAULT_LOG_LEVEL: Final = "Normal"


@dataclass(frozen=True, slots=True)
class OperatorDefaults:
    """Defaults the operator decides (flags/environment), not the profile's author."""

    namespace: str = DEFAULT_NAMESPACE
    image: str = DEFAULT_IMAGE
    # Whether a profile may put its Lease (and the Role granting update on it) where other
    # components hold theirs: kube-system, kube-node-lease (corral.api.validation).
    allow_system_leases: bool = False


def apply_defaults(
    profile: SchedulerProfile, operator: OperatorDefaults | None = None
) -> SchedulerProfile:
    ops = operator or OperatorDefaults()
    out = copy.deepcopy(profile)
    spec = out.spec
    spec.scheduler_name = spec.scheduler_name or out.metadata.name
    spec.namespace = spec.namespace or ops.namespace
    spec.image = spec.image or ops.image
    if spec.replicas is None:
        spec.replicas = DEFAULT_REPLICAS
    spec.log_level = spec.log_level or DEFAULT_LOG_LEVEL
    le = spec.leader_election = spec.leader_election or LeaderElectionSpec()
    if le.leader_elect is None:
        le.leader_elect = True
    le.lease_duration = le.lease_duration or DEFAULT_LEASE_DURATION
    le.renew_deadline = le.renew_deadline or DEFAULT_RENEW_DEADLINE
    le.retry_period = le.retry_period or DEFAULT_RETRY_PERIOD
    le.resource_name = le.resource_name or out.metadata.name
    if spec.percentage_of_nodes_to_score is None:
        spec.percentage_of_nodes_to_score = DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE
    if spec.pod_initial_backoff_seconds is None:
        spec.pod_initial_backoff_seconds = DEFAULT_POD_INITIAL_BACKOFF_SECONDS
    if spec.pod_max_backoff_seconds is None:
        spec.pod_max_backoff_seconds = DEFAULT_POD_MAX_BACKOFF_SECONDS
    return out
