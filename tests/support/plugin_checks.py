"""Checks several plugins' tests share."""

from __future__ import annotations

from typing import Any

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cycle_state import CycleState
from corral.testing.builders import build_cache, node


def both_filters(
    plugin: Any, existing: list[dict[str, Any]], incoming: dict[str, Any]
) -> dict[str, str]:
    """Each node's Filter verdict for ``incoming`` on nodes a and b (4 CPUs, 8Gi) running
    ``existing``: "ok" or the message; the batch form must give the same verdicts."""
    snapshot = build_cache(
        [node("a", cpu="4", memory="8Gi"), node("b", cpu="4", memory="8Gi")], existing
    ).snapshot()
    p = pod_from_json(incoming)
    state = CycleState()
    verdict = plugin.filter_batch(state, p, snapshot)
    out = {}
    for slot in snapshot.order.tolist():
        single = plugin.filter(state, p, snapshot.node_info(slot))
        code = 0 if verdict.reasons is None else int(verdict.reasons[slot])
        batch = None if verdict.passed[slot] else verdict.describe(code)
        assert batch == single
        out[snapshot.names[slot]] = "ok" if single is None else single.message
    return out
