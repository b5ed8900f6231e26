"""Hypothesis strategies for hostile input: mutated real documents and crafted YAML texts.

A case starts from a known-good document (the samples and examples of this repository), gets a
few mutations (a value replaced by a hostile one, a known key added where it does not belong, a
key dropped), and is then written out as YAML, sometimes with a text-level attack: an alias
bomb, deep nesting, duplicate keys, a truncation, bytes that are not UTF-8, a YAML tag.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from corral.api import types as api_types
from corral.api.catalog import default_catalog
from corral.scheduler.config import ARGS_TYPES
from corral.scheduler.config import args as args_types
from corral.scheduler.config import types as config_types
from corral.scheduler.config.decode import json_name

ROOT = Path(__file__).resolve().parents[3]

# Values that have broken parsers: range edges, overflows, catastrophic regex inputs, absurd
# quantities, YAML 1.1 surprises, names that collide.
HOSTILE: list[Any] = [
    0,
    -1,
    1,
    3,
    100,
    101,
    2**31 - 1,
    2**31,
    -(2**31) - 1,
    2**63,
    2**64,
    10**40,
    -(10**40),
    0.5,
    -0.0,
    1e308,
    True,
    False,
    None,
    "",
    " ",
    "0",
    "-1",
    "true",
    "null",
    "1s",
    "0s",
    "0",
    "-5s",
    "15s",
    "1m30s",
    "1.5h",
    "2562047h",
    "2562048h",
    "99999999999999h",
    "1e3s",
    "1ns",
    ".5s",
    "5.s",
    "111s" * 40 + "!",
    "1" * 130 + "x",
    "1.1" * 50,
    "100m",
    "64Mi",
    "1e999999999",
    "9" * 5000,
    "1E-999999999",
    "99999999999999999999Ei",
    "0.000000000000000000001n",
    "-1Gi",
    "1.5.5",
    "NaN",
    "Infinity",
    "a" * 300,
    "ünïcödé",
    "x\ny",
    "*",
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "no-such-topology-key",
    "zone",
    "team-a",
    "default-scheduler",
    "kube-system",
    "minimal",
    "http://127.0.0.1:1/x",
    "https://",
    "MostAllocated",
    "RequestedToCapacityRatio",
    "DoNotSchedule",
    "ScheduleAnyway",
    "System",
    "List",
    "In",
    "Exists",
    "NoSchedule",
]


def _dataclasses() -> Iterator[type[Any]]:
    for module in (api_types, config_types, args_types):
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if dataclasses.is_dataclass(obj):
                yield obj


def _vocabulary() -> list[str]:
    keys = {json_name(f) for cls in _dataclasses() for f in dataclasses.fields(cls)}
    keys |= set(default_catalog().registry()) if hasattr(default_catalog(), "registry") else set()
    keys |= {"apiVersion", "kind", "metadata", "spec", "status", "name", "args", "items"}
    return sorted(keys)


KEYS = _vocabulary()

_scalars = st.one_of(
    st.sampled_from(HOSTILE),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=12),
    st.floats(allow_nan=False, allow_infinity=False),
)
_json_scalars = st.one_of(
    st.sampled_from([v for v in HOSTILE if not isinstance(v, float) or abs(v) < 1e300]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=12),
)


def _values(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=3)
        ),
        max_leaves=6,
    )


VALUES = _values(_scalars)
JSON_VALUES = _values(_json_scalars)


def _containers(node: Any) -> Iterator[Any]:
    if isinstance(node, dict | list):
        yield node
        for child in node.values() if isinstance(node, dict) else node:
            yield from _containers(child)


@st.composite
def mutated(draw: st.DrawFn, seeds: list[Any], values: st.SearchStrategy[Any] = VALUES) -> Any:
    """A deep copy of one of ``seeds`` with up to five mutations."""
    doc = copy.deepcopy(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(0, 5))):
        target = draw(st.sampled_from(list(_containers(doc)) or [doc]))
        if isinstance(target, dict):
            op = draw(st.sampled_from(("set", "add", "delete")))
            keys = sorted(target, key=str)
            if op == "delete" and keys:
                del target[draw(st.sampled_from(keys))]
            elif op == "set" and keys:
                target[draw(st.sampled_from(keys))] = draw(values)
            else:
                target[draw(st.sampled_from(KEYS))] = draw(values)
        elif isinstance(target, list):
            if target and draw(st.booleans()):
                target[draw(st.integers(0, len(target) - 1))] = draw(values)
            else:
                target.append(draw(values))
    return doc


def dump(doc: Any) -> str:
    if isinstance(doc, list) and doc and all(isinstance(d, dict) for d in doc):
        return yaml.safe_dump_all(doc, sort_keys=False)
    return yaml.safe_dump(doc, sort_keys=False)


def alias_bomb(levels: int, width: int) -> str:
    """``levels`` anchors, each a list of ``width`` aliases of the previous: width**levels."""
    lines = ["a0: &a0 [lol]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


@st.composite
def attacked(draw: st.DrawFn, text: str) -> str | bytes:
    """``text``, or ``text`` with one text-level attack."""
    attack = draw(
        st.sampled_from(
            (
                "none",
                "none",
                "none",
                "bomb",
                "deep",
                "duplicate",
                "truncate",
                "bytes",
                "tag",
                "anchor",
                "huge",
                "flow",
            )
        )
    )
    if attack == "bomb":
        return alias_bomb(draw(st.integers(2, 12)), draw(st.integers(2, 12))) + text
    if attack == "deep":
        depth = draw(st.sampled_from((50, 500, 5000, 50000)))
        return text + "deep: " + "[" * depth + "]" * depth + "\n"
    if attack == "duplicate":
        first = text.split("\n", 1)[0]
        return text + first + "\n"
    if attack == "truncate":
        return text[: draw(st.integers(0, max(0, len(text) - 1)))]
    if attack == "bytes":
        return text.encode() + draw(st.sampled_from((b"\xff\xfe", b"\x00", b"\xc3")))
    if attack == "tag":
        tag = draw(
            st.sampled_from(
                (
                    "!!python/object/apply:os.system ['true']",
                    "!!binary aGVsbG8=",
                    "2001-12-14t21:59:43.10-05:00",
                    "!!set {a, b}",
                    "!custom x",
                    "? [a, b]\n: c",
                    "{a: 1}: b",
                    "0x1F",
                    "0o17",
                    "1_000",
                    "!!float 1e400",
                    ".nan",
                    "!!omap [a: 1]",
                )
            )
        )
        return text + f"tagged: {tag}\n"
    if attack == "anchor":
        return "base: &b {x: 1}\n" + text + "merged:\n  <<: *b\n"
    if attack == "huge":
        return text + "huge: " + "x" * (9 * 2**20) + "\n"
    return "{" * draw(st.integers(1, 3)) + text


def texts(seeds: list[Any]) -> st.SearchStrategy[str | bytes]:
    return mutated(seeds).map(dump).flatmap(attacked)


def load_seeds(*paths: str) -> list[Any]:
    docs: list[Any] = []
    for p in paths:
        docs += [d for d in yaml.safe_load_all((ROOT / p).read_text()) if d is not None]
    return docs


# --- plausible documents: typed like the real ones, values from pools of edge cases ----------

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
    args_types = {n: t for n, t in args_types_module().items() if n in _PLUGIN_NAMES}
    return st.sampled_from(sorted(args_types)).flatmap(
        lambda n: st.fixed_dictionaries({"name": st.just(n), "args": typed(args_types[n])})
    )


def args_types_module() -> dict[str, Any]:
    return dict(ARGS_TYPES)


# Most extenders take part in filtering, as most real ones do.
_EXTENDERS = typed(config_types.Extender).map(lambda e: {"filterVerb": "filter", **e})


def plausible_profiles() -> st.SearchStrategy[dict[str, Any]]:
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


def plausible_configs() -> st.SearchStrategy[dict[str, Any]]:
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
