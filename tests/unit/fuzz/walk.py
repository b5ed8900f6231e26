"""A second generator, written apart from :mod:`.grammar`: seeded random walks over the same
sources of truth that build documents *valid by their schema*, with values from the grammars of
the strings upstream validates (label keys and values, DNS names, quantities, Go durations,
selectors, taints, URLs, CEL), and then break them in at most a few places.

:mod:`.grammar` attacks every field where it stands (most cases die in the first check that
reads them); here most cases pass the schema, as what the API server admits or a user writes
would, so they reach the cross-field checks, the rendering, the engine's start and the
scheduling cycle (``simulate --explain``), where a value the schema lets through but the code
did not expect turns into a traceback. The cases are built by :class:`Walk` from a seed (a
hypothesis integer, so a run is derandomized like the other pass):

- profiles: the SchedulerProfile CRD's OpenAPI schema (``crds/``): every enum, bound, pattern
  and maxLength kept; ``pluginConfig[].args`` from the plugin-args dataclasses of the catalog;
- clusters: Nodes, Pods and the objects they reference (PVCs, StorageClasses, PVs, DRA
  DeviceClasses, ResourceSlices and ResourceClaims, PriorityClasses, PDBs), whose fields come
  from ``shapes.json`` (the pinned Go types), chosen sparsely, with names that refer to each
  other (a pod's nodeName, claim, PVC; affinity and spread keys that nodes carry);
- extender replies: the wire types of upstream's ``extender/v1`` for each verb;
- then :meth:`Walk.mutate`: up to three changes at random paths (another JSON type, a boundary
  number, a string from the odd pool, a field dropped or set to null, a list emptied or
  repeated, an unknown key).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import types
import typing
from collections.abc import Callable
from typing import Any

from corral.scheduler.backend import shapes
from corral.scheduler.config.decode import json_name

from .grammar import ODD_STRINGS, _plugin_arg_types, crd_schema

MAX_DEPTH = 7
LABEL_KEYS = ["zone", "kubernetes.io/hostname", "topology.kubernetes.io/zone", "gpu",
              "example.com/pool", "a.b/c", "tier"]  # fmt: skip
LABEL_VALUES = ["a", "b", "z1", "z2", "true", "", "x" * 63]
NAMES = ["n0", "n1", "n2", "p0", "p1", "web", "team-a", "default", "kube-system"]
NAMESPACES = ["default", "team-a", "team-b", "kube-system"]
OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute", ""]
TOLERATION_OPS = ["Exists", "Equal", ""]
RESOURCES = ["cpu", "memory", "ephemeral-storage", "pods", "example.com/gpu", "hugepages-2Mi",
             "nvidia.com/gpu", "attachable-volumes-x"]  # fmt: skip
SANE_QUANTITIES = ["1", "2", "4", "100m", "500m", "1Gi", "4Gi", "110", "0"]
QUANTITIES = ["0", "1", "2", "100m", "1500m", "1Gi", "512Mi", "3.5", "1e3", "1k", "8Ei",
              "0.001", "1n", "9223372036854775807", "123456789012345678901234567890", "1E2",
              "1.5Gi", "0.5", "2e-3", ".5", "1Ki"]  # fmt: skip
DURATIONS = ["1s", "10s", "15s", "2s", "500ms", "1m", "1h", "1.5s", "0s", "100ns", "1h1m1s",
             "2562047h", "0.0001s", "5us", "999999999h"]  # fmt: skip
URLS = ["http://127.0.0.1:1/x", "https://127.0.0.1:1", "http://[::1]:80/a", "http://e:1/",
        "http://e", "https://[fe80::1%25eth0]:1/x", "http://e:65535", "http://e:0",
        "http://e:65536", "http://e:1/a b", "http://e/\u00e9"]  # fmt: skip
CEL = ['device.driver == "d"', 'device.attributes["d"].model == "x"', "true", "1 == 1",
       'device.capacity["d"].mem.compareTo(quantity("1Gi")) >= 0', "device.x", "(",
       '[1,2,3].all(x, x > 0)', 'device.attributes["d"].n > 2', '"a" + 1',
       "size(device.attributes) > 0", 'device.driver.matches("^d")']  # fmt: skip

# Strings by JSON field name: the grammars upstream validates these with.
_BY_NAME: dict[str, Callable[[random.Random], Any]] = {
    "key": lambda r: r.choice(LABEL_KEYS),
    "topologyKey": lambda r: r.choice(LABEL_KEYS),
    "operator": lambda r: r.choice(OPERATORS + TOLERATION_OPS),
    "effect": lambda r: r.choice(EFFECTS),
    "whenUnsatisfiable": lambda r: r.choice(["DoNotSchedule", "ScheduleAnyway", "Never"]),
    "nodeAffinityPolicy": lambda r: r.choice(["Honor", "Ignore", "x"]),
    "nodeTaintsPolicy": lambda r: r.choice(["Honor", "Ignore", "x"]),
    "schedulerName": lambda r: r.choice(["default-scheduler", "fuzzed", "other", ""]),
    "nodeName": lambda r: r.choice(["n0", "n1", "gone", ""]),
    "namespace": lambda r: r.choice(NAMESPACES),
    "name": lambda r: r.choice(NAMES),
    "driver": lambda r: r.choice(["d", "d.example.com", ""]),
    "deviceClassName": lambda r: r.choice(["c0", "c1", "missing"]),
    "storageClassName": lambda r: r.choice(["sc0", "sc1", "", "missing"]),
    "volumeName": lambda r: r.choice(["pv0", "pv1", ""]),
    "claimName": lambda r: r.choice(["pvc0", "pvc1", "missing"]),
    "resourceClaimName": lambda r: r.choice(["rc0", "rc1", "missing"]),
    "expression": lambda r: r.choice(CEL),
    "phase": lambda r: r.choice(["Pending", "Running", "Succeeded", "Failed", "Bound", "x"]),
    "priorityClassName": lambda r: r.choice(["high", "low", "system-node-critical", ""]),
    "preemptionPolicy": lambda r: r.choice(["PreemptLowerPriority", "Never", "x"]),
    "volumeBindingMode": lambda r: r.choice(["Immediate", "WaitForFirstConsumer", "x"]),
    "allocationMode": lambda r: r.choice(["ExactCount", "All", "x"]),
    "type": lambda r: r.choice(["Ready", "Hostname", "Directory", "x"]),
    "status": lambda r: r.choice(["True", "False", "Unknown"]),
    "accessModes": lambda r: r.choice(["ReadWriteOnce", "ReadOnlyMany", "ReadWriteOncePod"]),
    "apiVersion": lambda r: r.choice(["v1", "resource.k8s.io/v1"]),
    "urlPrefix": lambda r: r.choice(URLS),
    "httpTimeout": lambda r: r.choice(DURATIONS),
    "image": lambda r: r.choice(["corral:dev", "registry.example.com/x@sha256:" + "a" * 64]),
}


def _plugins_of(point: str) -> list[str]:
    """The catalog's plugins that extend ``point`` (every one for multiPoint)."""
    from corral.api.catalog import default_catalog  # noqa: PLC0415 - the catalog loads plugins

    table = default_catalog().registry()
    return sorted(n for n, points in table.items() if point == "multiPoint" or point in points)


