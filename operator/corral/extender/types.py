"""The scheduler-extender wire format (upstream ``k8s.io/kube-scheduler/extender/v1``).

The upstream structs have no json tags, so the JSON keys are the Go field names (``Pod``,
``NodeNames``, ``FailedAndUnresolvableNodes``, ``Host``, ``Score``, ``PodUID``, ...). Go decodes
keys case-insensitively (an exact match first), and so does :func:`field` here, so replies from
servers in other languages that lowercase keys still decode. Go encodes a nil pointer, slice or
map as ``null``; ``to_json`` does the same with ``None``.

Pods and nodes stay raw Kubernetes JSON (``dict``): this module imports only the standard
library and does not model the core API.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any, Final, TypeVar

MIN_EXTENDER_PRIORITY: Final = 0
MAX_EXTENDER_PRIORITY: Final = 10

JSON = dict[str, Any]
_T = TypeVar("_T")


class WireError(ValueError):
    """A JSON document that does not have the shape of the expected extender type."""


def _no_constant(name: str) -> Any:
    raise WireError(f"{name} is not JSON")


def loads(data: bytes | str) -> Any:
    """JSON as Go's decoder reads it, or :class:`WireError` (one line): no ``NaN`` or
    ``Infinity``, and nesting too deep for the parser or an integer past CPython's digit
    limit are refusals, not a ``RecursionError`` or a traceback."""
    try:
        return json.loads(data, parse_constant=_no_constant)
    except RecursionError:
        raise WireError("JSON nested too deep") from None
    except UnicodeDecodeError as exc:
        raise WireError(f"not UTF-8 JSON: {exc.reason} at byte {exc.start}") from None
    except ValueError as exc:
        raise WireError(" ".join(str(exc).split())[:200]) from None


def field(obj: Mapping[str, Any], name: str) -> Any:
    """``obj[name]`` matched like Go's decoder: exact key first, then case-insensitively."""
    if name in obj:
        return obj[name]
    folded = name.casefold()
    for key, value in obj.items():
        if key.casefold() == folded:
            return value
    return None


def _typed(value: Any, kind: type[_T], what: str) -> _T:
    # bool is an int in Python but not a JSON number in Go.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise WireError(f"{what}: expected {kind.__name__}, got {type(value).__name__}")
    # Go decodes these fields into int64 and refuses a number that does not fit.
    if kind is int and not -(2**63) <= value < 2**63:  # type: ignore[operator]
        raise WireError(f"{what}: {value} does not fit in a 64-bit integer")
    return value


def _object(value: Any, what: str) -> JSON:
    return dict(_typed(value, dict, what))


