"""Grammar-driven hostile input: strategies derived from the types Corral reads, not from a few
examples.

Three grammars, each read from the source of truth:

- the SchedulerProfile CRD's OpenAPI schema (``crds/``): :func:`from_openapi`;
- the configuration types (the KubeSchedulerConfiguration and plugin-args dataclasses):
  :func:`from_type`;
- the Kubernetes objects the engine reads, from the pinned Go types' shapes
  (``corral.scheduler.backend.shapes``): :func:`from_shape`, and :func:`mutated_by_shape`
  which takes a real object and rewrites fields the shapes declare.

Every field, whatever its type, may get (besides plausible values that take a document deep
into the checks): each wrong JSON type, the boundary numbers of its width and of its schema's
bounds (and past them, up to the YAML loader's 400-character literals), strings of odd Unicode
(bidirectional overrides, zero-width and combining marks, lone surrogates, NUL, astral planes,
control characters, very long), and the near misses of its enums. :func:`to_yaml` writes a
value as YAML text with random tag forms (``!!int``, ``!!str``, ``!!float``, ``!!bool``,
``!!null`` on any scalar, ``!!binary``, local tags), anchors and aliases, merge keys and both
flow and block styles, so the loader's own checks are reached with every kind of field.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import types
import typing
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from corral.scheduler.backend import shapes
from corral.scheduler.config.decode import json_name

ROOT = Path(__file__).resolve().parents[3]
MAX_DEPTH = 6  # a generated object's nesting (the shapes hold recursive types)

# --- the pools: what breaks parsers, by class -------------------------------------------------

ODD_STRINGS: list[str] = [
    "", " ", "\t", "\n", "a\nb", "\r\n", "a\x00b", "\x1b[31mred", "\u202eevil", "\u200b",
    "\u200d\u200d", "e\u0301\u0301\u0301", "\ufeffbom", "\ud800", "\udfff", "\U0001f600",
    "\U0001d538", "\u0627\u0644", "\u2028", "\u00a0", "x" * 64, "x" * 65, "x" * 253, "x" * 254,
    "y" * 5000, "*", "?", "-", "..", "../..", "a/b", "a//b", "%2e%2e", "${HOME}", "{{ . }}",
    "%s%n", "'", '"', "\\", "null", "~", "true", "yes", "NO", "0x1F", "1e3", ".inf", "0o17",
    "1_000", "2001-12-14", "<<", "=", "!", "&a", "*a", "- a", "a: b", "{a}", "[a]", "#x",
    "@x", "|", ">", "`", "kube-system", "default-scheduler", "kubernetes.io/hostname",
]  # fmt: skip
WRONG_TYPES: list[Any] = [None, True, False, 0, -1, 1.5, "", "x", [], [1], {}, {"a": 1}]
INT_WIDTHS: dict[str, tuple[int, int]] = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}
HUGE_INTS: list[int] = [10**30, -(10**30), 10**399, -(10**399), 2**1000]
FLOATS: list[float] = [0.5, -0.0, 1e-300, 1e308, -1e308, 3.4028234663852886e38, 3.5e38, 1e39]
QUANTITIES: list[Any] = [
    "0", "1", "-1", "100m", "1.5", ".5", "1e3", "1E-3", "1Ki", "1Gi", "8Ei", "9Ei", "1e19",
    "9223372036854775807", "9223372036854775808", "1n", "0.0000000001", "1.", "1..5", "1Gii",
    "Gi", "", " 1", "1 ", "+1", "--1", "1e999", "9" * 65, 0, 1, -1, 1.5, 1e19, 10**400,
]  # fmt: skip


ATTACK_ONE_IN = 12  # a field is attacked this rarely, so that many documents are valid and deep


def sometimes(
    good: st.SearchStrategy[Any], attacked: st.SearchStrategy[Any], *, one_in: int = ATTACK_ONE_IN
) -> Any:
    """``good`` mostly, ``attacked`` one time in ``one_in``."""
    return st.integers(1, one_in).flatmap(lambda n: attacked if n == 1 else good)


def numbers(low: int, high: int) -> st.SearchStrategy[int]:
    """Boundary integers of [low, high], just past them, and huge ones."""
    edges = [low - 1, low, low + 1, -1, 0, 1, high - 1, high, high + 1]
    return st.sampled_from(edges + HUGE_INTS) | st.integers(low, high)


def hostile_scalar(kind: str = "string") -> st.SearchStrategy[Any]:
    """What a field of ``kind`` gets when it is attacked: its wrong types, its boundaries."""
    wrong = st.sampled_from(WRONG_TYPES).map(copy.deepcopy)  # each its own list or map
    if kind in INT_WIDTHS:
        return wrong | numbers(*INT_WIDTHS[kind])
    if kind in ("float", "float32", "float64", "number"):
        return wrong | st.sampled_from(FLOATS) | numbers(-(2**53), 2**53)
    if kind == "quantity":
        return wrong | st.sampled_from(QUANTITIES)
    if kind == "bool":
        return wrong | st.sampled_from(["true", "True", "yes", 1, 0])
    return wrong | st.sampled_from(ODD_STRINGS) | st.text(max_size=8)


# --- the CRD's OpenAPI schema -----------------------------------------------------------------


@cache
def crd_schema() -> dict[str, Any]:
    doc = yaml.safe_load((ROOT / "crds" / "schedulerprofiles.corral.dev.yaml").read_text())
    schema: dict[str, Any] = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def from_openapi(
    schema: Mapping[str, Any], *, name: str = "", depth: int = 0, plausible: PoolFor | None = None
) -> st.SearchStrategy[Any]:
    """Values for ``schema``: mostly plausible (enums, lengths, bounds as declared, field pools
    by name), each field sometimes attacked (:func:`hostile_scalar` by its type)."""
    kind = schema.get("type")
    attacked = hostile_scalar(_openapi_kind(schema)) | _near_misses(schema)
    if depth > MAX_DEPTH:
        return attacked
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        good: st.SearchStrategy[Any] = st.deferred(plugin_args)
    elif schema.get("x-kubernetes-int-or-string"):
        good = st.integers(-1, 101) | st.sampled_from(["50%", "0%", "100%", "101%", "x%", "1"])
    elif kind == "object":
        props = schema.get("properties") or {}
        required = set(schema.get("required") or ())
        fields = {
            k: from_openapi(v, name=k, depth=depth + 1, plausible=plausible)
            for k, v in props.items()
        }
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) and not props:
            keys = st.sampled_from(KEYS) | st.sampled_from(ODD_STRINGS)
            good = st.dictionaries(keys, from_openapi(extra, depth=depth + 1), max_size=3)
        else:
            good = st.fixed_dictionaries(
                {k: v for k, v in fields.items() if k in required},
                optional={k: v for k, v in fields.items() if k not in required},
            )
    elif kind == "array":
        item = from_openapi(schema.get("items") or {}, name=name, depth=depth + 1,
                            plausible=plausible)  # fmt: skip
        limit = schema.get("maxItems")
        size = min(3, limit) if isinstance(limit, int) else 3
        good = st.lists(item, max_size=size) | (
            st.lists(item, min_size=limit + 1, max_size=limit + 1) if limit and limit < 20
            else st.nothing()
        )  # fmt: skip
    elif kind == "integer":
        low = int(schema.get("minimum", -2))
        high = int(schema.get("maximum", 120))
        good = st.integers(max(low, -2), min(high, 120))
    elif kind == "number":
        good = st.sampled_from(FLOATS) | st.integers(-5, 200)
    elif kind == "boolean":
        good = st.booleans()
    else:  # string
        good = _strings(schema, name, plausible)
    return sometimes(good, attacked) if depth else good


PoolFor = Callable[[str], list[Any] | None]


def _openapi_kind(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if kind == "integer":
        return "int64" if schema.get("format") == "int64" else "int32"
    return {"number": "float", "boolean": "bool"}.get(str(kind), "string")


_DURATION_FIELDS = ("Duration", "Deadline", "Period", "Timeout", "duration", "timeout")
_GOOD_DURATIONS = ["1s", "2s", "10s", "15s", "500ms", "1m"]


def _strings(schema: Mapping[str, Any], name: str, plausible: PoolFor | None) -> Any:
    enum = schema.get("enum")
    if enum:
        return st.sampled_from(list(enum))
    if name.endswith(_DURATION_FIELDS):
        return st.sampled_from(_GOOD_DURATIONS)
    pool = plausible(name) if plausible is not None else None
    return st.sampled_from(pool) if pool else st.sampled_from(["a", "team-a", "x1", "a.b-c"])


def _near_misses(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """An enum's near misses, a string one past its maxLength, numbers past the bounds."""
    out: list[Any] = []
    enum = schema.get("enum")
    if enum:
        out += [str(e).lower() for e in enum] + [str(e) + " " for e in enum]
    limit = schema.get("maxLength")
    if isinstance(limit, int):
        out += ["a" * limit, "a" * (limit + 1)]
    rest: st.SearchStrategy[Any] = st.sampled_from(out) if out else st.nothing()
    if schema.get("type") == "integer":
        low = schema.get("minimum", INT_WIDTHS["int32"][0])
        high = schema.get("maximum", INT_WIDTHS["int32"][1])
        return numbers(int(low), int(high)) | rest
    return rest