def _gates() -> list[str]:
    from corral.scheduler.config import features  # noqa: PLC0415

    return sorted(features.table().gates)


def _leader_election(w: Walk) -> dict[str, Any]:
    r = w.r
    out: dict[str, Any] = {"leaderElect": r.random() < 0.95}
    times = sorted(r.sample([1, 2, 3, 5, 10, 15, 30, 60], 3))
    for key, t in zip(("retryPeriod", "renewDeadline", "leaseDuration"), times, strict=True):
        if r.random() < 0.7:
            out[key] = f"{t}s"
    if r.random() < 0.5:
        out["resourceName"] = r.choice(NAMES)
    return out


def _extender(w: Walk) -> dict[str, Any]:
    r = w.r
    out: dict[str, Any] = {"urlPrefix": r.choice(URLS[:5])}
    for verb in ("filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb"):
        if r.random() < 0.5:
            out[verb] = verb.removesuffix("Verb")
    out.setdefault("filterVerb", "filter")
    if "prioritizeVerb" in out:
        out["weight"] = r.choice([1, 2, 10])
    for key in ("nodeCacheCapable", "ignorable", "enableHTTPS"):
        if r.random() < 0.3:
            out[key] = r.choice([True, False])
    if r.random() < 0.3:
        out["httpTimeout"] = r.choice(DURATIONS[:8])
    if r.random() < 0.2:
        out["managedResources"] = [{"name": "example.com/gpu", "ignoredByScheduler": True}]
    if r.random() < 0.2:
        out["tlsSecretRef"] = {"name": "ext-tls"}
    return out


