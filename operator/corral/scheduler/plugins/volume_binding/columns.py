"""VolumeBinding's node-dependent checks over the snapshot's columns: the bound claims' PV node
affinity, and the per-node choice of PVs for the waiting claims (upstream's per-node
``checkBoundClaims`` / ``findMatchingVolumes``, once per pod over every node).

Contract: masks are over ``snap.capacity`` slots; a choice is an option index per slot, -1 where
the claim finds no PV. :class:`AffinityMasks` keeps each PV's mask across pods.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework.api_types import RawObject
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.plugins.volume_binding import matching as vm

Mask = npt.NDArray[np.bool_]
NODE_CONFLICT: Final = 1
PV_NOT_EXIST: Final = 8


def bound_codes(bound: Sequence[RawObject | None], snap: Snapshot) -> npt.NDArray[np.int64]:
    """Upstream ``checkBoundClaims`` on every node: the first missing PV or node-affinity
    conflict, claim by claim, decides."""
    codes = np.zeros(snap.capacity, dtype=np.int64)
    undecided = np.ones(snap.capacity, dtype=np.bool_)
    for pv in bound:
        if pv is None:
            codes[undecided] |= PV_NOT_EXIST
            break
        fail = undecided & ~vm.affinity_mask(vm.pv_affinity(pv), snap)
        codes[fail] |= NODE_CONFLICT
        undecided &= ~fail
    return codes


class AffinityMasks:
    """PV node-affinity masks kept across pods. A mask depends on the PV's resourceVersion and
    on the label columns its selector reads; the cache's columns are copied on write after a
    snapshot, so the same column objects mean the same labels."""

    def __init__(self, facts: vm.Facts) -> None:
        self._facts = facts
        self._lock = threading.Lock()
        self._masks: dict[str, tuple[str, tuple[object, ...], Mask]] = {}

    def get(self, pv: RawObject, snap: Snapshot) -> Mask:
        f = self._facts(pv)
        keys = sorted(
            {r.key for t in f.affinity.terms for r in t.expressions} if f.affinity else ()
        )
        columns = (snap.capacity, *(snap.label(k) for k in keys))
        version = vm.resource_version(pv)
        with self._lock:
            cached = self._masks.get(f.name)
        if (
            cached is not None
            and cached[0] == version
            and len(cached[1]) == len(columns)
            and cached[1][0] == columns[0]
            and all(a is b for a, b in zip(cached[1][1:], columns[1:], strict=True))
        ):
            return cached[2]
        mask = vm.affinity_mask(f.affinity, snap)
        mask.setflags(write=False)
        with self._lock:
            self._masks[f.name] = (version, columns, mask)
        return mask


def choices(
    options: Sequence[Sequence[RawObject]], snap: Snapshot, masks: AffinityMasks
) -> list[npt.NDArray[np.int64]]:
    """Upstream ``findMatchingVolumes`` on every node: per claim (smallest first) the index of
    the first option whose node affinity admits the node and that no earlier claim took there,
    -1 when none. One stacked argmax per claim; a PV's per-node "taken" mask is kept only when
    a later claim may want it too."""
    size = snap.capacity
    names = [[str((pv.get("metadata") or {}).get("name", "")) for pv in opts] for opts in options]
    used: dict[str, Mask] = {}
    out = []
    for c, opts in enumerate(options):
        if not opts:
            out.append(np.full(size, -1, dtype=np.int64))
            continue
        stacked = np.stack([masks.get(pv, snap) for pv in opts])
        for i, name in enumerate(names[c]):
            taken = used.get(name)
            if taken is not None:
                stacked[i] &= ~taken
        first = stacked.argmax(axis=0)
        chosen = np.where(stacked.any(axis=0), first, -1).astype(np.int64)
        later = {n for more in names[c + 1 :] for n in more}
        for i, name in enumerate(names[c]):
            if name in later:
                took = chosen == i
                used[name] = took if name not in used else used[name] | took
        out.append(chosen)
    return out
