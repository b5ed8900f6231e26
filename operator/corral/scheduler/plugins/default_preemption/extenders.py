"""Preempting extenders narrow DefaultPreemption's candidates (upstream
``Evaluator.callExtenders``, part of the preemption evaluator, not of the cycle's runtime)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from corral.scheduler.framework.extender import Extender, ExtenderError, PodsOnNode, Victims
from corral.scheduler.framework.status import Status, StatusError
from corral.scheduler.framework.types import PodInfo


def call_preemption_extenders(
    extenders: Sequence[Extender],
    pod: PodInfo,
    node_to_victims: Mapping[str, Victims],
    pods_on_node: PodsOnNode,
) -> dict[str, Victims]:
    """Upstream ``Evaluator.callExtenders``: each preempting extender narrows the candidates.

    Raises :class:`StatusError` when a non-ignorable extender fails or accepts a node without
    victims; an ignorable one is skipped, and its victimless nodes are dropped.
    """
    victims = dict(node_to_victims)
    for ext in extenders:
        if not victims:
            break
        if not ext.supports_preemption() or not ext.is_interested(pod):
            continue
        try:
            answer = ext.process_preemption(pod, victims, pods_on_node)
        except ExtenderError as exc:
            if ext.is_ignorable():
                continue
            raise StatusError(Status.error(str(exc))) from exc
        for node, chosen in list(answer.items()):
            if chosen.pods:
                continue
            if ext.is_ignorable():
                del answer[node]
                continue
            msg = f'expected at least one victim pod on node "{node}"'
            raise StatusError(Status.error(msg))
        victims = answer
    return victims
