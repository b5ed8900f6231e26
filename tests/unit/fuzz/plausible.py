"""Plausible documents: shaped like the real types (every field typed as the dataclasses say),
values from small pools of edge cases, so many are valid and reach the engine's start checks.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from hypothesis import strategies as st

from corral.api import types as api_types
from corral.api.catalog import default_catalog
from corral.scheduler.config import ARGS
from corral.scheduler.config import types as config_types
from corral.scheduler.config.decode import json_name

DURATIONS = [
    "1s",
    "2s",
    "10s",
    "15s",
    "0s",
    "500ms",
    "1h",
    "1m30s",
    "0.001s",
    "2562047h",
    "2562048h",
    "99999999999h",
    "-1s",
    "1ns",
    "111s" * 20 + "!",  # backtracked exponentially in the old grammar (about a minute here)
]
_INTS = [0, 1, 2, 3, 5, 10, 50, 100, 101, -1, 2**31 - 1, 2**31, 2**40]
_FLOATS = [0.0, 0.5, 1.0, 2.0, 100.0, -1.0, 1e300]
_PLUGIN_NAMES = sorted(default_catalog().registry())
# Pools by JSON field name; other strings come from _STRINGS.
_BY_FIELD: dict[str, list[Any]] = {
    "name": [*_PLUGIN_NAMES, "*", "cpu", "memory", "example.com/gpu"],
    "schedulerName": ["fuzzed", "other", "default-scheduler"],
    "topologyKey": ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "no-such-key"],
    "urlPrefix": ["http://127.0.0.1:1/x", "https://127.0.0.1:1", "http://e:1", "127.0.0.1"],
    "filterVerb": ["filter"],
    "prioritizeVerb": ["prioritize", ""],
    "bindVerb": ["bind"],
    "preemptVerb": ["preempt"],
    "namespaces": ["team-a", "team-b"],
    "namespace": ["corral-system", "team-a", "kube-system"],
    "image": ["corral:dev"],
    "resourceName": ["fuzzed", "kube-scheduler"],
    "resourceNamespace": ["kube-system", "team-a"],
    "certData": ["", "not pem", "LS0tLS1CRUdJTg=="],
    "keyData": ["", "not pem"],
    "caData": ["", "not pem"],
    "certFile": ["/nonexistent/cert"],
    "keyFile": ["/nonexistent"],
    "caFile": ["/nonexistent/ca"],
    "kubeconfig": ["/nonexistent/kubeconfig"],
}
_STRINGS = [
    "cpu",
    "memory",
    "example.com/gpu",
    "LeastAllocated",
    "MostAllocated",
    "RequestedToCapacityRatio",
    "List",
    "System",
    "DoNotSchedule",
    "ScheduleAnyway",
    "Honor",
    "Ignore",
    "In",
    "NotIn",
    "Exists",
    "Gt",
    "zone",
    "a",
    "",
    "filter",
    "score",
]


def typed(tp: Any, key: str = "", meta: Any = None) -> st.SearchStrategy[Any]:
    """Values shaped like ``tp`` (a config dataclass or field type), edge cases included."""
    origin, targs = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return typed(next(a for a in targs if a is not type(None)), key, meta)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = typing.get_type_hints(tp)
        fields = {
            json_name(f): typed(hints[f.name], json_name(f), f.metadata)
            for f in dataclasses.fields(tp)
        }
        required = {
            json_name(f): fields[json_name(f)]
            for f in dataclasses.fields(tp)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
        optional = {k: v for k, v in fields.items() if k not in required}
        return st.fixed_dictionaries(required, optional=optional)
    if origin is typing.Literal:
        return st.sampled_from(targs)
    if origin is list:
        return st.lists(typed(targs[0], key), max_size=3)
    if origin is dict:
        return st.dictionaries(st.sampled_from(_STRINGS), typed(targs[1]), max_size=2)
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.sampled_from(_INTS) | st.integers(-3, 120)
    if tp is float:
        return st.sampled_from(_FLOATS)
    if tp is str:
        if meta and meta.get("duration"):
            return st.sampled_from(DURATIONS)
        return st.sampled_from(_BY_FIELD.get(key, _STRINGS))
    return st.sampled_from([{}, {"a": 1}, [], "x", 1])  # Any


def _plugin_config() -> st.SearchStrategy[dict[str, Any]]:
    args_types = {n: a.type for n, a in ARGS.items() if n in _PLUGIN_NAMES}
    return st.sampled_from(sorted(args_types)).flatmap(
        lambda n: st.fixed_dictionaries({"name": st.just(n), "args": typed(args_types[n])})
    )


# Most extenders take part in filtering, as most real ones do.
_EXTENDERS = typed(config_types.Extender).map(lambda e: {"filterVerb": "filter", **e})


def profiles() -> st.SearchStrategy[dict[str, Any]]:
    spec = st.fixed_dictionaries(
        {"schedulerName": st.just("fuzzed")},
        optional={
            "replicas": st.sampled_from([1, 2, 3]),
            "leaderElection": typed(api_types.LeaderElectionSpec),
            "podInitialBackoffSeconds": typed(int),
            "podMaxBackoffSeconds": typed(int),
            "percentageOfNodesToScore": typed(int),
            "plugins": typed(config_types.Plugins),
            "pluginConfig": st.lists(_plugin_config(), max_size=3),
            "extenders": st.lists(_EXTENDERS, max_size=2),
            "tenancy": st.fixed_dictionaries(
                {"nodeSelector": st.just({"pool": "a"})},
                optional={"namespaces": st.just(["team-a"])},
            )
            | typed(api_types.Tenancy),
        },
    )
    return spec.map(
        lambda s: {
            "apiVersion": api_types.API_VERSION,
            "kind": api_types.KIND,
            "metadata": {"name": "fuzzed"},
            "spec": s,
        }
    )


def configs() -> st.SearchStrategy[dict[str, Any]]:
    profile = st.fixed_dictionaries(
        {"schedulerName": st.sampled_from(["fuzzed", "other"])},
        optional={
            "plugins": typed(config_types.Plugins),
            "pluginConfig": st.lists(_plugin_config(), max_size=3),
            "percentageOfNodesToScore": typed(int),
        },
    )
    return st.fixed_dictionaries(
        {
            "apiVersion": st.just("kubescheduler.config.k8s.io/v1"),
            "kind": st.just("KubeSchedulerConfiguration"),
            "profiles": st.lists(profile, min_size=1, max_size=2),
        },
        optional={
            "leaderElection": typed(config_types.LeaderElectionConfiguration),
            "clientConnection": typed(config_types.ClientConnectionConfiguration),
            "podInitialBackoffSeconds": typed(int),
            "podMaxBackoffSeconds": typed(int),
            "parallelism": typed(int),
            "extenders": st.lists(_EXTENDERS, max_size=2),
        },
    )
