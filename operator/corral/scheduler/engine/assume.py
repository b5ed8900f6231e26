"""The cache as the scheduling cycle's Assumer, for the engine's loop and for ``simulate``.

Contract: ``assume_pod`` assumes the pod on the node in the cache and then drops the pod's
nomination, as upstream ``assume`` does (``DeleteNominatedPodIfExists``); ``forget_pod`` and
``finish_binding`` are the cache's. Kept, an assumed pod would count twice wherever nominated pods
are added to what is used: a gang member waiting at Permit with the ``status.nominatedNodeName``
of an earlier attempt made CapacityScheduling refuse its last sibling as over max.
"""

from __future__ import annotations

from corral.scheduler.backend.cache import Cache
from corral.scheduler.engine.nominator import Nominator
from corral.scheduler.framework.types import PodInfo


class NominationDroppingAssumer:
    def __init__(self, cache: Cache, nominator: Nominator | None) -> None:
        self.cache = cache
        self.nominator = nominator

    def assume_pod(self, pod: PodInfo, node_name: str) -> None:
        self.cache.assume_pod(pod, node_name)
        if self.nominator is not None:
            self.nominator.forget(pod.uid)

    def forget_pod(self, pod: PodInfo) -> None:
        self.cache.forget_pod(pod)

    def finish_binding(self, pod: PodInfo) -> None:
        self.cache.finish_binding(pod)
