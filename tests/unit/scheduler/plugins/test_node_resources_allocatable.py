"""NodeResourcesAllocatable (scheduler-plugins): transcribed from SP
``pkg/noderesources/allocatable_test.go`` (TestNodeResourcesAllocatable) and the args tables
of ``apis/config/v1/defaults_test.go`` and
``apis/config/validation/validation_plugingargs_test.go``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.config.errors import ValidationError
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.plugins import node_resources_allocatable
from corral.testing.builders import build_cache, container, node, pod
from corral.testing.framework import FakeHandle

DEFAULT_SET = [{"name": "cpu", "weight": 1 << 20}, {"name": "memory", "weight": 1}]
CPU_SET = [{"name": "cpu", "weight": 1 << 30}, {"name": "memory", "weight": 1}]
MIN, MID, MAX = 0, 50, 100


def _node(name: str, milli_cpu: int, memory: int) -> dict[str, Any]:
    return node(name, cpu=f"{milli_cpu}m", memory=str(memory))


NO_RESOURCES = pod("none")
CPU_AND_MEMORY = pod("cpuAndMemory", cpu="1000m", memory="1Gi")
BIG_CPU = pod("bigCpu", cpu="8000m", memory="1Gi")
SCHEDULED = pod(
    "scheduled",
    node_name="machine1",
    containers=[container("a", cpu="1000m", memory="0"), container("b", cpu="2000m", memory="0")],
)
BARE = [
    pod(f"bare{i}", node_name=n)
    for i, n in enumerate(["machine1", "machine1", "machine2", "machine2"])
]


@pytest.mark.parametrize(
    ("incoming", "existing", "nodes", "resources", "mode", "want"),
    [
        pytest.param(
            NO_RESOURCES,
            [],
            [_node("machine1", 4000, 10000), _node("machine2", 4000, 10000)],
            DEFAULT_SET,
            "Least",
            [MIN, MIN],
            id="nothing scheduled, nothing requested",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [],
            [_node("machine1", 4000, 10000), _node("machine2", 6000, 10000)],
            DEFAULT_SET,
            "Least",
            [MAX, MIN],
            id="nothing scheduled, resources requested, differently sized machines, least mode",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [],
            [_node("machine1", 4000, 10000), _node("machine2", 6000, 10000)],
            DEFAULT_SET,
            "Most",
            [MIN, MAX],
            id="nothing scheduled, resources requested, differently sized machines, most mode",
        ),
        pytest.param(
            NO_RESOURCES,
            BARE,
            [_node("machine1", 4000, 10000), _node("machine2", 4000, 10000)],
            DEFAULT_SET,
            "Least",
            [MIN, MIN],
            id="no resources requested, pods scheduled",
        ),
        pytest.param(
            NO_RESOURCES,
            [SCHEDULED],
            [_node("machine1", 10000, 20000), _node("machine2", 10000, 20000)],
            DEFAULT_SET,
            "Least",
            [MIN, MIN],
            id="no resources requested, pods scheduled with resources",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [SCHEDULED],
            [_node("machine1", 10000, 20000), _node("machine2", 10000, 20000)],
            DEFAULT_SET,
            "Least",
            [MIN, MIN],
            id="resources requested, pods scheduled with resources",
        ),
        pytest.param(
            BIG_CPU,
            [],
            [_node("machine1", 4000, 1000), _node("machine2", 5000, 1000)],
            DEFAULT_SET,
            "Least",
            [MAX, MIN],
            id="resources requested with more than the node, differently sized machines, "
            "least mode",
        ),
        pytest.param(
            BIG_CPU,
            [],
            [_node("machine1", 4000, 1000), _node("machine2", 5000, 1000)],
            DEFAULT_SET,
            "Most",
            [MIN, MAX],
            id="resources requested with more than the node, differently sized machines, most mode",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [],
            [_node("machine1", 1000, 2000), _node("machine2", 1005, 1000)],
            CPU_SET,
            "Least",
            [MAX, MIN],
            # SP's names of these two rows say the other mode than the row runs.
            id="nothing scheduled, resources requested, differently sized machines, cpu weighted, "
            "most mode",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [],
            [_node("machine1", 1000, 2000), _node("machine2", 1005, 1000)],
            CPU_SET,
            "Most",
            [MIN, MAX],
            id="nothing scheduled, resources requested, differently sized machines, cpu weighted, "
            "least mode",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [],
            [
                _node("machine1", 1000, 1000 << 20),
                _node("machine2", 2000, 2000 << 20),
                _node("machine3", 3000, 3000 << 20),
            ],
            DEFAULT_SET,
            "Least",
            [MAX, MID, MIN],
            id="nothing scheduled, resources requested, 3 differently sized machines, least mode",
        ),
        pytest.param(
            CPU_AND_MEMORY,
            [],
            [
                _node("machine1", 1000, 1000 << 20),
                _node("machine2", 2000, 2000 << 20),
                _node("machine3", 3000, 3000 << 20),
            ],
            DEFAULT_SET,
            "Most",
            [MIN, MID, MAX],
            id="nothing scheduled, resources requested, 3 differently sized machines, most mode",
        ),
    ],
)
def test_node_resources_allocatable_scores(
    incoming: dict[str, Any],
    existing: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    resources: list[dict[str, Any]],
    mode: str,
    want: list[int],
) -> None:
    snapshot = build_cache(nodes, existing).snapshot()
    plugin = node_resources_allocatable.new({"resources": resources, "mode": mode}, FakeHandle())
    p = pod_from_json(incoming)
    state = CycleState()
    slots = snapshot.order
    single = np.array([plugin.score(state, p, snapshot.node_info(s))[0] for s in slots.tolist()])
    batch, status = plugin.score_batch(state, p, snapshot, slots)
    assert status is None
    assert batch.tolist() == single.tolist()
    assert plugin.normalize_score(state, p, batch) is None
    by_name = dict(zip([snapshot.names[s] for s in slots.tolist()], batch.tolist(), strict=True))
    assert [by_name[n["metadata"]["name"]] for n in nodes] == want


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        pytest.param(
            [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}],
            "resources[0].weight: -1: resource weight of memory should be a positive value, "
            "got :-1",
            id="resource with negative weight",
        ),
        pytest.param(
            [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 0}],
            "resources[1].weight: 0: resource weight of cpu should be a positive value, got :0",
            id="resource with zero weight",
        ),
    ],
)
def test_node_resources_allocatable_bad_weights_fail_at_construction(
    resources: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(ValidationError) as err:
        node_resources_allocatable.new({"resources": resources}, FakeHandle())
    assert [str(e) for e in err.value.errors] == [message]


def test_node_resources_allocatable_args_defaults_and_mode() -> None:
    # defaults_test.go "empty config NodeResourcesAllocatableArgs": cpu 1<<20, memory 1, Least.
    plugin = node_resources_allocatable.new(None, FakeHandle())
    assert plugin.weights == {"cpu": 1 << 20, "memory": 1}
    assert plugin.sign == -1
    # validation_plugingargs_test.go "invalid ModeType".
    with pytest.raises(ValidationError) as err:
        node_resources_allocatable.new({"mode": "not existent"}, FakeHandle())
    assert [str(e) for e in err.value.errors] == ['mode: "not existent": invalid support ModeType']


def test_node_resources_allocatable_rounds_toward_zero_like_go() -> None:
    # Least mode with a 3-weight sum: -10/3 is -3 in Go (truncation), not -4 (floor).
    snapshot = build_cache([node("a", cpu="10m", memory="0")]).snapshot()
    plugin = node_resources_allocatable.new(
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 2}]}, FakeHandle()
    )
    p = pod_from_json(pod("p"))
    assert plugin.score(CycleState(), p, snapshot.node_info(0))[0] == -3
    assert plugin.score_batch(CycleState(), p, snapshot, snapshot.order)[0].tolist() == [-3]
