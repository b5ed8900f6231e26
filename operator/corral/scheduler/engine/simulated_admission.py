"""What the API server and the controllers would have made of objects written by hand.

``corral simulate`` reads YAML, not a cluster: a hand-written Pod has no uid, a Node no hostname
label, a PersistentVolume no phase. Each object is completed here as the component that owns the
field would leave it, and every such completion is counted in :class:`Notes` so the output can
say what was assumed (a snapshot of a real cluster, ``kubectl get -o yaml``, needs none):

- Pods (API server): a uid, ``metadata.namespace: default``, ``spec.schedulerName:
  default-scheduler``; admission's Priority plugin: ``spec.priority`` and
  ``spec.preemptionPolicy`` from ``priorityClassName``, else from the ``globalDefault``
  PriorityClass, else 0.
- Nodes (kubelet): the ``kubernetes.io/hostname`` label (the node's name) when missing; (node
  lifecycle controller) a cordoned node (``spec.unschedulable``) gets the
  ``node.kubernetes.io/unschedulable:NoSchedule`` taint.
- Namespaces (API server): the ``kubernetes.io/metadata.name`` label.
- PersistentVolumes without ``status.phase`` (PV controller): ``Bound`` when a claim names the
  volume and the volume's ``claimRef`` names the claim, else ``Available``; such claims get
  ``Bound`` and ``pv.kubernetes.io/bind-completed``. Claims (DefaultStorageClass admission):
  no ``storageClassName``, the default class; (PV controller) an unbound claim of an Immediate
  class is bound to the smallest Available PV that fits, or (its provisioner) to a new one.

- PodGroups (API server): a uid, ``metadata.generation: 1``, ``metadata.namespace: default``;
  admission's Priority plugin: ``spec.priority`` from ``priorityClassName`` (else the
  ``globalDefault`` PriorityClass, else 0), as for pods.
- Pending pods (resourceclaim controller): each ``spec.resourceClaims`` entry naming a
  ResourceClaimTemplate gets its ResourceClaim, made from the template, owned by the pod, and
  the pod's ``status.resourceClaimStatuses`` names it.

Finished pods (``Succeeded``/``Failed``) are not admitted at all: the engine's informer lists
pods with ``status.phase!=Succeeded,status.phase!=Failed``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, Final

from corral.scheduler.backend.objects import ObjectStore
from corral.scheduler.backend.records import MalformedObjectError
from corral.scheduler.config import quantity
from corral.scheduler.framework import labels, listers
from corral.scheduler.framework.api_types import RawObject

TERMINAL_PHASES: Final = ("Succeeded", "Failed")
# The kinds simulate reads that belong to no namespace; every other one gets ``default``.
CLUSTER_SCOPED: Final = frozenset({
    listers.NAMESPACE, listers.PERSISTENT_VOLUME, listers.STORAGE_CLASS, listers.CSI_NODE,
    listers.CSI_DRIVER, listers.VOLUME_ATTACHMENT, listers.PRIORITY_CLASS,
    listers.RESOURCE_SLICE, listers.DEVICE_CLASS, listers.DEVICE_TAINT_RULE,
    listers.NODE_RESOURCE_TOPOLOGY,
})  # fmt: skip
HOSTNAME: Final = "kubernetes.io/hostname"
UNSCHEDULABLE_TAINT: Final = "node.kubernetes.io/unschedulable"
NAMESPACE_NAME: Final = "kubernetes.io/metadata.name"
BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
DEFAULT_CLASS: Final = "storageclass.kubernetes.io/is-default-class"
NO_PROVISIONER: Final = "kubernetes.io/no-provisioner"
DEFAULT_SCHEDULER: Final = "default-scheduler"

# What was assumed, as the output words it (counted per object).
NOTE_SCHEDULER_NAME: Final = (
    "Pod(s) without spec.schedulerName: default-scheduler, as the API server defaults it"
)
NOTE_HOSTNAME: Final = (
    "Node(s) without the kubernetes.io/hostname label: the node's name, as the kubelet sets it"
)
NOTE_CORDONED: Final = (
    "cordoned Node(s) without the node.kubernetes.io/unschedulable taint: tainted, as the node "
    "lifecycle controller taints them"
)
NOTE_PV_AVAILABLE: Final = (
    "PersistentVolume(s) without status.phase: Available, as the PV controller makes it"
)
NOTE_PV_BOUND: Final = (
    "PersistentVolume(s) without status.phase, pre-bound to a claim that names them: Bound "
    "with the claim, as the PV controller binds them"
)
NOTE_DEFAULT_CLASS: Final = (
    "PersistentVolumeClaim(s) without storageClassName: the default StorageClass, as admission "
    "sets it"
)
NOTE_IMMEDIATE_BOUND: Final = (
    "unbound PersistentVolumeClaim(s) of an Immediate class: bound to the smallest Available "
    "PersistentVolume that fits, as the PV controller binds them"
)
NOTE_IMMEDIATE_PROVISIONED: Final = (
    "unbound PersistentVolumeClaim(s) of an Immediate class with a provisioner: given a new "
    "PersistentVolume, as the provisioner would"
)
NOTE_TEMPLATE_CLAIM: Final = (
    "ResourceClaim(s) made from a ResourceClaimTemplate for pending pods, as the resourceclaim "
    "controller makes them"
)
TEMPLATE: Final = "ResourceClaimTemplate"
POD_CLAIM_NAME: Final = "resource.kubernetes.io/pod-claim-name"
NOTE_EXTENDER_BIND: Final = (
    "binder extender(s) not called to bind, offline: the simulation binds their pods itself"
)
NOTE_TERMINAL: Final = (
    "Pod(s) in phase Succeeded or Failed left out, as the engine's informer leaves them out"
)
NOTE_DEFAULT_PRIORITY: Final = (
    "Pod(s) without priorityClassName: the globalDefault PriorityClass's priority, as admission "
    "sets it"
)


class Notes:
    """Assumptions made, with how many objects each concerned, in the order first made."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def add(self, note: str, n: int = 1) -> None:
        self.counts[note] += n

    def lines(self) -> list[str]:
        return [f"{n} {note}" for note, n in self.counts.items()]