def _str_map(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    return {str(k): _typed(v, str, f"{what}[{k}]") for k, v in _object(value, what).items()}


def _opt_str_list(value: Any, what: str) -> list[str] | None:
    if value is None:
        return None
    return [_typed(v, str, f"{what}[{i}]") for i, v in enumerate(_typed(value, list, what))]


def _node_items(value: Any, what: str) -> list[JSON] | None:
    """A ``v1.NodeList`` (``{"items": [...]}``) → its items; ``null`` → ``None``."""
    if value is None:
        return None
    items = field(_object(value, what), "items") or []
    return [_node(n, f"{what}.items[{i}]") for i, n in enumerate(_typed(items, list, what))]


def _node(value: Any, what: str) -> JSON:
    """A Node object whose name handlers can read (``candidates``, ``keep``)."""
    node = _object(value, what)
    meta = node.get("metadata")
    if meta is not None:
        name = _object(meta, f"{what}.metadata").get("name")
        if name is not None:
            _typed(name, str, f"{what}.metadata.name")
    return node


def _node_list(items: list[JSON] | None) -> JSON | None:
    return None if items is None else {"metadata": {}, "items": items}


def node_name(node: Mapping[str, Any]) -> str:
    return str((node.get("metadata") or {}).get("name", ""))


def _document(value: Any, what: str) -> JSON:
    # Go decodes a JSON null into the zero value of a struct.
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise WireError(f"{what}: expected a JSON object, got {type(value).__name__}")
    return value


# --- filter and prioritize -----------------------------------------------------------------------


@dataclass(slots=True)
class ExtenderArgs:
    """The body of a filter or prioritize call.

    Exactly one of ``nodes`` (full Node objects; the extender is not nodeCacheCapable) and
    ``node_names`` (nodeCacheCapable) is set by the scheduler.
    """

    pod: JSON
    nodes: list[JSON] | None = None
    node_names: list[str] | None = None

    @property
    def candidates(self) -> list[str]:
        """The candidate node names, whichever form was sent."""
        if self.node_names is not None:
            return list(self.node_names)
        return [node_name(n) for n in self.nodes or ()]

    def to_json(self) -> JSON:
        return {"Pod": self.pod, "Nodes": _node_list(self.nodes), "NodeNames": self.node_names}

    @classmethod
    def from_json(cls, doc: Any) -> ExtenderArgs:
        doc = _document(doc, "ExtenderArgs")
        return cls(
            pod=_object(field(doc, "Pod") or {}, "Pod"),
            nodes=_node_items(field(doc, "Nodes"), "Nodes"),
            node_names=_opt_str_list(field(doc, "NodeNames"), "NodeNames"),
        )


@dataclass(slots=True)
class ExtenderFilterResult:
    """The reply to a filter call. A non-empty ``error`` fails the pod's scheduling cycle
    (unless the extender is configured ``ignorable``)."""

    nodes: list[JSON] | None = None
    node_names: list[str] | None = None
    failed_nodes: dict[str, str] = dc_field(default_factory=dict)
    # Nodes where preemption cannot help; takes precedence over failed_nodes.
    failed_and_unresolvable_nodes: dict[str, str] = dc_field(default_factory=dict)
    error: str = ""

    @classmethod
    def keep(
        cls,
        args: ExtenderArgs,
        names: Iterable[str],
        *,
        failed: Mapping[str, str] | None = None,
        failed_and_unresolvable: Mapping[str, str] | None = None,
    ) -> ExtenderFilterResult:
        """A result keeping ``names``, in the same form (names or Node objects) as the call."""
        wanted = set(names)
        failed_nodes = dict(failed or {})
        unresolvable = dict(failed_and_unresolvable or {})
        if args.node_names is not None:
            kept = [n for n in args.node_names if n in wanted]
            return cls(None, kept, failed_nodes, unresolvable)
        objects = [n for n in args.nodes or () if node_name(n) in wanted]
        return cls(objects, None, failed_nodes, unresolvable)

    @property
    def kept(self) -> list[str]:
        """Names of the nodes kept, whichever form the reply used (names win, as upstream)."""
        if self.node_names is not None:
            return list(self.node_names)
        return [node_name(n) for n in self.nodes or ()]

    def to_json(self) -> JSON:
        return {
            "Nodes": _node_list(self.nodes),
            "NodeNames": self.node_names,
            "FailedNodes": self.failed_nodes,
            "FailedAndUnresolvableNodes": self.failed_and_unresolvable_nodes,
            "Error": self.error,
        }

    @classmethod
    def from_json(cls, doc: Any) -> ExtenderFilterResult:
        doc = _document(doc, "ExtenderFilterResult")
        return cls(
            nodes=_node_items(field(doc, "Nodes"), "Nodes"),
            node_names=_opt_str_list(field(doc, "NodeNames"), "NodeNames"),
            failed_nodes=_str_map(field(doc, "FailedNodes"), "FailedNodes"),
            failed_and_unresolvable_nodes=_str_map(
                field(doc, "FailedAndUnresolvableNodes"), "FailedAndUnresolvableNodes"
            ),
            error=_typed(field(doc, "Error") or "", str, "Error"),
        )


@dataclass(slots=True)
class HostPriority:
    """One node's score in a prioritize reply, in [MIN_EXTENDER_PRIORITY, MAX_EXTENDER_PRIORITY].

    The scheduler adds ``score * weight * (100 / MAX_EXTENDER_PRIORITY)`` to the node's total.
    """

    host: str
    score: int

    def to_json(self) -> JSON:
        return {"Host": self.host, "Score": self.score}

    @classmethod
    def from_json(cls, doc: Any) -> HostPriority:
        doc = _document(doc, "HostPriority")
        return cls(
            host=_typed(field(doc, "Host") or "", str, "Host"),
            score=_typed(field(doc, "Score") or 0, int, "Score"),
        )


# The reply to a prioritize call is a JSON array of HostPriority (upstream HostPriorityList).
HostPriorityList = list[HostPriority]


def priorities_to_json(priorities: Iterable[HostPriority]) -> list[JSON]:
    return [p.to_json() for p in priorities]


def priorities_from_json(doc: Any) -> HostPriorityList:
    if doc is None:
        return []
    items = _typed(doc, list, "HostPriorityList")
    return [HostPriority.from_json(item) for item in items]


# --- bind ----------------------------------------------------------------------------------------


@dataclass(slots=True)
class ExtenderBindingArgs:
    """The body of a bind call: the extender binds the pod to ``node`` through the API."""

    pod_name: str
    pod_namespace: str
    pod_uid: str
    node: str

    def to_json(self) -> JSON:
        return {
            "PodName": self.pod_name,
            "PodNamespace": self.pod_namespace,
            "PodUID": self.pod_uid,
            "Node": self.node,
        }

    @classmethod
    def from_json(cls, doc: Any) -> ExtenderBindingArgs:
        doc = _document(doc, "ExtenderBindingArgs")
        return cls(
            pod_name=_typed(field(doc, "PodName") or "", str, "PodName"),
            pod_namespace=_typed(field(doc, "PodNamespace") or "", str, "PodNamespace"),
            pod_uid=_typed(field(doc, "PodUID") or "", str, "PodUID"),
            node=_typed(field(doc, "Node") or "", str, "Node"),
        )


@dataclass(slots=True)
class ExtenderBindingResult:
    error: str = ""

    def to_json(self) -> JSON:
        return {"Error": self.error}

    @classmethod
    def from_json(cls, doc: Any) -> ExtenderBindingResult:
        doc = _document(doc, "ExtenderBindingResult")
        return cls(error=_typed(field(doc, "Error") or "", str, "Error"))


# --- preempt -------------------------------------------------------------------------------------


@dataclass(slots=True)
class MetaPod:
    uid: str

    def to_json(self) -> JSON:
        return {"UID": self.uid}

    @classmethod
    def from_json(cls, doc: Any) -> MetaPod:
        doc = _document(doc, "MetaPod")
        return cls(uid=_typed(field(doc, "UID") or "", str, "UID"))


@dataclass(slots=True)
class Victims:
    """Full victim pods on one node (sent to extenders that are not nodeCacheCapable)."""

    pods: list[JSON] = dc_field(default_factory=list)
    num_pdb_violations: int = 0

    def to_json(self) -> JSON:
        return {"Pods": self.pods, "NumPDBViolations": self.num_pdb_violations}

    @classmethod
    def from_json(cls, doc: Any) -> Victims:
        doc = _document(doc, "Victims")
        pods = _typed(field(doc, "Pods") or [], list, "Pods")
        return cls(
            pods=[_object(p, f"Pods[{i}]") for i, p in enumerate(pods)],
            num_pdb_violations=_typed(field(doc, "NumPDBViolations") or 0, int, "NumPDBViolations"),
        )


@dataclass(slots=True)
class MetaVictims:
    """Victims by UID (nodeCacheCapable extenders, and every preempt reply)."""

    pods: list[MetaPod] = dc_field(default_factory=list)
    num_pdb_violations: int = 0

    def to_json(self) -> JSON:
        return {
            "Pods": [p.to_json() for p in self.pods],
            "NumPDBViolations": self.num_pdb_violations,
        }

    @classmethod
    def from_json(cls, doc: Any) -> MetaVictims:
        doc = _document(doc, "MetaVictims")
        pods = _typed(field(doc, "Pods") or [], list, "Pods")
        return cls(
            pods=[MetaPod.from_json(p) for p in pods],
            num_pdb_violations=_typed(field(doc, "NumPDBViolations") or 0, int, "NumPDBViolations"),
        )


def _victims_map(value: Any, what: str) -> dict[str, Victims] | None:
    if value is None:
        return None
    return {k: Victims.from_json(v or {}) for k, v in _object(value, what).items()}


def _meta_victims_map(value: Any, what: str) -> dict[str, MetaVictims] | None:
    if value is None:
        return None
    return {k: MetaVictims.from_json(v or {}) for k, v in _object(value, what).items()}


@dataclass(slots=True)
class ExtenderPreemptionArgs:
    """The body of a preempt call: the scheduler's candidate nodes and victims.

    ``node_name_to_meta_victims`` is set for nodeCacheCapable extenders, otherwise
    ``node_name_to_victims``.
    """

    pod: JSON
    node_name_to_victims: dict[str, Victims] | None = None
    node_name_to_meta_victims: dict[str, MetaVictims] | None = None

    def meta_victims(self) -> dict[str, MetaVictims]:
        """The candidates by UID, whichever form was sent (handy for building the reply)."""
        if self.node_name_to_meta_victims is not None:
            return dict(self.node_name_to_meta_victims)
        return {
            node: MetaVictims(
                [MetaPod(str((p.get("metadata") or {}).get("uid", ""))) for p in v.pods],
                v.num_pdb_violations,
            )
            for node, v in (self.node_name_to_victims or {}).items()
        }

    def to_json(self) -> JSON:
        def enc(m: Mapping[str, Victims | MetaVictims] | None) -> JSON | None:
            return None if m is None else {k: v.to_json() for k, v in m.items()}

        return {
            "Pod": self.pod,
            "NodeNameToVictims": enc(self.node_name_to_victims),
            "NodeNameToMetaVictims": enc(self.node_name_to_meta_victims),
        }

    @classmethod
    def from_json(cls, doc: Any) -> ExtenderPreemptionArgs:
        doc = _document(doc, "ExtenderPreemptionArgs")
        return cls(
            pod=_object(field(doc, "Pod") or {}, "Pod"),
            node_name_to_victims=_victims_map(field(doc, "NodeNameToVictims"), "NodeNameToVictims"),
            node_name_to_meta_victims=_meta_victims_map(
                field(doc, "NodeNameToMetaVictims"), "NodeNameToMetaVictims"
            ),
        )


@dataclass(slots=True)
class ExtenderPreemptionResult:
    """The candidates the extender accepts, each with the victims it chose (by UID)."""

    node_name_to_meta_victims: dict[str, MetaVictims] = dc_field(default_factory=dict)

    def to_json(self) -> JSON:
        return {
            "NodeNameToMetaVictims": {
                k: v.to_json() for k, v in self.node_name_to_meta_victims.items()
            }
        }

    @classmethod
    def from_json(cls, doc: Any) -> ExtenderPreemptionResult:
        doc = _document(doc, "ExtenderPreemptionResult")
        victims = _meta_victims_map(field(doc, "NodeNameToMetaVictims"), "NodeNameToMetaVictims")
        return cls(node_name_to_meta_victims=victims or {})
