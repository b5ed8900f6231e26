"""TenantSpread (Corral): prefers the nodes with the fewest pods of the pod's tenant."""

from __future__ import annotations

import numpy as np
import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.plugins import tenant_spread
from corral.testing.builders import build_cache, node, pod
from corral.testing.framework import FakeHandle


def test_tenant_spread_bad_args_fail_at_construction() -> None:
    with pytest.raises(ValueError, match='labelKey: "a/b/c": a qualified name must consist'):
        tenant_spread.new({"labelKey": "a/b/c"}, FakeHandle())


def test_tenant_spread_prefers_nodes_with_fewest_pods_of_the_tenant() -> None:
    tenant = {"tenant": "blue"}
    existing = [
        pod("x", node_name="a", labels=tenant),
        pod("y", node_name="a", labels=tenant),
        pod("z", node_name="b", labels=tenant),
        pod("r", node_name="c", labels={"tenant": "red"}),
    ]
    snapshot = build_cache([node("a"), node("b"), node("c")], existing).snapshot()
    plugin = tenant_spread.new({"labelKey": "tenant"}, FakeHandle())
    p = pod_from_json(pod("p", labels=tenant))
    state = CycleState()
    slots = snapshot.order
    assert plugin.pre_score(state, p, snapshot, slots) is None
    batch, _ = plugin.score_batch(state, p, snapshot, slots)
    single = [plugin.score(state, p, snapshot.node_info(s))[0] for s in slots.tolist()]
    assert batch.tolist() == single == [2, 1, 0]
    out = np.array(batch)
    plugin.normalize_score(state, p, out)
    assert out.tolist() == [0, 50, 100]
    unlabeled = pod_from_json(pod("q"))
    assert plugin.pre_score(CycleState(), unlabeled, snapshot, slots).is_skip


def test_tenant_spread_args_are_defaulted_where_profiles_default_them() -> None:
    # One definition (corral.scheduler.config): empty TenantSpread args get upstream-style
    # defaulting, as a profile's pluginConfig would.
    assert tenant_spread.new({}, FakeHandle()).key == "corral.dev/tenant"
    assert tenant_spread.new(None, FakeHandle()).key == "corral.dev/tenant"