def _meta(raw: RawObject) -> dict[str, Any]:
    meta = raw.get("metadata")
    if meta is not None and not isinstance(meta, Mapping):
        raise MalformedObjectError(f"{raw.get('kind')}: metadata must be an object")
    return dict(meta or {})


def _spec(raw: RawObject) -> dict[str, Any]:
    spec = raw.get("spec")
    if spec is not None and not isinstance(spec, Mapping):
        raise MalformedObjectError(f"{raw.get('kind')}: spec must be an object")
    return dict(spec or {})


def terminal(raw: RawObject) -> bool:
    status = raw.get("status")
    return isinstance(status, Mapping) and status.get("phase") in TERMINAL_PHASES


class Admission:
    def __init__(self, objects: ObjectStore, notes: Notes) -> None:
        self.objects = objects
        self.notes = notes
        self._uids = 0
        # ResourceClaimTemplates: read by the resourceclaim controller, not by the engine.
        self.templates: dict[tuple[str, str], RawObject] = {}

    def template(self, raw: RawObject) -> None:
        meta = _meta(raw)
        self.templates[(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))] = raw

    def pending(self, raw: RawObject) -> dict[str, Any]:
        """A pod to place: :meth:`pod`, then the claims its templates stand for."""
        pod = self.pod(raw)
        entries = pod["spec"].get("resourceClaims")
        if not isinstance(entries, list):
            return pod
        status = dict(pod.get("status") or {}) if isinstance(pod.get("status"), Mapping) else {}
        recorded = status.get("resourceClaimStatuses")
        statuses = list(recorded) if isinstance(recorded, list) else []
        named = {s.get("name") for s in statuses if isinstance(s, Mapping)}
        for entry in entries:
            if not isinstance(entry, Mapping) or entry.get("name") in named:
                continue
            template = self.templates.get(
                (pod["metadata"]["namespace"], str(entry.get("resourceClaimTemplateName") or ""))
            )
            if template is None:
                continue  # no template: DynamicResources keeps the pod waiting, as upstream
            claim = _claim_from(template, pod, str(entry.get("name") or ""))
            self.objects.apply(listers.RESOURCE_CLAIM, "ADDED", claim)
            statuses.append({"name": entry.get("name"),
                             "resourceClaimName": claim["metadata"]["name"]})  # fmt: skip
            self.notes.add(NOTE_TEMPLATE_CLAIM)
        if statuses:
            status["resourceClaimStatuses"] = statuses
            pod["status"] = status
        return pod

    def pod(self, raw: RawObject) -> dict[str, Any]:
        meta, spec = _meta(raw), _spec(raw)
        if not meta.get("uid"):
            self._uids += 1
            meta["uid"] = f"simulated-{self._uids}"
        meta.setdefault("namespace", "default")
        if not spec.get("schedulerName"):
            spec["schedulerName"] = DEFAULT_SCHEDULER
            self.notes.add(NOTE_SCHEDULER_NAME)
        if spec.get("priority") is None:
            self._priority(spec)
        return {**raw, "metadata": meta, "spec": spec}

    def pod_group(self, raw: RawObject) -> dict[str, Any]:
        meta, spec = _meta(raw), _spec(raw)
        if not meta.get("uid"):
            self._uids += 1
            meta["uid"] = f"simulated-group-{self._uids}"
        meta.setdefault("namespace", "default")
        meta.setdefault("generation", 1)
        if spec.get("priority") is None:
            self._priority(spec, policy=False)
        return {**raw, "metadata": meta, "spec": spec}

    def _priority(self, spec: dict[str, Any], *, policy: bool = True) -> None:
        name = spec.get("priorityClassName")
        found: RawObject | None = None
        if name:
            found = self.objects.get(listers.PRIORITY_CLASS, "", str(name))
        else:
            defaults = [c for c in self.objects.list(listers.PRIORITY_CLASS)
                        if c.get("globalDefault") is True]  # fmt: skip
            if defaults:
                found = min(defaults, key=lambda c: _int(c.get("value")))
                self.notes.add(NOTE_DEFAULT_PRIORITY)
        if found is None:
            return
        spec["priority"] = _int(found.get("value"))
        preemption = found.get("preemptionPolicy")
        if policy and preemption and not spec.get("preemptionPolicy"):
            spec["preemptionPolicy"] = preemption

    def object(self, kind: str, raw: RawObject) -> dict[str, Any]:
        """Any other kind: the API server's default namespace, a Namespace's name label."""
        if kind == listers.NAMESPACE:
            return self.namespace(raw)
        meta = _meta(raw)
        if kind not in CLUSTER_SCOPED:
            meta.setdefault("namespace", "default")
        return {**raw, "metadata": meta}

    def node(self, raw: RawObject) -> dict[str, Any]:
        meta = _meta(raw)
        labels = meta.get("labels")
        if not isinstance(labels, Mapping) or HOSTNAME not in labels:
            meta["labels"] = {**(labels if isinstance(labels, Mapping) else {}),
                              HOSTNAME: str(meta.get("name") or "")}  # fmt: skip
            self.notes.add(NOTE_HOSTNAME)
        spec = _spec(raw)
        listed = spec.get("taints")
        taints: list[Any] = listed if isinstance(listed, list) else []
        if spec.get("unschedulable") is True and not any(
            isinstance(t, Mapping) and t.get("key") == UNSCHEDULABLE_TAINT for t in taints
        ):
            spec["taints"] = [*taints, {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}]
            self.notes.add(NOTE_CORDONED)
            return {**raw, "metadata": meta, "spec": spec}
        return {**raw, "metadata": meta}

    def namespace(self, raw: RawObject) -> dict[str, Any]:
        meta = _meta(raw)
        labels = meta.get("labels")
        merged = dict(labels) if isinstance(labels, Mapping) else {}
        merged[NAMESPACE_NAME] = str(meta.get("name") or "")
        return {**raw, "metadata": {**meta, "labels": merged}}

    def volumes(
        self,
        volumes: Sequence[RawObject],
        claims: Sequence[RawObject],
        classes: Sequence[RawObject],
    ) -> list[RawObject]:
        """The PVs and PVCs to store again, as the PV controller and admission leave them:
        phase-less PVs pre-bound to a claim that names them are Bound with it, other phase-less
        PVs Available; a claim without ``storageClassName`` gets the default class; an unbound
        claim of an Immediate class is bound to the smallest Available PV that fits, or given a
        new PV by its class's provisioner."""
        by_name = {str(_meta(c).get("name") or ""): c for c in classes}
        default = [c for c in classes if (_meta(c).get("annotations") or {}).get(
            DEFAULT_CLASS) == "true"]  # fmt: skip
        pvs = {str(_meta(v).get("name") or ""): dict(v) for v in volumes}
        pvcs = {_ns_name(c): dict(c) for c in claims}
        changed: set[tuple[str, str]] = set()
        for key, claim in pvcs.items():
            spec = _spec(claim)
            if "storageClassName" not in spec and default:
                spec["storageClassName"] = str(_meta(default[0]).get("name") or "")
                pvcs[key] = {**claim, "spec": spec}
                changed.add(("pvc", "/".join(key)))
                self.notes.add(NOTE_DEFAULT_CLASS)
        for name, volume in pvs.items():
            status = volume.get("status")
            if isinstance(status, Mapping) and status.get("phase"):
                continue
            ref = _spec(volume).get("claimRef")
            key = (str(ref.get("namespace") or ""), str(ref.get("name") or "")) if isinstance(
                ref, Mapping) else ("", "")  # fmt: skip
            named = pvcs.get(key)
            if named is not None and _spec(named).get("volumeName") == name:
                pvs[name] = {**volume, "status": {"phase": "Bound"}}
                pvcs[key] = _bound_claim(named, name)
                changed |= {("pv", name), ("pvc", "/".join(key))}
                self.notes.add(NOTE_PV_BOUND)
            else:
                pvs[name] = {**volume, "status": {"phase": "Available"}}
                changed.add(("pv", name))
                self.notes.add(NOTE_PV_AVAILABLE)
        for key, claim in pvcs.items():
            spec = _spec(claim)
            cls = by_name.get(str(spec.get("storageClassName") or ""))
            if spec.get("volumeName") or (cls is not None and cls.get("volumeBindingMode") not in (
                None, "Immediate")):  # fmt: skip
                continue
            found = _best_volume(claim, pvs.values())
            provisioner = str(cls.get("provisioner") or "") if cls is not None else ""
            if found is None and provisioner and provisioner != NO_PROVISIONER:
                found = _provisioned(claim)
                self.notes.add(NOTE_IMMEDIATE_PROVISIONED)
            elif found is not None:
                self.notes.add(NOTE_IMMEDIATE_BOUND)
            if found is None:
                continue
            name = str(_meta(found).get("name") or "")
            ref = {"kind": "PersistentVolumeClaim", "namespace": key[0], "name": key[1],
                   "uid": str(_meta(claim).get("uid") or "")}  # fmt: skip
            pvs[name] = {**found, "spec": {**_spec(found), "claimRef": ref},
                         "status": {"phase": "Bound"}}  # fmt: skip
            pvcs[key] = _bound_claim(claim, name)
            changed |= {("pv", name), ("pvc", "/".join(key))}
        out: list[RawObject] = [v for n, v in pvs.items() if ("pv", n) in changed]
        return out + [c for k, c in pvcs.items() if ("pvc", "/".join(k)) in changed]


