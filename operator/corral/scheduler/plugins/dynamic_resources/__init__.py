"""DynamicResources: scheduling pods with ResourceClaims (dynamic resource allocation).

:mod:`.plugin` is the plugin; :mod:`.allocator` allocates devices from ResourceSlices as
upstream's structured allocator (:mod:`.pools` gathers a node's pools, :mod:`.constraints`
holds a claim's constraints), :mod:`.cel` evaluates device selectors, :mod:`.claims` resolves
a pod's claims, :mod:`.binding` holds the device binding conditions' rules and PreBind's wait,
:mod:`.taint_rules` applies DeviceTaintRules to the slices, :mod:`.hints` are
the queueing hints. Corral's own parts beside the port: :mod:`.memo` (each node's last search)
and :mod:`.writes` (PreBind's and Unreserve's writes of claims).
"""

from __future__ import annotations

from corral.scheduler.plugins.dynamic_resources.plugin import (
    ERR_CANNOT_ALLOCATE,
    ERR_NOT_AVAILABLE,
    MSG_DEALLOCATED,
    MSG_GROUP_RELEASED,
    NAME,
    DynamicResources,
    new,
)

__all__ = [
    "ERR_CANNOT_ALLOCATE",
    "ERR_NOT_AVAILABLE",
    "MSG_DEALLOCATED",
    "MSG_GROUP_RELEASED",
    "NAME",
    "DynamicResources",
    "new",
]