def profiles(plausible: PoolFor | None = None) -> st.SearchStrategy[dict[str, Any]]:
    """SchedulerProfile documents from the CRD's schema."""
    spec = from_openapi(crd_schema()["properties"]["spec"], name="spec", plausible=plausible)
    meta = st.fixed_dictionaries(
        {"name": sometimes(st.sampled_from(["fuzzed", "a"]), st.sampled_from(["x" * 64, "A_"]))}
    )
    return st.fixed_dictionaries(
        {
            "apiVersion": st.just("corral.dev/v1alpha1"),
            "kind": st.just("SchedulerProfile"),
            "metadata": meta,
            "spec": spec,
        }
    )


# --- the configuration types --------------------------------------------------------------


def from_type(
    tp: Any,
    *,
    key: str = "",
    meta: Mapping[str, Any] | None = None,
    depth: int = 0,
    plausible: PoolFor | None = None,
) -> st.SearchStrategy[Any]:
    """Values for a config dataclass or field type; every field sometimes attacked, integers
    at the boundaries of their width (``metadata={"bits": 64}``), floats past float32."""
    meta = meta or {}
    origin, targs = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return from_type(next(a for a in targs if a is not type(None)), key=key, meta=meta,
                         depth=depth, plausible=plausible)  # fmt: skip
    if depth > MAX_DEPTH:
        return st.none()
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = typing.get_type_hints(tp)
        fields = {
            json_name(f): from_type(hints[f.name], key=json_name(f), meta=f.metadata,
                                    depth=depth + 1, plausible=plausible)
            for f in dataclasses.fields(tp)
        }  # fmt: skip
        required = {
            json_name(f)
            for f in dataclasses.fields(tp)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
        return st.fixed_dictionaries(
            {k: v for k, v in fields.items() if k in required},
            optional={k: v for k, v in fields.items() if k not in required},
        )
    if origin is typing.Literal:
        return sometimes(st.sampled_from(targs), hostile_scalar())
    if origin is list:
        item = from_type(targs[0], key=key, depth=depth + 1, plausible=plausible)
        return sometimes(st.lists(item, max_size=3), hostile_scalar())
    if origin is dict:
        keys = st.sampled_from(KEYS) | st.sampled_from(ODD_STRINGS)
        value = from_type(targs[1], depth=depth + 1, plausible=plausible)
        return sometimes(st.dictionaries(keys, value, max_size=2), hostile_scalar())
    if tp is bool:
        return sometimes(st.booleans(), hostile_scalar("bool"))
    if tp is int:
        width = "int64" if meta.get("bits") == 64 else "int32"
        return sometimes(st.integers(-2, 120), hostile_scalar(width))
    if tp is float:
        return sometimes(st.sampled_from([0.0, 0.5, 1.0, 50.0]), hostile_scalar("float"))
    if tp is str:
        pool = plausible(key) if plausible is not None else None
        if meta.get("duration"):
            pool = _GOOD_DURATIONS
        good = st.sampled_from(pool) if pool else st.sampled_from(["a", "cpu", "zone"])
        return sometimes(good, hostile_scalar())
    return st.sampled_from(WRONG_TYPES).map(copy.deepcopy)  # Any


@cache
def _plugin_arg_types() -> dict[str, Any]:
    from corral.api.catalog import default_catalog  # noqa: PLC0415 - the catalog loads plugins
    from corral.scheduler.config import ARGS  # noqa: PLC0415

    names = set(default_catalog().registry())
    return {n: a.type for n, a in ARGS.items() if n in names}


def plugin_args(plausible: PoolFor | None = None) -> st.SearchStrategy[Any]:
    """Some plugin's args, from its type: what ``pluginConfig[].args`` holds."""
    table = _plugin_arg_types()
    return st.sampled_from(sorted(table)).flatmap(
        lambda n: from_type(table[n], plausible=plausible)
    )


def plugin_configs(plausible: PoolFor | None = None) -> st.SearchStrategy[dict[str, Any]]:
    table = _plugin_arg_types()
    return st.sampled_from(sorted(table)).flatmap(
        lambda n: st.fixed_dictionaries(
            {"name": st.just(n), "args": from_type(table[n], plausible=plausible)}
        )
    )


# --- the Kubernetes objects the engine reads ------------------------------------------------

_LEAF: dict[str, st.SearchStrategy[Any]] = {
    "string": st.sampled_from(["a", "zone-1", "kubernetes.io/hostname", "Exists", "In", "cpu"]),
    "bool": st.booleans(),
    "int32": st.integers(0, 100),
    "int64": st.integers(0, 100),
    "uint32": st.integers(0, 100),
    "uint64": st.integers(0, 100),
    "float32": st.floats(0, 10),
    "float64": st.floats(0, 10),
    "quantity": st.sampled_from(["1", "100m", "1Gi", "2"]),
    "time": st.just("2026-01-01T00:00:00Z"),
    "microtime": st.just("2026-01-01T00:00:00.000000Z"),
    "duration": st.just("10s"),
    "intorstring": st.sampled_from([1, "1", "50%"]),
    "bytes": st.just("aGk="),
    "any": st.sampled_from([{}, {"a": 1}, "x"]),
}


def from_shape(shape: Mapping[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values for one of ``shapes.json``'s types; each field sometimes attacked."""
    kind = shape["kind"]
    attacked = hostile_scalar(kind)
    if kind == "struct":
        if depth > MAX_DEPTH:
            return st.none()
        fields = shapes.schema()["types"][shape["name"]]["fields"]
        return (
            st.fixed_dictionaries(
                {},
                optional={n: st.deferred(lambda s=s: from_shape(s, depth + 1)) for n, s in fields},
            )
            | attacked
        )
    if kind == "list":
        return st.lists(from_shape(shape["of"], depth + 1), max_size=2) | attacked
    if kind == "map":
        keys = st.sampled_from(["cpu", "memory", "a", "example.com/gpu"]) | st.sampled_from(
            ODD_STRINGS
        )
        return st.dictionaries(keys, from_shape(shape["of"], depth + 1), max_size=2) | attacked
    return _LEAF.get(kind, st.none()) | attacked


# Third-party kinds the engine watches: not k8s.io/api types, so not in the shapes; their
# objects come from the CRD's OpenAPI schema instead (the file under crds/).
THIRD_PARTY_CRDS = {
    "podgroups.v1alpha1.scheduling.x-k8s.io": (
        "scheduler-plugins/podgroups.scheduling.x-k8s.io.yaml"
    ),
    "noderesourcetopologies.v1alpha2.topology.node.k8s.io": (
        "scheduler-plugins/noderesourcetopologies.topology.node.k8s.io.yaml"
    ),
    "elasticquotas.v1alpha1.scheduling.x-k8s.io": (
        "scheduler-plugins/elasticquotas.scheduling.x-k8s.io.yaml"
    ),
}


def _crd_objects(path: str) -> st.SearchStrategy[dict[str, Any]]:
    doc = yaml.safe_load((ROOT / "crds" / path).read_text())
    version = doc["spec"]["versions"][0]
    properties = version["schema"]["openAPIV3Schema"]["properties"]
    meta = st.fixed_dictionaries(
        {"name": st.sampled_from(["g", "x" * 64]), "namespace": st.sampled_from(["default", ""])}
    )
    return st.fixed_dictionaries(
        {
            "apiVersion": st.just(f"{doc['spec']['group']}/{version['name']}"),
            "kind": st.just(doc["spec"]["names"]["kind"]),
            "metadata": meta,
        },
        # Every top-level field the schema declares (a PodGroup's spec and status, a
        # NodeResourceTopology's zones, attributes and policies).
        optional={
            key: from_openapi(schema, name=key)
            for key, schema in properties.items()
            if key not in ("apiVersion", "kind", "metadata")
        },
    )


def objects(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """Whole objects of ``kind`` from its shape, apiVersion and kind set (or attacked)."""
    if kind in THIRD_PARTY_CRDS:
        return _crd_objects(THIRD_PARTY_CRDS[kind])
    root = shapes.schema()["kinds"][kind]
    body = from_shape({"kind": "struct", "name": root["type"]})
    version = st.just(root["apiVersion"]) | st.sampled_from(
        [root["apiVersion"].replace("v1", "v1beta1"), "v2", "", None, 1]
    )
    return st.tuples(body, version).map(
        lambda bv: {**(bv[0] if isinstance(bv[0], dict) else {}), "apiVersion": bv[1],
                    "kind": kind, "metadata": {"name": "fuzzed", "namespace": "default"}}
    )  # fmt: skip


def _fields_of(value: Any, shape: Mapping[str, Any], where: tuple[Any, ...]) -> list[Any]:
    """(container, key, field shape) of every field of ``value`` its shape declares, present
    or not (up to :data:`MAX_DEPTH`), found without recursion."""
    out: list[Any] = []
    stack = [(value, shape, 0)]
    types_ = shapes.schema()["types"]
    while stack:
        node, sh, depth = stack.pop()
        if depth > MAX_DEPTH:
            continue
        if sh["kind"] == "struct" and isinstance(node, dict):
            for name, field in types_[sh["name"]]["fields"]:
                out.append((node, name, field))
                if name in node:
                    stack.append((node[name], field, depth + 1))
        elif sh["kind"] == "list" and isinstance(node, list):
            for i, item in enumerate(node):
                out.append((node, i, sh["of"]))
                stack.append((item, sh["of"], depth + 1))
        elif sh["kind"] == "map" and isinstance(node, dict):
            for key in list(node):
                out.append((node, key, sh["of"]))
                stack.append((node[key], sh["of"], depth + 1))
    return out


@st.composite
def mutated_by_shape(draw: st.DrawFn, seeds: list[dict[str, Any]]) -> dict[str, Any]:
    """A copy of a seed object with up to four fields (present or declared) attacked by their
    own types: every field the Go types declare is reachable, in a realistic context."""
    obj = json.loads(json.dumps(draw(st.sampled_from(seeds))))
    root = shapes.schema()["kinds"].get(obj.get("kind"))
    if root is None:
        return obj
    for _ in range(draw(st.integers(1, 4))):
        fields = _fields_of(obj, {"kind": "struct", "name": root["type"]}, ())
        if not fields:
            break
        container, key, shape = draw(st.sampled_from(fields))
        value = draw(hostile_scalar(shape["kind"]) | from_shape(shape, MAX_DEPTH - 1))
        # A copy: the pools' lists and maps are shared, and a later mutation may land inside
        # this value (mutating a pool, or making the document contain itself).
        container[key] = copy.deepcopy(value)
    return obj


# --- YAML text: tags, anchors, styles ---------------------------------------------------------

_TAGS = ["!!str", "!!int", "!!float", "!!bool", "!!null", "!!binary", "!!timestamp", "!local",
         "!!map", "!!seq", "!!python/object:os.system", "!<tag:yaml.org,2002:int>"]  # fmt: skip


@st.composite
def to_yaml(draw: st.DrawFn, value: Any) -> str:
    """``value`` as YAML text: flow style with random tags on scalars, anchors on containers
    and aliases to them, a merge key, and plain or quoted scalars; sometimes block style."""
    if draw(st.integers(0, 3)) == 0:
        return yaml.safe_dump(value, sort_keys=False, allow_unicode=draw(st.booleans()))
    anchors: list[str] = []
    budget = [draw(st.sampled_from([0, 0, 0, 1, 2, 4]))]  # decorations to spend

    def decorate() -> bool:
        if budget[0] > 0 and draw(st.integers(0, 4)) == 0:
            budget[0] -= 1
            return True
        return False

    def emit(v: Any) -> str:
        if isinstance(v, dict):
            if anchors and decorate():
                return f"*{draw(st.sampled_from(anchors))}"
            items = [f"{_scalar(k, plain=True)}: {emit(x)}" for k, x in v.items()]
            if anchors and decorate():
                items.append(f"<<: *{draw(st.sampled_from(anchors))}")
            text = "{" + ", ".join(items) + "}"
            if decorate():
                name = f"a{len(anchors)}"
                anchors.append(name)
                text = f"&{name} {text}"
            return text
        if isinstance(v, list):
            return "[" + ", ".join(emit(x) for x in v) + "]"
        text = _scalar(v, plain=draw(st.booleans()))
        if decorate():
            text = f"{draw(st.sampled_from(_TAGS))} {text}"
        return text

    return emit(value) + "\n"


def _scalar(v: Any, *, plain: bool) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v) if isinstance(v, float) else str(v)
    text = str(v)
    safe = plain and text and all(c.isalnum() or c in "-._/" for c in text)
    return text if safe else json.dumps(text)  # a JSON string is a YAML double-quoted one


# --- keys everything shares ------------------------------------------------------------------


def _vocabulary() -> list[str]:
    from corral.api import types as api_types  # noqa: PLC0415
    from corral.scheduler.config import args as args_types  # noqa: PLC0415
    from corral.scheduler.config import types as config_types  # noqa: PLC0415

    keys: set[str] = {"apiVersion", "kind", "metadata", "spec", "status", "name", "items"}
    for module in (api_types, config_types, args_types):
        for obj in vars(module).values():
            if isinstance(obj, type) and dataclasses.is_dataclass(obj):
                keys |= {json_name(f) for f in dataclasses.fields(obj)}
    return sorted(keys)


KEYS = _vocabulary()
