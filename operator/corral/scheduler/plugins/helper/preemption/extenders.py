"""Preempting extenders narrow DefaultPreemption's candidates (upstream
``Evaluator.callExtenders``, part of the preemption evaluator, not of the cycle's runtime).

Corral's addition: an extender's answer is held to what the scheduler may do. Every node it
names must be one of the candidates it was sent (the preemptor fits there once the victims go,
inside the tenant's node pool), and every victim must pass the victim filter (a tenant
scheduler evicts only pods of the namespaces it serves). An answer outside those bounds is the
extender's error: a non-ignorable extender fails the preemption, an ignorable one is skipped.
Upstream takes the answer as it is; only RBAC would then refuse the eviction."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from corral.scheduler.framework.extender import Extender, ExtenderError, PodsOnNode, Victims
from corral.scheduler.framework.status import Status, StatusError
from corral.scheduler.framework.types import PodInfo


def call_preemption_extenders(
    extenders: Sequence[Extender],
    pod: PodInfo,
    node_to_victims: Mapping[str, Victims],
    pods_on_node: PodsOnNode,
    evictable: Callable[[PodInfo], bool] = lambda _pod: True,
) -> dict[str, Victims]:
    """Upstream ``Evaluator.callExtenders``: each preempting extender narrows the candidates.

    Raises :class:`StatusError` when a non-ignorable extender fails, accepts a node without
    victims, or answers outside the candidates or the victim filter (``evictable``); an
    ignorable one is skipped, and its victimless nodes are dropped.
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
        refusal = _beyond_bounds(ext, answer, victims, evictable)
        if refusal is not None:
            if ext.is_ignorable():
                continue
            raise StatusError(Status.error(refusal))
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


def _beyond_bounds(
    ext: Extender,
    answer: Mapping[str, Victims],
    sent: Mapping[str, Victims],
    evictable: Callable[[PodInfo], bool],
) -> str | None:
    for node, chosen in answer.items():
        if node not in sent:
            return (
                f'extender {ext.name} nominated node "{node}", which is not one of the '
                "candidates it was sent"
            )
        for victim in chosen.pods:
            if not evictable(victim):
                return (
                    f'extender {ext.name} named pod {victim.key} on node "{node}" as a victim, '
                    "which this scheduler may not evict"
                )
    return None