def _bound_claim(claim: RawObject, volume: str) -> dict[str, Any]:
    meta = _meta(claim)
    notes = {**(meta.get("annotations") or {}), BIND_COMPLETED: "yes"}
    return {**claim, "metadata": {**meta, "annotations": notes},
            "spec": {**_spec(claim), "volumeName": volume},
            "status": {**(claim.get("status") or {}), "phase": "Bound"}}  # fmt: skip


def _size(raw: object) -> Fraction:
    try:
        return quantity.parse(raw)  # type: ignore[arg-type]
    except (quantity.QuantityError, TypeError):
        return Fraction(0)


def _best_volume(claim: RawObject, volumes: Iterable[RawObject]) -> RawObject | None:
    """The PV controller's match for an Immediate claim (no node to honour): an Available PV of
    the claim's class and volume mode, with every access mode it asks for, the claim's selector
    and at least its request; the smallest, then by name."""
    spec = _spec(claim)
    want = _size(((spec.get("resources") or {}).get("requests") or {}).get("storage"))
    modes = set(spec.get("accessModes") or ())
    selector = labels.parse(spec["selector"]) if isinstance(spec.get("selector"), Mapping) else None
    fitting = []
    for pv in volumes:
        pv_spec = _spec(pv)
        status = pv.get("status") if isinstance(pv.get("status"), Mapping) else {}
        if (status or {}).get("phase") != "Available" or pv_spec.get("claimRef"):
            continue
        size = _size((pv_spec.get("capacity") or {}).get("storage"))
        if size < want or not modes <= set(pv_spec.get("accessModes") or ()):
            continue
        if str(pv_spec.get("storageClassName") or "") != str(spec.get("storageClassName") or ""):
            continue
        if (pv_spec.get("volumeMode") or "Filesystem") != (spec.get("volumeMode") or "Filesystem"):
            continue
        pv_labels = _meta(pv).get("labels") or {}
        if selector is not None and not selector.matches(pv_labels):
            continue
        fitting.append((size, str(_meta(pv).get("name") or ""), pv))
    return min(fitting, key=lambda f: (f[0], f[1]))[2] if fitting else None


