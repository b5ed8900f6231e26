"""The KubeSchedulerConfiguration scheduler-plugins' Helm chart renders
(kubernetes-sigs/scheduler-plugins ``manifests/install/charts/as-a-second-scheduler``, chart
0.34.7 at 903da7df): ``templates/configmap.yaml``'s ``scheduler-config.yaml``, built from the
chart's ``values.yaml`` defaults as ``helm template -n <namespace>`` would (``--set`` overrides
go into ``values``). Built as data, never as YAML text."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

JSON = dict[str, Any]

# The values the template reads, at the chart's defaults (values.yaml).
CHART_VALUES: Mapping[str, Any] = {
    "scheduler": {"name": "scheduler-plugins-scheduler", "leaderElect": False},
    "plugins": {
        "enabled": [
            "Coscheduling",
            "CapacityScheduling",
            "NodeResourceTopologyMatch",
            "NodeResourcesAllocatable",
        ],
        "disabled": ["PrioritySort"],
    },
    "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}}],
}


def values(**overrides: Any) -> JSON:
    """The chart's defaults with top-level keys replaced (``--set scheduler.name=...`` is
    ``values(scheduler={...})``)."""
    out = copy.deepcopy(dict(CHART_VALUES))
    out.update(copy.deepcopy(overrides))
    return out


def _title(name: str) -> str:
    """sprig's ``title``: the first letter of each word upper-cased, the rest left as it is."""
    return re.sub(r"(^|[^\w])([a-z])", lambda m: m.group(1) + m.group(2).upper(), name)


def scheduler_config(chart_values: Mapping[str, Any], namespace: str) -> JSON:
    """``scheduler-config.yaml`` of the chart's ConfigMap."""
    scheduler, plugins = chart_values["scheduler"], chart_values["plugins"]
    profile: JSON = {
        "schedulerName": scheduler["name"],
        "plugins": {
            "multiPoint": {
                "enabled": [{"name": _title(p)} for p in plugins["enabled"]],
                "disabled": [{"name": _title(p)} for p in plugins["disabled"]],
            }
        },
    }
    if chart_values.get("pluginConfig"):
        profile["pluginConfig"] = copy.deepcopy(chart_values["pluginConfig"])
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {
            "leaderElect": scheduler["leaderElect"],
            "resourceNamespace": namespace,
            "resourceName": scheduler["name"],
        },
        "profiles": [profile],
    }


def scheduler_profile(config: Mapping[str, Any], name: str) -> JSON:
    """The SchedulerProfile carrying the chart's profile: its scheduler name, plugins (the
    multiPoint layout as the chart writes it) and pluginConfig; one replica, as the chart's
    ``leaderElect: false`` allows."""
    (profile,) = config["profiles"]
    spec: JSON = {
        "schedulerName": profile["schedulerName"],
        "replicas": 1,
        "leaderElection": {"leaderElect": config["leaderElection"]["leaderElect"]},
        "plugins": copy.deepcopy(profile["plugins"]),
    }
    if profile.get("pluginConfig"):
        spec["pluginConfig"] = copy.deepcopy(profile["pluginConfig"])
    return {"apiVersion": "corral.dev/v1alpha1", "kind": "SchedulerProfile",
            "metadata": {"name": name, "uid": "u"}, "spec": spec}  # fmt: skip
