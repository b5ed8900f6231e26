"""kube-scheduler's gate table and refusals (messages checked against the pinned binary in
tests/e2e/test_feature_gates_upstream.py), and Corral's own refusal of unimplemented values."""

from __future__ import annotations

import pytest

from corral.scheduler.config import features
from corral.scheduler.config.defaults import default_multi_point

LOCKED_TRUE = next(g for g in features.table().gates.values() if g.locked and g.default)


def test_the_table_is_the_pinned_release() -> None:
    tab = features.table()
    assert (tab.emulation_version, tab.min_compatibility_version) == ("1.37", "1.36")
    gw = tab.gates["GenericWorkload"]
    assert (gw.default, gw.stage, gw.locked, gw.depends_on) == (False, "BETA", False, ())
    tas = tab.gates["TopologyAwareWorkloadScheduling"]
    assert (tas.stage, tas.depends_on) == ("ALPHA", ("GenericWorkload",))
    assert tab.gates["CompositePodGroup"].depends_on == (
        "GenericWorkload",
        "TopologyAwareWorkloadScheduling",
    )
    assert "SchedulerQueueingHints" not in tab.gates  # removed in 1.37


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("X", "missing bool value for X", id="no value"),
        pytest.param(
            "X=yes",
            'invalid value of X=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
            id="not a Go bool",
        ),
        pytest.param(
            "kube:X=maybe",
            'invalid value of X=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax',
            id="the component prefix is not part of the name",
        ),
    ],
)  # fmt: skip
def test_flag_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(features.FeatureGateError, match="^" + message.replace("(", r"\(")):
        features.parse_flag(text)


@pytest.mark.parametrize(
    ("settings", "want"),
    [
        pytest.param({}, [], id="none"),
        pytest.param({"GenericWorkload": True}, [], id="implemented"),
        pytest.param({"OpportunisticBatching": True}, [], id="another gate at its default"),
        pytest.param({"NoSuchGate": True}, ["NoSuchGate: unrecognized feature gate: NoSuchGate"],
                     id="unknown"),
        pytest.param(
            {LOCKED_TRUE.name: False},
            [f"{LOCKED_TRUE.name}: cannot set feature gate {LOCKED_TRUE.name} to false, "
             "feature is locked to true"],
            id="locked",
        ),
        pytest.param(
            {"TopologyAwareWorkloadScheduling": True},
            ["TopologyAwareWorkloadScheduling: TopologyAwareWorkloadScheduling is enabled, but "
             "depends on features that are disabled: [GenericWorkload]"],
            id="dependency off",
        ),
        pytest.param(
            {"GenericWorkload": True, "CompositePodGroup": True},
            ["CompositePodGroup: CompositePodGroup is enabled, but depends on features that "
             "are disabled: [TopologyAwareWorkloadScheduling]"],
            id="one of two dependencies off",
        ),
        pytest.param(
            {"GenericWorkload": True, "PodGroupPreemptionPolicy": True},
            ["PodGroupPreemptionPolicy: PodGroupPreemptionPolicy=true is not implemented by "
             "Corral's engine: the PodGroup's own preemptionPolicy (alpha) is not implemented "
             "(default false; implemented both ways: GenericWorkload)"],
            id="alpha gate refused by Corral",
        ),
        pytest.param(
            {"OpportunisticBatching": False},
            ["OpportunisticBatching: OpportunisticBatching=false is not implemented by Corral's "
             "engine: the engine runs it only at its default (default true; implemented both "
             "ways: GenericWorkload)"],
            id="a default-on gate turned off",
        ),
    ],
)  # fmt: skip
def test_problems(settings: dict[str, bool], want: list[str]) -> None:
    assert [f"{p.gate}: {p.message}" for p in features.problems(settings)] == want


def test_an_unknown_gate_of_5000_characters_is_named_cut() -> None:
    (problem,) = features.problems({"y" * 5000: True})
    assert problem.message == f"unrecognized feature gate: {'y' * 120}... (5000 characters)"


def test_gates_change_the_default_plugin_set() -> None:
    names = [n for n, _ in default_multi_point()]
    assert "GangScheduling" not in names
    with_gate = default_multi_point(features.FeatureGates({"GenericWorkload": True}))
    assert [n for n, _ in with_gate] == [*names, "GangScheduling"]


def test_flag_renders_sorted() -> None:
    gates = features.FeatureGates({"b": True, "A": False})
    assert gates.flag() == "A=false,b=true"
    assert features.FeatureGates().flag() == ""
