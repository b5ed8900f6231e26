"""Names, labels and fixed paths of the objects a profile renders to.

Contract: these are what the operator, the engine image and the tests agree on; the Dockerfile
and the engine's flags must match ``ENGINE_COMMAND``, ``CONFIG_DIR``/``CONFIG_FILE`` and
``METRICS_PORT``.
"""

from __future__ import annotations

from typing import Final

from corral.api import API_VERSION, KIND, SchedulerProfile

MANAGED_BY: Final = "corral"
APP_NAME: Final = "corral-scheduler"
COMPONENT: Final = "scheduler"
PROFILE_LABEL: Final = "corral.dev/profile"
CONFIG_HASH_ANNOTATION: Final = "corral.dev/config-hash"
CONTAINER_NAME: Final = "scheduler"

CONFIG_DIR: Final = "/etc/corral"
CONFIG_KEY: Final = "config.yaml"
CONFIG_FILE: Final = f"{CONFIG_DIR}/{CONFIG_KEY}"
ENGINE_COMMAND: Final = ("corral", "scheduler", "--config", CONFIG_FILE)
METRICS_PORT: Final = 10259
METRICS_PORT_NAME: Final = "metrics"
RUN_AS_USER: Final = 65532
LOG_LEVELS: Final = {"Normal": 2, "Debug": 4, "Trace": 6}


def base_name(profile: SchedulerProfile) -> str:
    return f"corral-{profile.name}"


def cluster_role_name(profile: SchedulerProfile) -> str:
    return f"corral:scheduler:{profile.name}"


def config_map_name(profile: SchedulerProfile) -> str:
    return f"{base_name(profile)}-config"


def leader_election_role_name(profile: SchedulerProfile) -> str:
    return f"{base_name(profile)}-leader-election"


def metrics_service_name(profile: SchedulerProfile) -> str:
    return f"{base_name(profile)}-metrics"


def selector_labels(profile: SchedulerProfile) -> dict[str, str]:
    return {"app.kubernetes.io/name": APP_NAME, "app.kubernetes.io/instance": profile.name}


def labels(profile: SchedulerProfile) -> dict[str, str]:
    return {
        **selector_labels(profile),
        "app.kubernetes.io/component": COMPONENT,
        "app.kubernetes.io/part-of": "corral",
        "app.kubernetes.io/managed-by": MANAGED_BY,
        PROFILE_LABEL: profile.name,
    }


def owner_references(profile: SchedulerProfile) -> list[dict[str, object]]:
    """The profile as controller owner, when it has a uid (read from the cluster)."""
    uid = profile.metadata.uid
    if not uid:
        return []
    return [
        {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "name": profile.name,
            "uid": uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