def _toleration(w: Walk) -> dict[str, Any]:
    r = w.r
    if r.random() < 0.3:
        return {"operator": "Exists"}
    out: dict[str, Any] = {"key": r.choice(LABEL_KEYS), "operator": r.choice(["Equal", "Exists"])}
    if out["operator"] == "Equal":
        out["value"] = r.choice(LABEL_VALUES[:4])
    out["effect"] = r.choice(EFFECTS[:3])
    if out["effect"] == "NoExecute" and r.random() < 0.5:
        out["tolerationSeconds"] = r.choice([0, 30, 3600])
    return out


def _tenancy(w: Walk) -> dict[str, Any]:
    r = w.r
    out: dict[str, Any] = {}
    if r.random() < 0.7:
        out["namespaces"] = r.sample(["team-a", "team-b", "shared"], r.randint(1, 2))
    if r.random() < 0.3:
        op = r.choice(["In", "NotIn", "Exists", "DoesNotExist"])
        expr: dict[str, Any] = {"key": "tier", "operator": op}
        if op in ("In", "NotIn"):
            expr["values"] = ["a"]
        out["namespaceSelector"] = r.choice([{"matchLabels": {"tier": "a"}},
                                             {"matchExpressions": [expr]}])  # fmt: skip
    if r.random() < 0.4 or not out:
        out["nodeSelector"] = {r.choice(LABEL_KEYS): r.choice(LABEL_VALUES[:4])}
    if "namespaces" in out or "namespaceSelector" in out:
        out["assignPods"] = r.random() < 0.5
    return out


_BY_PATH: dict[str, Callable[[Walk], Any]] = {
    "spec.extenders[]": _extender,
    "spec.deployment.tolerations[]": _toleration,
    "spec.tenancy": _tenancy,
    "spec.schedulerName": lambda w: w.r.choice(["fuzzed", "other", "team-a-sched"]),
    "spec.featureGates": lambda w: {g: w.r.choice([True, False])
                                    for g in w.r.sample(_gates(), w.r.randint(0, 2))},
    "spec.leaderElection": _leader_election,
    "spec.podInitialBackoffSeconds": lambda w: w.r.choice([1, 2, 10]),
    "spec.podMaxBackoffSeconds": lambda w: w.r.choice([10, 60, 3600]),
    "spec.replicas": lambda w: w.r.choice([1, 1, 2]),
    "spec.extenders[].weight": lambda w: w.r.choice([1, 2, 10]),
    "spec.pluginConfig": lambda w: [
        {"name": (n := w.r.choice(sorted(_plugin_arg_types()))), "args": w.plugin_args(n)}
        for _ in range(w.r.randint(1, 3))
    ],
    "spec.namespace": lambda w: w.r.choice(["corral-system", "team-a", "default"]),
}  # fmt: skip
for _point in ("multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter",
               "preScore", "score", "reserve", "permit", "preBind", "bind", "postBind",
               "placementGenerate", "placementScore", "podGroupPostFilter"):  # fmt: skip
    _BY_PATH[f"spec.plugins.{_point}"] = lambda w, p=_point: _point_set(w, p)


