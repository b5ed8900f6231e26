"""VolumeBinding, as upstream's ``plugins/volumebinding``: :mod:`.plugin` is the plugin (its
extension points), :mod:`.binder` writes and waits for the bindings at PreBind,
:mod:`.assume_cache` holds the assumed PV and claim versions between Reserve and the informers,
:mod:`.matching` matches claims to PVs, :mod:`.columns` holds the node-dependent masks and
:mod:`.hints` are the queueing hints.
"""

from __future__ import annotations

from corral.scheduler.plugins.volume_binding.plugin import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    ERR_REASON_UNBOUND_IMMEDIATE,
    NAME,
    VolumeBinding,
    new,
)

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "ERR_REASON_UNBOUND_IMMEDIATE",
    "NAME",
    "VolumeBinding",
    "new",
]
