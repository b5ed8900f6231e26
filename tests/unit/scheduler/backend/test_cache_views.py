"""Per-node views handed from snapshot to snapshot: after any change, every view a snapshot
gives equals one built from its own columns, and the views of untouched nodes are reused."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

import pytest

from corral.scheduler.backend.cache import Cache
from corral.scheduler.backend.records import node_from_json, pod_from_json
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.types import NodeInfo
from corral.testing.builders import node, pod

NODES = ("n0", "n1", "n2")


def _node(name: str, *, image: str = "", **kwargs: Any) -> Any:
    out = node(name, **kwargs)
    if image:
        out["status"]["images"] = [{"names": [image], "sizeBytes": 1000}]
    return out


def _fields(view: NodeInfo) -> dict[str, Any]:
    return {f.name: getattr(view, f.name) for f in fields(view)}


@dataclass(frozen=True)
class Case:
    change: Callable[[Cache], None]
    rebuilt: frozenset[str]  # nodes whose view must be built again; the others are reused


P_ON_N0 = pod("p", cpu="1", node_name="n0")


def _assume(c: Cache) -> None:
    c.assume_pod(pod_from_json(pod("new", cpu="1")), "n1")


def _forget(c: Cache) -> None:
    c.forget_pod(pod_from_json(pod("a", cpu="1")))


def _update_pod(c: Cache) -> None:
    c.update_pod(
        pod_from_json(P_ON_N0),
        pod_from_json({**P_ON_N0, "metadata": {**P_ON_N0["metadata"], "labels": {"app": "x"}}}),
    )


CASES = [
    pytest.param(Case(lambda c: None, frozenset()), id="nothing changed"),
    pytest.param(Case(_assume, frozenset({"n1"})), id="assume"),
    pytest.param(Case(_forget, frozenset({"n2"})), id="forget"),
    pytest.param(
        Case(
            lambda c: c.add_pod(pod_from_json(pod("q", cpu="1", node_name="n1"))), frozenset({"n1"})
        ),
        id="bound pod added",
    ),
    pytest.param(
        Case(lambda c: c.remove_pod(pod_from_json(P_ON_N0)), frozenset({"n0"})), id="pod removed"
    ),
    pytest.param(Case(_update_pod, frozenset({"n0"})), id="pod updated"),
    pytest.param(
        Case(
            lambda c: c.update_node(node_from_json(_node("n1", labels={"zone": "b"}))),
            frozenset({"n1"}),
        ),
        id="node labels changed",
    ),
    pytest.param(
        Case(lambda c: c.update_node(node_from_json(_node("n1", image="img"))), frozenset(NODES)),
        id="node images changed: every view's holder counts",
    ),
    pytest.param(
        Case(lambda c: c.add_node(node_from_json(_node("n3"))), frozenset(NODES)),
        id="node added: every view's node count",
    ),
    pytest.param(Case(lambda c: c.remove_node("n2"), frozenset(NODES)), id="node removed"),
    pytest.param(
        Case(
            lambda c: c.add_pod(
                pod_from_json(
                    pod(
                        "g",
                        node_name="n0",
                        containers=[
                            {"name": "c", "resources": {"requests": {"example.com/gpu": "1"}}}
                        ],
                    )
                )
            ),
            frozenset(NODES),
        ),
        id="a new resource row",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_views_carried_to_the_next_snapshot_are_current(case: Case) -> None:
    cache = Cache()
    for name in NODES:
        cache.add_node(node_from_json(_node(name, image="shared" if name == "n0" else "")))
    cache.add_pod(pod_from_json(P_ON_N0))
    cache.assume_pod(pod_from_json(pod("a", cpu="1")), "n2")
    first = cache.snapshot()
    before = {first.names[s]: first.node_info(int(s)) for s in first.order}

    case.change(cache)
    second = cache.snapshot()

    for slot in (int(s) for s in second.order):
        name = second.names[slot]
        view = second.node_info(slot)
        assert _fields(view) == _fields(_fresh(second, slot)), name
        if name in before:
            reused = view is before[name]
            assert reused is (name not in case.rebuilt), name


def _fresh(snapshot: Snapshot, slot: int) -> NodeInfo:
    return replace(snapshot, built_views={}).node_info(slot)


def test_a_snapshot_builds_each_view_once() -> None:
    cache = Cache()
    cache.add_node(node_from_json(_node("n0")))
    snapshot = cache.snapshot()
    assert snapshot.node_info(0) is snapshot.node_info(0)