def _point_set(w: Walk, point: str) -> dict[str, Any]:
    names = _plugins_of(point)
    out: dict[str, Any] = {}
    if names and w.chance(0.7):
        out["enabled"] = [{"name": n} for n in w.r.sample(names, min(len(names), 2))]
        if w.chance(0.3):
            out["enabled"][0]["weight"] = w.r.choice([1, 2, 100])
    if w.chance(0.4):
        out["disabled"] = [{"name": w.r.choice([*names, "*"])}]
    return out


def odd(r: random.Random) -> str:
    return r.choice(ODD_STRINGS)


class Walk:
    """One case's choices, all from one seed."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    # --- the CRD's schema, valid by it ---------------------------------------------------------

    def openapi(
        self, schema: dict[str, Any], name: str = "", depth: int = 0, path: str = ""
    ) -> Any:
        r = self.r
        if path in _BY_PATH and not self.chance(0.1):
            return _BY_PATH[path](self)
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return self.plugin_args(r.choice(sorted(_plugin_arg_types())))
        if schema.get("x-kubernetes-int-or-string"):
            return r.choice([0, 1, 3, 100, "1", "50%", "0%", "100%"])
        enum = schema.get("enum")
        if enum:
            return r.choice(enum)
        kind = schema.get("type")
        if kind == "object":
            props = schema.get("properties") or {}
            required = set(schema.get("required") or ())
            extra = schema.get("additionalProperties")
            if not props and isinstance(extra, dict):
                return {r.choice(LABEL_KEYS): self.openapi(extra, depth=depth + 1)
                        for _ in range(r.randint(0, 3))}  # fmt: skip
            out: dict[str, Any] = {}
            p = 0.6 if depth < 2 else 0.25
            for k, v in props.items():
                if (k in required or self.chance(p)) and depth < MAX_DEPTH:
                    out[k] = self.openapi(v, name=k, depth=depth + 1, path=f"{path}.{k}")
            return out
        if kind == "array":
            limit = schema.get("maxItems", 4)
            n = r.choice([0, 1, 1, 2, 3, min(limit, 8)])
            item = schema.get("items") or {}
            return [self.openapi(item, name, depth + 1, f"{path}[]") for _ in range(n)]
        if kind == "integer":
            low = schema.get("minimum", -(2**31) if schema.get("format") != "int64" else -(2**63))
            high = schema.get(
                "maximum", 2**31 - 1 if schema.get("format") != "int64" else 2**63 - 1
            )
            return r.choice([low, high, max(low, 0), min(high, 1), min(high, 100),
                             r.randint(max(low, -5), min(high, 200))])  # fmt: skip
        if kind == "number":
            return r.choice([0, 0.5, 1.0, 100.0, 1e-9, 3.4e38])
        if kind == "boolean":
            return r.choice([True, False])
        return self.string(schema, name)

    def string(self, schema: dict[str, Any], name: str) -> str:
        r = self.r
        limit = int(schema.get("maxLength", 1000))
        if "pattern" in schema:  # the CRD's patterns are Go durations
            value = r.choice(DURATIONS)
        elif schema.get("format") == "byte":
            value = r.choice(["", "aGk=", "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==", "@@"])
        elif name in _BY_NAME and not self.chance(0.1):
            value = str(_BY_NAME[name](r))
        else:
            value = r.choice([*NAMES, odd(r), "a" * limit])
        return value[:limit]

    def profile(self) -> dict[str, Any]:
        spec = self.openapi(crd_schema()["properties"]["spec"], "spec", path="spec")
        if isinstance(spec.get("pluginConfig"), list) and self.chance(
            0.8
        ):  # enabled where they extend (multiPoint), so the args are used
            plugins = spec.setdefault("plugins", {})
            multi = plugins.setdefault("multiPoint", {}) if isinstance(plugins, dict) else {}
            if isinstance(multi, dict):
                multi["enabled"] = [{"name": c["name"]} for c in spec["pluginConfig"]
                                        if isinstance(c, dict) and "name" in c]  # fmt: skip
        return {
            "apiVersion": "corral.dev/v1alpha1",
            "kind": "SchedulerProfile",
            "metadata": {"name": self.r.choice(["fuzzed", "a", "team-a", "b", "x" * 40])},
            "spec": spec,
        }

    def config(self) -> dict[str, Any]:
        """A KubeSchedulerConfiguration: a walked profile that passes every check, rendered as
        the operator renders it (the profile's fields where the config has them), so the
        config's own types are reached with values deep past the first checks."""
        from corral.api import check_profile  # noqa: PLC0415
        from corral.api.scheduler_config import scheduler_config_data  # noqa: PLC0415

        for _ in range(30):
            profile, _errors = check_profile(self.profile())
            if profile is not None:
                return scheduler_config_data(profile)
        return {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
        }

    # --- plugin args, from their dataclasses --------------------------------------------------

    def plugin_args(self, plugin: str) -> Any:
        return self.from_type(_plugin_arg_types()[plugin])

    def from_type(self, tp: Any, key: str = "", depth: int = 0) -> Any:
        r = self.r
        origin, targs = typing.get_origin(tp), typing.get_args(tp)
        if origin in (typing.Union, types.UnionType):
            choices = [a for a in targs if a is not type(None)]
            return self.from_type(r.choice(choices), key, depth)
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            hints = typing.get_type_hints(tp)
            return {
                json_name(f): self.from_type(hints[f.name], json_name(f), depth + 1)
                for f in dataclasses.fields(tp)
                if depth < MAX_DEPTH and (_required(f) or self.chance(0.5))
            }
        if origin is typing.Literal:
            return r.choice(targs)
        if origin is list:
            return [self.from_type(targs[0], key, depth + 1) for _ in range(r.randint(0, 3))]
        if origin is dict:
            return {
                r.choice(RESOURCES + LABEL_KEYS): self.from_type(targs[1], "", depth + 1)
                for _ in range(r.randint(0, 2))
            }
        if tp is bool:
            return r.choice([True, False])
        if tp is int:
            return r.choice([0, 1, 2, 10, 100, -1, 2**31 - 1, 2**31, 2**63 - 1])
        if tp is float:
            return r.choice([0.0, 0.5, 1.0, 10.0, 100.0, -1.0, 1e-30, 3.4e38])
        if tp is str:
            if key in _BY_NAME:
                return _BY_NAME[key](r)
            return r.choice([*RESOURCES, *LABEL_KEYS, *QUANTITIES, *DURATIONS, odd(r)])
        return r.choice([None, {}, [], "x", 1])

    # --- objects from the Go types' shapes ----------------------------------------------------

    def shaped(self, type_name: str, depth: int = 0, dense: float = 0.2) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, shape in shapes.schema()["types"][type_name]["fields"]:
            if name in ("status", "managedFields") or not self.chance(dense / (1 + depth / 2)):
                continue
            value = self.value(shape, name, depth + 1)
            if value is not None:
                out[name] = value
        return out

    def value(self, shape: dict[str, Any], name: str, depth: int) -> Any:
        r = self.r
        kind = shape["kind"]
        if depth > MAX_DEPTH:
            return None
        if kind == "struct":
            return self.shaped(shape["name"], depth)
        if kind == "list":
            return [v for _ in range(r.choice([0, 1, 1, 2, 3]))
                    if (v := self.value(shape["of"], name, depth + 1)) is not None]  # fmt: skip
        if kind == "map":
            keys = RESOURCES if shape["of"]["kind"] == "quantity" else LABEL_KEYS
            return {r.choice(keys): self.value(shape["of"], "", depth + 1)
                    for _ in range(r.randint(0, 3))}  # fmt: skip
        if kind == "quantity":
            return r.choice(QUANTITIES)
        if kind in ("int32", "uint32"):
            return r.choice([0, 1, 2, 5, 100, 2**31 - 1, -1, 1000])
        if kind in ("int64", "uint64"):
            return r.choice([0, 1, 3, 2**63 - 1, -1, 10**12])
        if kind in ("float32", "float64"):
            return r.choice([0.0, 0.5, 1.0, 1e30])
        if kind == "bool":
            return r.choice([True, False])
        if kind in ("time", "microtime"):
            return r.choice(
                ["2026-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59Z"]
            )
        if kind == "intorstring":
            return r.choice([0, 1, "1", "50%", "100%", "0%"])
        if kind == "bytes":
            return "aGk="
        if kind == "any":
            return r.choice([{}, {"a": 1}])
        if name in _BY_NAME:
            return _BY_NAME[name](r)
        return r.choice(LABEL_VALUES + NAMES)

    def obj(self, kind: str, name: str, namespaced: bool = True) -> dict[str, Any]:
        root = shapes.schema()["kinds"][kind]
        body = self.shaped(root["type"], dense=0.5)
        meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}-{self.r.randint(0, 3)}"}
        if namespaced:
            meta["namespace"] = self.r.choice(["default", "default", "team-a"])
        if self.chance(0.5):
            meta["labels"] = {self.r.choice(LABEL_KEYS): self.r.choice(LABEL_VALUES)}
        return {**body, "apiVersion": root["apiVersion"], "kind": kind, "metadata": meta}

    def node(self, name: str) -> dict[str, Any]:
        node = self.obj("Node", name, namespaced=False)
        amounts = QUANTITIES if self.chance(0.2) else SANE_QUANTITIES
        alloc = {k: self.r.choice(amounts) for k in self.r.sample(RESOURCES, 3)}
        alloc.setdefault("pods", str(self.r.choice([0, 1, 110])))
        node["status"] = {"allocatable": alloc, "capacity": dict(alloc)}
        if self.chance(0.3):
            node.setdefault("spec", {})["taints"] = [
                {"key": self.r.choice(LABEL_KEYS), "value": self.r.choice(LABEL_VALUES[:3]),
                 "effect": self.r.choice(EFFECTS[:3])}
            ]  # fmt: skip
        if self.chance(0.3):
            node["status"]["images"] = [{"names": ["img:1"], "sizeBytes": 10**9}]
        node["metadata"]["labels"] = {"kubernetes.io/hostname": name,
                                      **{k: self.r.choice(LABEL_VALUES) for k in
                                         self.r.sample(LABEL_KEYS, 2)}}  # fmt: skip
        return node

    def pod(self, name: str) -> dict[str, Any]:
        pod = self.obj("Pod", name)
        spec = pod.setdefault("spec", {})
        if not isinstance(spec.get("containers"), list) or not spec["containers"]:
            spec["containers"] = [{"name": "c", "image": "img:1"}]
        for c in spec["containers"]:
            c.setdefault("name", "c")
            amounts = QUANTITIES if self.chance(0.2) else SANE_QUANTITIES
            if self.chance(0.7):
                c["resources"] = {"requests": {k: self.r.choice(amounts)
                                               for k in self.r.sample(RESOURCES, 2)}}  # fmt: skip
        if self.chance(0.3):
            spec["nodeName"] = self.r.choice(["n0", "n1", "gone"])
        if self.chance(0.2):
            spec["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": "pvc0"}}]
        if self.chance(0.2):
            spec["resourceClaims"] = [{"name": "r", "resourceClaimName": "rc0"}]
            spec["containers"][0].setdefault("resources", {})["claims"] = [{"name": "r"}]
        spec.pop("schedulingGates", None) if self.chance(0.7) else None
        self._placement(spec)
        return pod

    def _selector(self) -> dict[str, Any]:
        r = self.r
        if self.chance(0.5):
            return {"matchLabels": {r.choice(LABEL_KEYS): r.choice(LABEL_VALUES[:4])}}
        op = r.choice(OPERATORS[:4])
        expr: dict[str, Any] = {"key": r.choice(LABEL_KEYS), "operator": op}
        if op in ("In", "NotIn"):
            expr["values"] = r.sample(LABEL_VALUES[:5], r.randint(1, 2))
        return {"matchExpressions": [expr]}

    def _placement(self, spec: dict[str, Any]) -> None:
        """The fields the scheduling plugins read, coherent with the nodes' labels."""
        r = self.r
        if self.chance(0.4):
            spec["topologySpreadConstraints"] = [
                {
                    "maxSkew": r.choice([1, 1, 2, 2**31 - 1]),
                    "topologyKey": r.choice(LABEL_KEYS[:3]),
                    "whenUnsatisfiable": r.choice(["DoNotSchedule", "ScheduleAnyway"]),
                    "labelSelector": self._selector(),
                    **({"minDomains": r.choice([1, 3, 2**31 - 1])} if self.chance(0.3) else {}),
                    **({"matchLabelKeys": [r.choice(LABEL_KEYS)]} if self.chance(0.3) else {}),
                    **(
                        {"nodeAffinityPolicy": r.choice(["Honor", "Ignore"])}
                        if self.chance(0.3)
                        else {}
                    ),
                }
                for _ in range(r.randint(1, 2))
            ]
        affinity: dict[str, Any] = {}
        if self.chance(0.4):
            op = r.choice(OPERATORS)
            expr: dict[str, Any] = {"key": r.choice(LABEL_KEYS), "operator": op}
            if op in ("In", "NotIn"):
                expr["values"] = r.sample(LABEL_VALUES[:5], r.randint(1, 2))
            elif op in ("Gt", "Lt"):
                expr["values"] = [r.choice(["1", "-1", "9223372036854775807", "1e3", "x"])]
            term = {"matchExpressions": [expr]}
            affinity["nodeAffinity"] = r.choice([
                {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}},
                {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": r.choice([1, 100]), "preference": term}]},
            ])  # fmt: skip
        for kind in ("podAffinity", "podAntiAffinity"):
            if self.chance(0.3):
                term = {"topologyKey": r.choice(LABEL_KEYS[:3]), "labelSelector": self._selector()}
                if self.chance(0.3):
                    term["namespaceSelector"] = self._selector() if self.chance(0.5) else {}
                if self.chance(0.2):
                    term["matchLabelKeys"] = [r.choice(LABEL_KEYS)]
                affinity[kind] = r.choice([
                    {"requiredDuringSchedulingIgnoredDuringExecution": [term]},
                    {"preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": r.choice([1, 50, 100]), "podAffinityTerm": term}]},
                ])  # fmt: skip
        if affinity:
            spec["affinity"] = affinity
        if self.chance(0.3):
            spec["tolerations"] = [
                {"key": r.choice(LABEL_KEYS), "operator": r.choice(["Exists", "Equal"]),
                 "value": r.choice(LABEL_VALUES[:3]), "effect": r.choice(EFFECTS)}
            ]  # fmt: skip
        if self.chance(0.2):
            spec["priority"] = r.choice([0, 1000, 2**31 - 1, -(2**31)])
        if self.chance(0.2):
            spec["overhead"] = {"cpu": r.choice(QUANTITIES[:6])}
        if self.chance(0.15):
            spec["initContainers"] = [{"name": "i", "restartPolicy": "Always",
                                       "resources": {"requests": {"cpu": "1"}}}]  # fmt: skip
        if self.chance(0.15):
            spec["containers"][0]["ports"] = [{"containerPort": 80,
                                               "hostPort": r.choice([80, 0, 65535])}]  # fmt: skip

    def cluster(self) -> list[dict[str, Any]]:
        r = self.r
        docs: list[dict[str, Any]] = [self.node(f"n{i}") for i in range(r.randint(1, 4))]
        docs += [self.pod(f"p{i}") for i in range(r.randint(1, 5))]
        extra = ["PersistentVolumeClaim", "StorageClass", "PersistentVolume", "DeviceClass",
                 "ResourceSlice", "ResourceClaim", "PriorityClass", "PodDisruptionBudget",
                 "CSINode", "CSIStorageCapacity", "Namespace"]  # fmt: skip
        names = {"PersistentVolumeClaim": "pvc0", "StorageClass": "sc0", "PersistentVolume": "pv0",
                 "DeviceClass": "c0", "ResourceSlice": "s0", "ResourceClaim": "rc0",
                 "PriorityClass": "high", "PodDisruptionBudget": "pdb", "CSINode": "n0",
                 "CSIStorageCapacity": "cap", "Namespace": "team-a"}  # fmt: skip
        for kind in r.sample(extra, r.randint(0, 4)):
            namespaced = kind in ("PersistentVolumeClaim", "ResourceClaim",
                                  "PodDisruptionBudget", "CSIStorageCapacity")  # fmt: skip
            docs.append(self.obj(kind, names[kind], namespaced))
        if self.chance(0.4):
            docs.append(self.profile())
        elif self.chance(0.5):
            docs.append(self.config())
        return docs

    # --- extender wire types (k8s.io/kube-scheduler/extender/v1) ------------------------------

    def extender_reply(self, verb: str) -> Any:
        r = self.r
        nodes = ["n0", "n1", "n2", "gone", ""]
        if verb == "filter":
            out: dict[str, Any] = {}
            if self.chance(0.7):
                out["nodeNames"] = r.sample(nodes, r.randint(0, 3))
            if self.chance(0.3):
                out["nodes"] = {"items": [{"metadata": {"name": n}} for n in r.sample(nodes, 2)]}
            if self.chance(0.5):
                out["failedNodes"] = {n: r.choice(["no", ""]) for n in r.sample(nodes, 2)}
            if self.chance(0.3):
                out["failedAndUnresolvableNodes"] = {r.choice(nodes): "never"}
            if self.chance(0.2):
                out["error"] = r.choice(["", "boom", " "])
            return out
        if verb == "prioritize":
            return [{"host": r.choice(nodes), "score": r.choice([0, 1, 10, 100, -1, 2**63])}
                    for _ in range(r.randint(0, 4))]  # fmt: skip
        if verb == "bind":
            return {"error": r.choice(["", "no", " "])} if self.chance(0.6) else {}
        victims = {
            r.choice(nodes): {
                "pods": [{"uid": r.choice(["u", "u2", ""])} for _ in range(r.randint(0, 2))],
                "numPDBViolations": r.choice([0, 1, -1, 2**63]),
            }
            for _ in range(r.randint(0, 3))
        }
        return {"nodeNameToMetaVictims": victims}

    # --- breaking a valid document in a few places --------------------------------------------

    def mutate(self, doc: Any, times: int) -> Any:
        doc = copy.deepcopy(doc)
        for _ in range(times):
            spots = list(_spots(doc))
            if not spots:
                break
            parent, key = self.r.choice(spots)
            self._break(parent, key)
        return doc

    def _break(self, parent: Any, key: Any) -> None:
        r = self.r
        old = parent[key]
        how = r.randrange(9)
        if how == 0 and isinstance(parent, dict):
            del parent[key]
        elif how == 1:
            parent[key] = None
        elif how == 2:
            parent[key] = r.choice([True, 0, -1, 1.5, "", "x", [], {}, [old], {"a": old}])
        elif how == 3:
            parent[key] = r.choice([2**31, -(2**31) - 1, 2**63, 2**64, -(2**63) - 1, 10**30,
                                    0.1, -0.0, 1e308])  # fmt: skip
        elif how == 4:
            parent[key] = odd(r)
        elif how == 5 and isinstance(old, list):
            parent[key] = old * r.choice([0, 2, 50])
        elif how == 6 and isinstance(old, dict):
            old[r.choice(["x", "unknownField", "", odd(r)])] = r.choice([1, "x", {}, None])
        elif how == 7 and isinstance(old, str):
            parent[key] = r.choice([old + " ", " " + old, old.upper(), old * 40, old + "\x00"])
        elif how == 8 and isinstance(old, int | float) and not isinstance(old, bool):
            parent[key] = r.choice([-old, old + 1, old - 1, str(old), float(old)])
        else:
            parent[key] = r.choice([None, {}, [], odd(r)])


def _required(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _spots(doc: Any) -> list[tuple[Any, Any]]:
    out: list[tuple[Any, Any]] = []
    stack = [doc]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in list(items):
            out.append((node, k))
            if isinstance(v, dict | list):
                stack.append(v)
    return out


def dump(docs: list[Any]) -> str:
    """YAML text, one document each (JSON is YAML: long strings and odd Unicode stay exact)."""
    text = "---\n".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs)
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate: as a JSON escape
        return "---\n".join(json.dumps(d) + "\n" for d in docs)
    return text
