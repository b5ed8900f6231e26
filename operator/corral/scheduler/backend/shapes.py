"""The shapes of the Kubernetes objects the engine reads, checked as the API server would.

``shapes.json`` is generated from the pinned ``k8s.io/api`` Go types (``hack/gen-object-shapes``):
for every kind the engine reads (Pods, Nodes and the kinds of :data:`.objects.WATCHED_KINDS`)
its ``apiVersion`` and, per Go struct, the JSON type of each field with its width (``int32``,
``int64``, ``float64``, ...) and the types with a JSON form of their own (quantities, times,
int-or-string). ``crd_shapes.json`` has the same for the third-party CRD kinds it watches
(scheduler-plugins' PodGroup and ElasticQuota, NodeResourceTopology), generated from their CRDs'
openAPIV3Schema (``python -m corral_dev.crd_shapes``), with what those schemas add: required
fields and integer bounds (PodGroup's ``minMember`` at least 1).

Contract: :func:`problems` lists what the API server's decoding and validation would refuse in
an object, each ``path: what`` (``spec.containers[0].resources.requests.cpu: must be a
quantity, got object``), at most :data:`MAX_PROBLEMS`; :func:`problem` is the first one, named
after the object. What is checked:

- ``apiVersion``, when given, is the version the engine reads (a ``resource.k8s.io/v1beta1``
  claim has other fields than a v1 one and is not read as one);
- every field the Go type declares has its JSON type (``null`` is every type's zero value, as
  Go's decoder takes it); integers fit their width, numbers are finite; a quantity parses;
- a CRD kind's required fields are there, and its integers within its schema's bounds;
- resource requests, limits and overhead are not negative (the API server's validation).

Fields the Go types do not declare are left alone (the API server prunes or warns). Objects
from an API server already have these shapes; ``corral simulate`` checks each object it reads,
and the records say where a watched object is wrong when it cannot be read.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import Any, Final

from corral.scheduler.config import quantity

MAX_PROBLEMS: Final = 20
_RANGES: Final = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}
# Where resource amounts may not be negative (ValidateResourceRequirements, pod overhead).
_AMOUNTS: Final = ("requests", "limits", "overhead")
_CONTAINER_LISTS: Final = ("containers", "initContainers", "ephemeralContainers")
Path = tuple[str | int, ...]
# Where the records read quantities, by kind (elsewhere: every quantity).
_QUANTITIES_READ: Final[dict[str, tuple[Path, ...]]] = {
    "Node": (("status", "allocatable"),),
    "Pod": (("spec",),),
}


@functools.cache
def schema() -> dict[str, Any]:
    """``shapes.json`` (the Go types) with ``crd_shapes.json`` (the CRD kinds) merged in."""
    here = resources.files("corral.scheduler.backend")
    loaded: dict[str, Any] = json.loads(here.joinpath("shapes.json").read_text())
    crds = json.loads(here.joinpath("crd_shapes.json").read_text())
    loaded["kinds"] = {**loaded["kinds"], **crds["kinds"]}
    loaded["types"] = {**loaded["types"], **crds["types"]}
    return loaded


def api_version(kind: str) -> str | None:
    """The ``apiVersion`` the engine reads ``kind`` at; ``None`` for a kind it does not read."""
    root = schema()["kinds"].get(kind)
    return None if root is None else str(root["apiVersion"])


def kind_name(kind: str) -> str:
    """How objects of ``kind`` name their kind: a CRD kind is filed as
    ``<plural>.<version>.<group>`` (``podgroups.v1alpha1.scheduling.x-k8s.io``) and named
    ``PodGroup``; the others as they are filed."""
    root = schema()["kinds"].get(kind)
    return kind if root is None else str(root.get("kind", kind))


def problem(obj: Mapping[str, Any]) -> str | None:
    """The first of :func:`problems`, as ``Kind namespace/name: path: what``."""
    found = problems(obj)
    return f"{describe(obj)}: {found[0]}" if found else None


def describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = "/".join(str(meta.get(k)) for k in ("namespace", "name") if isinstance(meta.get(k), str))
    kind = obj.get("kind")
    return f"{kind if isinstance(kind, str) else 'object'} {name or '<unnamed>'}"


def problems(obj: Mapping[str, Any], *, kind: str | None = None) -> list[str]:
    """What the API server would refuse in ``obj`` (a kind the engine reads), in order.
    ``kind``: what the object is known to be (a list's items carry no kind). A missing
    ``apiVersion`` is taken as the engine's (hand-written ``simulate`` files omit it)."""
    kind = kind if kind is not None else _filed_as(obj)
    root = schema()["kinds"].get(kind) if isinstance(kind, str) else None
    if root is None:
        return []
    out: list[str] = []
    version = obj.get("apiVersion")
    if version is not None and version != root["apiVersion"]:
        shown = json.dumps(version) if isinstance(version, str) else "missing"
        out.append(
            f"apiVersion: {shown}: the engine reads {kind} at {json.dumps(root['apiVersion'])}"
        )
        return out  # another version's fields are not this one's
    for where, what in _walk(obj, {"kind": "struct", "name": root["type"]}, ()):
        out.append(f"{_dotted(where)}: {what}")
        if len(out) >= MAX_PROBLEMS:
            break
    if not out and kind == "Pod":
        out += _negative_amounts(obj)
    return out[:MAX_PROBLEMS]


def _filed_as(obj: Mapping[str, Any]) -> Any:
    """The kind an object names, as the shapes file it: a CRD kind's by its apiVersion and kind
    (a ``corral simulate`` file's ``scheduling.x-k8s.io/v1alpha1`` PodGroup)."""
    kind, version = obj.get("kind"), obj.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(version, str) or kind in schema()["kinds"]:
        return kind
    return _crd_kinds().get((version, kind), kind)


@functools.cache
def _crd_kinds() -> dict[tuple[str, str], str]:
    return {
        (root["apiVersion"], root["kind"]): filed
        for filed, root in schema()["kinds"].items()
        if "kind" in root
    }


_COMPOSITE: Final = frozenset({"struct", "list", "map"})
EVERY: Final = "*"  # in a path of :func:`problems_at`: every item of a list or map


def problems_at(obj: Mapping[str, Any], paths: tuple[Path, ...], *, kind: str) -> list[str]:
    """:func:`problems`, limited to the fields at ``paths`` (each a field path from the object's
    root; :data:`EVERY` steps into every item of a list or map) and the objects on the way
    there, in the order of the object's fields. For the fields read beyond a record, on every
    watch event: one walk, of those fields only. No apiVersion check."""
    root = schema()["kinds"].get(kind)
    if root is None:
        return []
    out: list[str] = []
    stack: list[tuple[Any, Mapping[str, Any], Path, _Trie | None]] = [
        (obj, {"kind": "struct", "name": root["type"]}, (), _trie(paths, root["type"]))
    ]
    while stack and len(out) < MAX_PROBLEMS:
        value, shape, where, below = stack.pop()
        if value is None:
            continue  # every type's zero value: nothing below it
        kind_ = shape["kind"]
        if below is None:  # a field read whole
            if kind_ in _COMPOSITE:
                out += (f"{_dotted(w)}: {what}" for w, what in _walk(value, shape, where))
            elif (what := _leaf(shape, value)) is not None:
                out.append(f"{_dotted(where)}: {what}")
            continue
        if kind_ == "struct":
            if not isinstance(value, Mapping):
                out.append(f"{_dotted(where)}: {_wrong('an object', value)}")
                continue
            if _required(shape["name"]):
                out += (f"{_dotted(w)}: {what}" for w, what in _missing(value, shape, where))
            for name, (field, deeper) in reversed(below.items()):
                if name in value:
                    stack.append((value[name], field, (*where, name), deeper))
        elif kind_ == "list":
            if not isinstance(value, list):
                out.append(f"{_dotted(where)}: {_wrong('a list', value)}")
                continue
            _field, deeper = below[EVERY]
            items = reversed(list(enumerate(value)))
            stack.extend((v, shape["of"], (*where, i), deeper) for i, v in items)
        else:  # a map
            if not isinstance(value, Mapping):
                out.append(f"{_dotted(where)}: {_wrong('an object', value)}")
                continue
            _field, deeper = below[EVERY]
            for key in reversed(list(value)):
                stack.append((value[key], shape["of"], (*where, f"[{key}]"), deeper))
    return out[:MAX_PROBLEMS]


# A compiled set of paths: per step, the shape there and what is read below it (None: all).
_Trie = dict[str | int, tuple[Mapping[str, Any], "_Trie | None"]]


@functools.cache
def _trie(paths: tuple[Path, ...], type_name: str) -> _Trie:
    """``paths`` from a struct of ``type_name``, in the order of its fields; raises KeyError for
    a step no field or item matches (a path that names no field is a bug)."""
    top: dict[Any, Any] = {}
    for path in paths:
        node = top
        for step in path:
            node = node.setdefault(step, {})
        node[None] = True  # read whole from here
    return _compile(top, {"kind": "struct", "name": type_name})


def _compile(node: Mapping[Any, Any], shape: Mapping[str, Any]) -> _Trie:
    out: _Trie = {}
    if shape["kind"] == "struct":
        fields = _fields(shape["name"])
        for step in node:
            if step is not None and step not in fields:
                raise KeyError(f"{shape['name']} has no field {step!r}")
        order = _order(shape["name"])
        for step in sorted((s for s in node if s is not None), key=order.__getitem__):
            out[step] = _child(node[step], fields[step])
    elif shape["kind"] in ("list", "map") and set(node) == {EVERY}:
        out[EVERY] = _child(node[EVERY], shape["of"])
    else:
        raise KeyError(f"cannot step into {shape} with {sorted(map(str, node))}")
    return out


def _child(node: Mapping[Any, Any], shape: Mapping[str, Any]) -> tuple[Mapping[str, Any], Any]:
    return shape, None if None in node else _compile(node, shape)


@functools.cache
def _fields(type_name: str) -> dict[str, Mapping[str, Any]]:
    return dict(schema()["types"][type_name]["fields"])


@functools.cache
def _order(type_name: str) -> dict[str, int]:
    return {name: i for i, (name, _field) in enumerate(schema()["types"][type_name]["fields"])}


def quantity_problem(obj: Mapping[str, Any], *, kind: str | None = None) -> str | None:
    """``path: what`` of the first quantity in ``obj`` that parses but that the engine cannot
    hold (:func:`corral.scheduler.config.quantity.parse`: int64 of its unit, and of millis
    for cpu); ``None`` when every one fits. Used only after a record failed to decode, to say
    where (the shapes themselves allow any quantity the grammar takes, as upstream does)."""
    kind = kind if kind is not None else obj.get("kind")
    if not isinstance(kind, str) or kind not in schema()["kinds"]:
        return None
    root = schema()["kinds"][kind]
    read_at = _QUANTITIES_READ.get(kind, ((),))
    for where, value in _quantities(obj, {"kind": "struct", "name": root["type"]}):
        if not any(where[: len(at)] == at for at in read_at):
            continue  # not read by the records: a Node's capacity may be anything
        try:
            amount = quantity.parse(value)
            if where and where[-1] == "[cpu]":
                quantity.milli_value(amount)
        except ValueError as exc:
            return f"{_dotted(where)}: {exc}"
    return None


def _quantities(value: Any, shape: Mapping[str, Any]) -> Iterator[tuple[Path, Any]]:
    stack: list[tuple[Any, Mapping[str, Any], Path]] = [(value, shape, ())]
    types = schema()["types"]
    while stack:
        value, shape, where = stack.pop()
        kind = shape["kind"]
        if kind == "quantity" and isinstance(value, str | int | float):
            yield where, value
        elif kind == "struct" and isinstance(value, Mapping):
            for name, field_shape in reversed(types[shape["name"]]["fields"]):
                if name in value:
                    stack.append((value[name], field_shape, (*where, name)))
        elif kind == "list" and isinstance(value, list):
            stack.extend((v, shape["of"], (*where, i)) for i, v in reversed(list(enumerate(value))))
        elif kind == "map" and isinstance(value, Mapping):
            for key in reversed(list(value)):
                stack.append((value[key], shape["of"], (*where, f"[{key}]")))


def _walk(value: Any, shape: Mapping[str, Any], where: Path) -> Iterator[tuple[Path, str]]:
    """The problems of ``value`` against ``shape``; iterative, so no depth is too deep."""
    stack = [(value, shape, where)]
    while stack:
        value, shape, where = stack.pop()
        if value is None:
            continue
        kind = shape["kind"]
        if kind == "struct":
            if not isinstance(value, Mapping):
                yield where, _wrong("an object", value)
                continue
            if _required(shape["name"]):
                yield from _missing(value, shape, where)
            fields = _fields(shape["name"])
            # The fields present, in the Go type's order (most of a type's fields are absent).
            present = [k for k in value if k in fields]
            if len(present) > 1:
                present.sort(key=_order(shape["name"]).__getitem__)
            for name in reversed(present):
                stack.append((value[name], fields[name], (*where, name)))
        elif kind == "list":
            if not isinstance(value, list):
                yield where, _wrong("a list", value)
                continue
            stack.extend((v, shape["of"], (*where, i)) for i, v in reversed(list(enumerate(value))))
        elif kind == "map":
            if not isinstance(value, Mapping):
                yield where, _wrong("an object", value)
                continue
            for key in reversed(list(value)):
                if not isinstance(key, str):
                    yield where, f"keys must be strings, got {_type(key)}"
                    break
                stack.append((value[key], shape["of"], (*where, f"[{key}]")))
        else:
            problem = _leaf(shape, value)
            if problem is not None:
                yield where, problem


@functools.cache
def _required(type_name: str) -> tuple[str, ...]:
    """The fields a CRD's schema requires (the Go types require none here)."""
    return tuple(schema()["types"][type_name].get("required", ()))


def _missing(
    value: Mapping[str, Any], shape: Mapping[str, Any], where: Path
) -> Iterator[tuple[Path, str]]:
    for name in _required(shape["name"]):
        if value.get(name) is None:  # the API server prunes a null before it validates
            yield (*where, name), "a required field, missing"


def _leaf(shape: Mapping[str, Any], value: Any) -> str | None:
    """:func:`_scalar`, then a CRD's ``minimum`` and ``maximum`` of an integer."""
    problem = _scalar(shape["kind"], value)
    if problem is not None or value is None:
        return problem
    low, high = shape.get("minimum"), shape.get("maximum")
    if low is not None and value < low:
        return f"must be greater than or equal to {low}, got {_number(value)}"
    if high is not None and value > high:
        return f"must be less than or equal to {high}, got {_number(value)}"
    return None


def _scalar(kind: str, value: Any) -> str | None:
    if kind in ("string", "time", "microtime", "duration", "bytes"):
        return None if isinstance(value, str) else _wrong("a string", value)
    if kind == "bool":
        return None if isinstance(value, bool) else _wrong("a boolean", value)
    if kind in _RANGES:
        if not isinstance(value, int) or isinstance(value, bool):
            return _wrong("an integer", value)
        low, high = _RANGES[kind]
        if not low <= value <= high:
            return f"{_number(value)} does not fit in {kind}"
        return None
    if kind in ("float32", "float64"):
        if not isinstance(value, int | float) or isinstance(value, bool):
            return _wrong("a number", value)
        if isinstance(value, float) and not math.isfinite(value):
            return f"{value!r} is not a number JSON has"
        return None
    if kind == "intorstring":
        if isinstance(value, str):
            return None
        if not isinstance(value, int) or isinstance(value, bool):
            return _wrong("an integer or a string", value)
        return _scalar("int32", value)
    if kind == "quantity":
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            return _wrong("a quantity (a string or a number)", value)
        try:
            quantity.exact(value)
        except ValueError as exc:
            return str(exc)
        return None
    return None  # "any"


def _negative_amounts(pod: Mapping[str, Any]) -> list[str]:
    """Requests, limits and overhead below zero, as the API server's validation refuses them."""
    spec = pod.get("spec")
    if not isinstance(spec, Mapping):
        return []
    found: list[str] = []
    places: list[tuple[Path, Any]] = [(("spec", "overhead"), spec.get("overhead"))]
    resources_ = spec.get("resources")
    if isinstance(resources_, Mapping):
        places += [(("spec", "resources", k), resources_.get(k)) for k in _AMOUNTS]
    for key in _CONTAINER_LISTS:
        for i, container in enumerate(spec.get(key) or ()):
            own = container.get("resources") if isinstance(container, Mapping) else None
            if isinstance(own, Mapping):
                places += [(("spec", key, i, "resources", k), own.get(k)) for k in _AMOUNTS]
    for where, amounts in places:
        for name, amount in (amounts or {}).items():
            if amount is not None and quantity.exact(amount) < 0:
                found.append(
                    f"{_dotted((*where, f'[{name}]'))}: must be greater than or equal to 0"
                )
    return found


def _wrong(expected: str, value: Any) -> str:
    return f"must be {expected}, got {_type(value)}"


def _type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "list"
    return "null" if value is None else type(value).__name__


def _number(value: int) -> str:
    text = str(value)
    return text if len(text) <= 24 else f"{text[:12]}...{text[-6:]} ({len(text)} digits)"


def _dotted(where: Path) -> str:
    out = ""
    for part in where:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.startswith("["):
            out += part
        else:
            out += f".{part}" if out else part
    return out or "<root>"
