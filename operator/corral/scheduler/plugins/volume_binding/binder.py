"""VolumeBinding's PreBind, as upstream's binder: the API writes (``bindAPIUpdate``) and the
check of what the PV controller and provisioners made of them (``checkBindings``).

Contract: :func:`write` PUTs the PVs (``claimRef``), then the claims to provision
(``volume.kubernetes.io/selected-node``), replacing each entry with the API's answer; on a
failure it restores what was not written in the assume cache and returns the API's message.
:func:`check` reads the informers' objects: ``(True, None)`` once every claim is bound,
``(False, None)`` to poll again, ``(False, message)`` when the binding was undone (upstream's
messages, without the ``binding volumes: `` prefix the caller adds).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from corral.scheduler.framework import listers
from corral.scheduler.framework.api_types import RawObject
from corral.scheduler.plugins.helper import volumes
from corral.scheduler.plugins.volume_binding import matching as vm
from corral.scheduler.plugins.volume_binding.assume_cache import AssumeCache


def _claim_key(claim: RawObject) -> tuple[str, str]:
    meta = claim.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def write(
    cache: AssumeCache,
    updater: listers.ObjectUpdater | None,
    bindings: list[tuple[RawObject, RawObject]],
    provisioned: list[RawObject],
) -> str | None:
    """Upstream ``bindAPIUpdate``: PVs first, then claims; what is not written is restored."""
    if updater is None:
        for pv, _ in bindings:
            cache.restore(listers.PERSISTENT_VOLUME, pv)
        for claim in provisioned:
            cache.restore(listers.PERSISTENT_VOLUME_CLAIM, claim)
        return "no object updater is configured"
    for i, (pv, claim) in enumerate(bindings):
        try:
            bindings[i] = (updater.update(listers.PERSISTENT_VOLUME, pv), claim)
        except Exception as exc:  # the API's answer, whatever it is, fails the binding
            for later, _ in bindings[i:]:
                cache.restore(listers.PERSISTENT_VOLUME, later)
            for later_claim in provisioned:
                cache.restore(listers.PERSISTENT_VOLUME_CLAIM, later_claim)
            return str(exc)
    for i, claim in enumerate(provisioned):
        try:
            provisioned[i] = updater.update(listers.PERSISTENT_VOLUME_CLAIM, claim)
        except Exception as exc:
            for later_claim in provisioned[i:]:
                cache.restore(listers.PERSISTENT_VOLUME_CLAIM, later_claim)
            return str(exc)
    return None


def check(
    cache: AssumeCache,
    bindings: Sequence[tuple[RawObject, RawObject]],
    provisioned: Sequence[RawObject],
    node_name: str,
    node_labels: Mapping[str, str],
) -> tuple[bool, str | None]:
    """Upstream ``checkBindings`` against the informers' objects: (all bound, error)."""
    for pv, claim in bindings:
        pv_name = str((pv.get("metadata") or {}).get("name", ""))
        ns_, claim_name = _claim_key(claim)
        now = cache.get_api(listers.PERSISTENT_VOLUME, "", pv_name)
        if now is None:
            return False, f'failed to check binding: persistentvolumes "{pv_name}" not found'
        now_claim = cache.get_api(listers.PERSISTENT_VOLUME_CLAIM, ns_, claim_name)
        if now_claim is None:
            return False, (
                f'failed to check binding: persistentvolumeclaims "{ns_}/{claim_name}" not found'
            )
        if _older(now, pv):
            return False, None
        if not vm.affinity_matches(vm.pv_affinity(now), node_labels):
            return False, (
                f'pv "{pv_name}" node affinity doesn\'t match node "{node_name}": '
                "no matching NodeSelectorTerms"
            )
        ref = (now.get("spec") or {}).get("claimRef")
        if ref is None or not ref.get("uid"):
            return False, f'ClaimRef got reset for pv "{pv_name}"'
        if not vm.is_fully_bound(now_claim):
            return False, None
    for claim in provisioned:
        ns_, claim_name = _claim_key(claim)
        now_claim = cache.get_api(listers.PERSISTENT_VOLUME_CLAIM, ns_, claim_name)
        if now_claim is None:
            return False, (
                "failed to check provisioning pvc: persistentvolumeclaims "
                f'"{ns_}/{claim_name}" not found'
            )
        if _older(now_claim, claim):
            return False, None
        notes = (now_claim.get("metadata") or {}).get("annotations")
        if notes is None:
            return False, f'selectedNode annotation reset for PVC "{claim_name}"'
        if notes.get(vm.ANN_SELECTED_NODE) != node_name:
            return False, f'provisioning failed for PVC "{claim_name}"'
        volume = volumes.volume_name(now_claim)
        if volume:
            made = cache.get_api(listers.PERSISTENT_VOLUME, "", volume)
            if made is None:
                return False, None
            if not vm.affinity_matches(vm.pv_affinity(made), node_labels):
                return False, (
                    f'pv "{volume}" node affinity doesn\'t match node "{node_name}": '
                    "no matching NodeSelectorTerms"
                )
        if not vm.is_fully_bound(now_claim):
            return False, None
    return True, None


def _older(seen: RawObject, written: RawObject) -> bool:
    """Whether the informer's ``seen`` is older than the object the binder ``written``
    (upstream compares resource versions as integers)."""
    try:
        return int(vm.resource_version(written)) > int(vm.resource_version(seen))
    except ValueError:
        return False
