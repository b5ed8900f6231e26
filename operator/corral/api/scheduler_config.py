"""The KubeSchedulerConfiguration v1 a (defaulted) profile stands for.

Contract: :func:`to_scheduler_config` builds the config as data — one profile with the
schedulerName, plugins, pluginConfig and percentageOfNodesToScore; extenders, backoff and
leaderElection (a Lease named by the profile, in the profile's namespace) at the top level. It
is not defaulted further: the engine applies upstream defaults when it loads it.
An extender's ``tlsSecretRef`` becomes ``tlsConfig`` file paths under
:data:`EXTENDER_TLS_ROOT`, where the Deployment mounts the Secret (none outside the pods:
``mounted=False``, for ``corral validate`` and ``simulate``).
``tenancy.nodeSelector`` becomes NodeAffinityArgs.addedAffinity, ANDed into every term the user
already gave, so the engine enforces it on every pod it schedules.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from corral.api.types import ProfileExtender, SchedulerProfile
from corral.scheduler import config as cfg
from corral.scheduler.config.extender_urls import redact_url
from corral.scheduler.config.types import ExtenderTLSConfig

NODE_AFFINITY: Final = "NodeAffinity"
# Extender TLS Secrets are mounted under here (one directory per extender index).
EXTENDER_TLS_ROOT: Final = "/var/run/corral/extender-tls"


def tenancy_node_affinity(args: dict[str, Any], node_selector: dict[str, str]) -> dict[str, Any]:
    """NodeAffinity args with ``key In [value]`` for every tenancy label added to every
    required term (terms are ORed, expressions within a term ANDed)."""
    out = copy.deepcopy(args)
    if not node_selector:
        return out
    exprs = [{"key": k, "operator": "In", "values": [v]} for k, v in sorted(node_selector.items())]
    # Null or absent levels become the pool alone: nothing the user wrote can widen it.
    added = out["addedAffinity"] = out.get("addedAffinity") or {}
    key = "requiredDuringSchedulingIgnoredDuringExecution"
    required = added[key] = added.get(key) or {}
    terms = [t or {} for t in required.get("nodeSelectorTerms") or [{}]]
    for term in terms:
        term["matchExpressions"] = [*term.get("matchExpressions", []), *copy.deepcopy(exprs)]
    required["nodeSelectorTerms"] = terms
    return out


def extender_tls_dir(index: int) -> str:
    """Where extender ``index``'s ``tlsSecretRef`` Secret is mounted in the scheduler pods."""
    return f"{EXTENDER_TLS_ROOT}/{index}"


def engine_extender(index: int, ext: ProfileExtender, *, mounted: bool = True) -> cfg.Extender:
    """The engine's extender; its ``tlsSecretRef`` files where the Secret is ``mounted`` (in
    the scheduler's pods), none elsewhere."""
    out = copy.deepcopy(ext.engine_extender())
    if ext.tls_secret_ref is not None and mounted:
        tls = out.tls_config or ExtenderTLSConfig()
        where = extender_tls_dir(index)
        tls.cert_file, tls.key_file = f"{where}/tls.crt", f"{where}/tls.key"
        if not tls.ca_data:
            tls.ca_file = f"{where}/ca.crt"
        out.tls_config = tls
    return out


def to_scheduler_config(
    profile: SchedulerProfile, *, mounted: bool = True
) -> cfg.KubeSchedulerConfiguration:
    """``mounted``: for the scheduler's pods, where the extenders' ``tlsSecretRef`` Secrets are
    mounted; False outside them (``corral validate``, ``simulate``), where they are not."""
    spec = profile.spec
    le = spec.leader_election
    assert le is not None, "apply_defaults first"
    plugin_config = [
        cfg.PluginConfig(name=pc.name, args=copy.deepcopy(pc.args)) for pc in spec.plugin_config
    ]
    node_selector = spec.tenancy.node_selector if spec.tenancy else {}
    if node_selector:
        existing = next((pc for pc in plugin_config if pc.name == NODE_AFFINITY), None)
        if existing is None:
            existing = cfg.PluginConfig(name=NODE_AFFINITY, args={})
            plugin_config.append(existing)
        existing.args = tenancy_node_affinity(existing.args, node_selector)
    return cfg.KubeSchedulerConfiguration(
        leader_election=cfg.LeaderElectionConfiguration(
            leader_elect=le.leader_elect,
            lease_duration=le.lease_duration,
            renew_deadline=le.renew_deadline,
            retry_period=le.retry_period,
            resource_lock="leases",
            resource_name=le.resource_name,
            resource_namespace=spec.namespace,
        ),
        percentage_of_nodes_to_score=spec.percentage_of_nodes_to_score,
        pod_initial_backoff_seconds=spec.pod_initial_backoff_seconds,
        pod_max_backoff_seconds=spec.pod_max_backoff_seconds,
        profiles=[
            cfg.KubeSchedulerProfile(
                scheduler_name=spec.scheduler_name,
                plugins=copy.deepcopy(spec.plugins),
                plugin_config=plugin_config,
            )
        ],
        extenders=[engine_extender(i, e, mounted=mounted) for i, e in enumerate(spec.extenders)],
    )


def scheduler_config_data(profile: SchedulerProfile, *, mounted: bool = True) -> dict[str, Any]:
    """The config as JSON-shaped data (``None`` and empty fields left out); ``mounted`` as
    :func:`to_scheduler_config`."""
    return cfg.dump_config(to_scheduler_config(profile, mounted=mounted))


def unmounted_secrets(profile: SchedulerProfile) -> list[str]:
    """What a config built with ``mounted=False`` leaves out: one line per extender with a
    ``tlsSecretRef``, naming it and its Secret."""
    return [
        f"spec.extenders[{i}] ({redact_url(e.url_prefix)}): its tlsSecretRef Secret "
        f"{e.tls_secret_ref.name!r} "
        "is mounted only in the scheduler's pods"
        for i, e in enumerate(profile.spec.extenders)
        if e.tls_secret_ref is not None
    ]