def _provisioned(claim: RawObject) -> dict[str, Any]:
    meta, spec = _meta(claim), _spec(claim)
    return {
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": f"pvc-{meta.get('namespace', '')}-{meta.get('name', '')}"},
        "spec": {"capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {})
                              .get("storage", "0")},
                 "accessModes": list(spec.get("accessModes") or ()),
                 "storageClassName": spec.get("storageClassName") or ""},
    }  # fmt: skip


def _claim_from(template: RawObject, pod: RawObject, entry: str) -> dict[str, Any]:
    """The resourceclaim controller's claim for one entry of ``pod``: named after the pod and
    the entry (the controller adds 5 random characters; here they are fixed), owned by it."""
    meta = _meta(pod)
    spec = _spec(template).get("spec")
    tmeta = (_spec(template).get("metadata") or {}) if isinstance(_spec(template).get(
        "metadata"), Mapping) else {}  # fmt: skip
    name = f"{meta.get('name')}-{entry}-sim00"
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "namespace": meta.get("namespace"),
            "uid": f"simulated-claim-{meta.get('namespace')}-{name}",
            "labels": dict(tmeta.get("labels") or {}),
            "annotations": {**(tmeta.get("annotations") or {}), POD_CLAIM_NAME: entry},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta.get("name"),
                                 "uid": meta.get("uid"), "controller": True,
                                 "blockOwnerDeletion": True}],
        },
        "spec": dict(spec) if isinstance(spec, Mapping) else {},
    }  # fmt: skip


def _ns_name(obj: RawObject) -> tuple[str, str]:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return value
