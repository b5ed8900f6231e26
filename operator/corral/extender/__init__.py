"""``corral.extender``: write a kube-scheduler HTTP extender in Python.

Works with Corral's engine and with upstream kube-scheduler alike: the wire format is upstream's
``k8s.io/kube-scheduler/extender/v1``. Depends only on the standard library and aiohttp, never on
the rest of Corral. See ``docs/extenders.md``.

    from corral.extender import Extender, ExtenderArgs, ExtenderFilterResult

    ext = Extender()

    @ext.filter
    def even_nodes(args: ExtenderArgs) -> ExtenderFilterResult:
        return ExtenderFilterResult.keep(args, [n for n in args.candidates if n[-1] in "02468"])

    ext.run(port=8888)
"""

from corral.extender.server import Extender, serve_in_thread
from corral.extender.types import (
    MAX_EXTENDER_PRIORITY,
    MIN_EXTENDER_PRIORITY,
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderBindingResult,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    HostPriority,
    HostPriorityList,
    MetaPod,
    MetaVictims,
    Victims,
    WireError,
    node_name,
)

__all__ = [
    "MAX_EXTENDER_PRIORITY",
    "MIN_EXTENDER_PRIORITY",
    "Extender",
    "ExtenderArgs",
    "ExtenderBindingArgs",
    "ExtenderBindingResult",
    "ExtenderFilterResult",
    "ExtenderPreemptionArgs",
    "ExtenderPreemptionResult",
    "HostPriority",
    "HostPriorityList",
    "MetaPod",
    "MetaVictims",
    "Victims",
    "WireError",
    "node_name",
    "serve_in_thread",
]
