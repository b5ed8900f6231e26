"""The engine's wiring: the pod activator reaches the queue only once bound (a call before that
fails loudly instead of reaching a queue that is not there); the served namespaces."""

from __future__ import annotations

import pytest

from corral.scheduler.backend.queue import SchedulingQueue
from corral.scheduler.engine.namespaces import ServedNamespaces
from corral.scheduler.engine.wiring import PodActivator
from corral.scheduler.plugins.priority_sort import PrioritySort
from corral.testing.builders import pod_info


def _queue() -> SchedulingQueue:
    return SchedulingQueue(less=PrioritySort().less, pre_enqueue=lambda _pod, _gate: None)


def test_the_activator_refuses_before_the_queue_exists() -> None:
    activator = PodActivator()
    with pytest.raises(RuntimeError, match="before the scheduling queue was built"):
        activator.pod(pod_info("p"))
    with pytest.raises(RuntimeError, match="before the scheduling queue was built"):
        activator.pods(["uid"])


def test_the_activator_moves_a_waiting_pod_once_bound() -> None:
    queue = _queue()
    activator = PodActivator()
    activator.bind(queue)
    with pytest.raises(RuntimeError, match="bound to a queue already"):
        activator.bind(_queue())
    p = pod_info("p")
    queue.add(p)
    qpi = queue.pop(timeout=0)
    assert qpi is not None
    queue.add_unschedulable_if_not_present(qpi, queue.scheduling_cycle)
    assert queue.where(p.uid) in ("backoff", "unschedulable")  # waiting
    activator.pod(p)
    assert queue.where(p.uid) == "active"


@pytest.mark.parametrize(
    ("namespaces", "selector", "selected", "namespace", "want"),
    [
        pytest.param(None, None, (), "any", True, id="no tenancy: every namespace"),
        pytest.param(frozenset({"a"}), None, (), "a", True, id="listed"),
        pytest.param(frozenset({"a"}), None, (), "b", False, id="not listed"),
        pytest.param(None, "team=x", ("b",), "b", True, id="selected by the watch"),
        pytest.param(None, "team=x", ("b",), "c", False, id="not selected"),
        pytest.param(frozenset({"a"}), "team=x", (), "a", True, id="listed, selector set"),
    ],
)
def test_served_namespaces(
    namespaces: frozenset[str] | None,
    selector: str | None,
    selected: tuple[str, ...],
    namespace: str,
    want: bool,
) -> None:
    served = ServedNamespaces(namespaces, selector)
    for name in selected:
        served.on_namespace("ADDED", {"metadata": {"name": name}})
    assert served.serves(namespace) is want


def test_a_deleted_namespace_is_no_longer_served() -> None:
    served = ServedNamespaces(None, "team=x")
    served.on_namespace("ADDED", {"metadata": {"name": "b"}})
    served.on_namespace("DELETED", {"metadata": {"name": "b"}})
    assert not served.serves("b")
