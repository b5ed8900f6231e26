"""Per-node Filter runs for what-if evaluations: nominated pods and preemption's dry runs.

Upstream ``RunFilterPluginsWithNominatedPods``: when a node has nominated pods of priority >=
the pod's (other than the pod itself), the filters first run with those pods added to a copy of
the node and of the cycle state (through the PreFilter ``add_pod`` extensions); only if that
passes do they run again on the node as it is. Both passes must pass; the first failure is the
node's status. The batch Filter of the cycle is the second pass for every node, so the cycle
only adds the first pass on nodes that have such nominated pods (:func:`first_pass_failures`).

Per-node runs use each plugin's per-node form. A plugin with only a batch form cannot see a
changed node; it is answered from its verdict on the cycle's snapshot at that node's slot.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy.typing as npt

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import NodeInfo, PodInfo

if TYPE_CHECKING:
    import numpy as np

    from corral.scheduler.framework.runtime.framework import Framework


def run_filter_plugins(
    fwk: Framework, state: CycleState, pod: PodInfo, node: NodeInfo
) -> Status | None:
    """Upstream ``RunFilterPlugins`` on one node: the first rejection, with its plugin."""
    snapshot = fwk.snapshot()
    for step in fwk.filter_steps:
        if step.name in state.skip_filter_plugins:
            continue
        if step.single is not None:
            s = step.single(state, pod, node)
        elif step.batch is not None and snapshot is not None and node.slot >= 0:
            verdict = step.batch(state, pod, snapshot)
            s = None
            if verdict is not None and not verdict.passed[node.slot]:
                code = 0 if verdict.reasons is None else int(verdict.reasons[node.slot])
                s = verdict.describe(code)
        else:
            s = None
        if s is None or s.is_success:
            continue
        if not s.is_rejected:
            msg = f"running {step.name!r} filter plugin: {s.message}"
            return Status.error(msg).with_plugin(step.name)
        return s.with_plugin(step.name)
    return None


def ge_nominated(fwk: Framework, pod: PodInfo, node_name: str) -> list[PodInfo]:
    nominator = fwk.nominator
    if nominator is None:
        return []
    return [
        p
        for p in nominator.nominated_pods_for_node(node_name)
        if p.priority >= pod.priority and p.uid != pod.uid
    ]


def add_nominated_pods(
    fwk: Framework, state: CycleState, pod: PodInfo, node: NodeInfo, nominated: Iterable[PodInfo]
) -> tuple[CycleState, NodeInfo, Status | None]:
    """Upstream ``addGENominatedPods`` with the pods already chosen."""
    state_out = state.clone()
    node_out = node
    for p in nominated:
        node_out = node_out.with_pod(p)
        s = fwk.run_pre_filter_extension_add_pod(state_out, pod, p, node_out)
        if s is not None and not s.is_success:
            return state, node, s
    return state_out, node_out, None


def run_filter_plugins_with_nominated_pods(
    fwk: Framework, state: CycleState, pod: PodInfo, node: NodeInfo
) -> Status | None:
    nominated = ge_nominated(fwk, pod, node.name)
    if nominated:
        state_1, node_1, err = add_nominated_pods(fwk, state, pod, node, nominated)
        if err is not None:
            return err
        s = run_filter_plugins(fwk, state_1, pod, node_1)
        if s is not None and not s.is_success:
            return s
    return run_filter_plugins(fwk, state, pod, node)


def first_pass_failures(
    fwk: Framework,
    state: CycleState,
    pod: PodInfo,
    snapshot: Snapshot,
    nodes: npt.NDArray[np.intp],
) -> dict[int, Status]:
    """Statuses of the ``nodes`` that fail the with-nominated-pods pass of the filters."""
    nominator = fwk.nominator
    if nominator is None:
        return {}
    out: dict[int, Status] = {}
    wanted = set(nodes.tolist())
    for node_name in nominator.nominated_node_names():
        slot = snapshot.slot_of.get(node_name)
        if slot is None or slot not in wanted:
            continue
        nominated = ge_nominated(fwk, pod, node_name)
        if not nominated:
            continue
        node = snapshot.node_info(slot)
        state_1, node_1, err = add_nominated_pods(fwk, state, pod, node, nominated)
        s = err if err is not None else run_filter_plugins(fwk, state_1, pod, node_1)
        if s is not None and not s.is_success:
            out[slot] = s
    return out
