"""InterPodAffinity rules, one table row each (upstream filtering_test.go / scoring_test.go)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.plugins import inter_pod_affinity as ipa
from corral.testing.builders import build_cache, node, pod
from corral.testing.framework import FakeHandle

ZONE = "zone"
NODES = [
    node("a1", labels={ZONE: "a"}),
    node("a2", labels={ZONE: "a"}),
    node("b1", labels={ZONE: "b"}),
    node("nz"),  # no zone label
]


def term(key: str = ZONE, **selector: str) -> dict[str, Any]:
    return {"topologyKey": key, "labelSelector": {"matchLabels": selector}}


def aff(kind: str, *terms: dict[str, Any]) -> dict[str, Any]:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def handle() -> FakeHandle:
    return FakeHandle(
        {"kind": "Namespace", "metadata": {"name": "prod", "labels": {"env": "prod"}}}
    )


def verdicts(existing: list[dict[str, Any]], incoming: dict[str, Any]) -> dict[str, str]:
    snapshot = build_cache(NODES, existing).snapshot()
    plugin = ipa.new(None, handle())
    state = CycleState()
    p = pod_from_json(incoming)
    _, status = plugin.pre_filter(state, p, snapshot)
    if status is not None:
        return {"*": "skip" if status.is_skip else status.message}
    out = {}
    for slot in snapshot.order.tolist():
        s = plugin.filter(state, p, snapshot.node_info(slot))
        out[snapshot.names[slot]] = "ok" if s is None else s.message
    return out


AFF, ANTI, EXIST = (
    ipa.ERR_REASON_AFFINITY,
    ipa.ERR_REASON_ANTI_AFFINITY,
    ipa.ERR_REASON_EXISTING_ANTI_AFFINITY,
)


@pytest.mark.parametrize(
    ("existing", "incoming", "want"),
    [
        pytest.param(
            [pod("web", node_name="a1", labels={"app": "web"})],
            pod("p", affinity=aff("podAffinity", term(app="web"))),
            {"a1": "ok", "a2": "ok", "b1": AFF, "nz": AFF},
            id="affinity-same-zone",
        ),
        pytest.param(
            [],
            pod("p", labels={"app": "web"}, affinity=aff("podAffinity", term(app="web"))),
            {"a1": "ok", "a2": "ok", "b1": "ok", "nz": AFF},
            id="first-pod-matches-itself-needs-key",
        ),
        pytest.param(
            [],
            pod("p", labels={"app": "db"}, affinity=aff("podAffinity", term(app="web"))),
            {"a1": AFF, "a2": AFF, "b1": AFF, "nz": AFF},
            id="first-pod-not-matching-itself",
        ),
        pytest.param(
            [pod("web", node_name="a1", labels={"app": "web"}, namespace="other")],
            pod("p", affinity=aff("podAffinity", term(app="web"))),
            {"a1": AFF, "a2": AFF, "b1": AFF, "nz": AFF},
            id="affinity-other-namespace-does-not-count",
        ),
        pytest.param(
            [pod("web", node_name="a1", labels={"app": "web"}, namespace="prod")],
            pod(
                "p",
                affinity=aff(
                    "podAffinity",
                    {**term(app="web"), "namespaceSelector": {"matchLabels": {"env": "prod"}}},
                ),
            ),
            {"a1": "ok", "a2": "ok", "b1": AFF, "nz": AFF},
            id="namespace-selector",
        ),
        pytest.param(
            [pod("web", node_name="a1", labels={"app": "web"}, namespace="x")],
            pod("p", affinity=aff("podAffinity", {**term(app="web"), "namespaceSelector": {}})),
            {"a1": "ok", "a2": "ok", "b1": AFF, "nz": AFF},
            id="empty-namespace-selector-is-all",
        ),
        pytest.param(
            [pod("web", node_name="a1", labels={"app": "web"})],
            pod("p", affinity=aff("podAntiAffinity", term(app="web"))),
            {"a1": ANTI, "a2": ANTI, "b1": "ok", "nz": "ok"},
            id="anti-affinity-zone",
        ),
        pytest.param(
            [
                pod(
                    "guard",
                    node_name="b1",
                    labels={"app": "db"},
                    affinity=aff("podAntiAffinity", term("kubernetes.io/hostname", app="web")),
                )
            ],
            pod("p", labels={"app": "web"}),
            {"a1": "ok", "a2": "ok", "b1": EXIST, "nz": "ok"},
            id="existing-anti-affinity",
        ),
        pytest.param(
            [],
            pod("p", labels={"app": "web"}),
            {"*": "skip"},
            id="nothing-to-do-skips",
        ),
    ],
)
def test_filter(
    existing: list[dict[str, Any]], incoming: dict[str, Any], want: dict[str, str]
) -> None:
    assert verdicts(existing, incoming) == want


def scores(existing: list[dict[str, Any]], incoming: dict[str, Any], **args: Any) -> dict[str, int]:
    snapshot = build_cache(NODES, existing).snapshot()
    plugin = ipa.new(args or None, handle())
    state = CycleState()
    p = pod_from_json(incoming)
    slots = snapshot.order
    if plugin.pre_score(state, p, snapshot, slots) is not None:
        return {}
    raw, _ = plugin.score_batch(state, p, snapshot, slots)
    normalized = np.array(raw, dtype=np.int64)
    plugin.normalize_score(state, p, normalized)
    return {
        snapshot.names[s]: int(v) for s, v in zip(slots.tolist(), normalized.tolist(), strict=True)
    }


def preferred(kind: str, weight: int, t: dict[str, Any]) -> dict[str, Any]:
    return {
        kind: {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": weight, "podAffinityTerm": t}
            ]
        }
    }


@pytest.mark.parametrize(
    ("existing", "incoming", "args", "want"),
    [
        pytest.param(
            [pod("web", node_name="b1", labels={"app": "web"})],
            pod("p", affinity=preferred("podAffinity", 5, term(app="web"))),
            {},
            {"a1": 0, "a2": 0, "b1": 100, "nz": 0},
            id="preferred-affinity",
        ),
        pytest.param(
            [pod("web", node_name="b1", labels={"app": "web"})],
            pod("p", affinity=preferred("podAntiAffinity", 5, term(app="web"))),
            {},
            {"a1": 100, "a2": 100, "b1": 0, "nz": 100},
            id="preferred-anti-affinity",
        ),
        pytest.param(
            [
                pod(
                    "e",
                    node_name="a1",
                    labels={"app": "db"},
                    affinity=aff("podAffinity", term(app="web")),
                )
            ],
            pod("p", labels={"app": "web"}),
            {"hardPodAffinityWeight": 4},
            {"a1": 100, "a2": 100, "b1": 0, "nz": 0},
            id="existing-required-affinity-hard-weight",
        ),
        pytest.param(
            [
                pod(
                    "e",
                    node_name="a1",
                    labels={"app": "db"},
                    affinity=aff("podAffinity", term(app="web")),
                )
            ],
            pod("p", labels={"app": "web"}),
            {"hardPodAffinityWeight": 0},
            {},
            id="hard-weight-zero-skips",
        ),
        pytest.param(
            [pod("web", node_name="b1", labels={"app": "web"})],
            pod("p"),
            {},
            {},
            id="no-terms-anywhere-skips",
        ),
    ],
)
def test_score(
    existing: list[dict[str, Any]],
    incoming: dict[str, Any],
    args: dict[str, Any],
    want: dict[str, int],
) -> None:
    assert scores(existing, incoming, **args) == want
