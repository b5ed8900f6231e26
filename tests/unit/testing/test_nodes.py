from __future__ import annotations

import pytest

from corral.testing.nodes import (
    NodeSpecError,
    Taint,
    fake_node,
    is_ready,
    is_schedulable,
    parse_labels,
    parse_taints,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("", {}, id="empty"),
        pytest.param("pool=a", {"pool": "a"}, id="one"),
        pytest.param(
            "pool=a, tier=gold,", {"pool": "a", "tier": "gold"}, id="spaces-trailing-comma"
        ),
        pytest.param("example.com/role=", {"example.com/role": ""}, id="empty-value"),
        pytest.param("k=v=w", {"k": "v=w"}, id="equals-in-value"),
    ],
)
def test_parse_labels(text: str, expected: dict[str, str]) -> None:
    assert parse_labels(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("", [], id="empty"),
        pytest.param("a=b:NoSchedule", [Taint("a", "b", "NoSchedule")], id="key-value"),
        pytest.param(
            "spot:PreferNoSchedule", [Taint("spot", "", "PreferNoSchedule")], id="key-only"
        ),
        pytest.param(
            "a=b:NoExecute,c:NoSchedule",
            [Taint("a", "b", "NoExecute"), Taint("c", "", "NoSchedule")],
            id="two",
        ),
    ],
)
def test_parse_taints(text: str, expected: list[Taint]) -> None:
    assert parse_taints(text) == expected


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        pytest.param(parse_labels, "pool", "--labels: 'pool' is not key=value", id="label-no-eq"),
        pytest.param(parse_labels, "=a", "--labels: '=a' is not key=value", id="label-no-key"),
        pytest.param(parse_taints, "a=b", "is not key[=value]:Effect", id="taint-no-effect"),
        pytest.param(parse_taints, "a:Never", "allowed: NoSchedule, PreferNoSchedule", id="effect"),
    ],
)
def test_bad_options_name_the_flag(parse: object, text: str, message: str) -> None:
    with pytest.raises(NodeSpecError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse(text)  # type: ignore[operator]


def test_fake_node_is_selected_by_kwok_and_sized() -> None:
    node = fake_node(
        "n-1", cpu="8", memory="16Gi", pods=30, labels={"pool": "a"},
        taints=[Taint("spot", "", "NoSchedule")],
    )  # fmt: skip
    meta = node["metadata"]
    assert meta["annotations"]["kwok.x-k8s.io/node"] == "fake"
    assert meta["labels"]["kubernetes.io/hostname"] == "n-1"
    assert meta["labels"]["pool"] == "a"
    # What a kubelet registers with: nothing left for kube-controller-manager to add later.
    kubelet = {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
               "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}  # fmt: skip
    assert {k: meta["labels"][k] for k in kubelet} == kubelet
    assert node["status"]["allocatable"] == {"cpu": "8", "memory": "16Gi", "pods": "30"}
    assert node["status"]["capacity"] == node["status"]["allocatable"]
    assert node["spec"]["taints"] == [{"key": "spot", "effect": "NoSchedule"}]


@pytest.mark.parametrize(
    ("conditions", "ready"),
    [
        pytest.param([], False, id="none"),
        pytest.param([{"type": "Ready", "status": "True"}], True, id="ready"),
        pytest.param([{"type": "Ready", "status": "Unknown"}], False, id="unknown"),
        pytest.param([{"type": "MemoryPressure", "status": "True"}], False, id="other"),
    ],
)
def test_is_ready(conditions: list[dict[str, str]], ready: bool) -> None:
    assert is_ready({"status": {"conditions": conditions}}) is ready


@pytest.mark.parametrize(
    ("taints", "schedulable"),
    [
        pytest.param([], True, id="no-taints"),
        pytest.param([{"key": "dedicated", "effect": "NoSchedule"}], True, id="own-taint"),
        pytest.param([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}], False,
                     id="not-ready-taint"),
    ],
)  # fmt: skip
def test_is_schedulable_waits_for_the_not_ready_taint(
    taints: list[dict[str, str]], schedulable: bool
) -> None:
    node = {
        "spec": {"taints": taints},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    assert is_schedulable(node) is schedulable
