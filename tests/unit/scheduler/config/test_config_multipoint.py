"""MultiPoint expansion and plugin-name checks against a registry, as the framework does."""

from __future__ import annotations

from typing import Any

import pytest

from corral.scheduler.config import ValidationError, expand_profiles, load_config

REGISTRY = {
    "Sort": frozenset({"queueSort"}),
    "Bind": frozenset({"bind"}),
    "A": frozenset({"filter", "score"}),
    "B": frozenset({"filter", "score"}),
    "C": frozenset({"filter"}),
    # Pod-group (workload) points, as 1.37's TopologyPlacementGenerator, PodGroupPodsCount and
    # NodeResourcesFit (score and placementScore).
    "Gen": frozenset({"placementGenerate"}),
    "Gen2": frozenset({"placementGenerate"}),
    "Count": frozenset({"placementScore"}),
    "Fit": frozenset({"filter", "score", "placementScore"}),
}


def config(plugins: dict[str, Any]) -> dict[str, Any]:
    base = {"multiPoint": {"disabled": [{"name": "*"}]}}
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": "s", "plugins": {**base, **plugins}}],
    }


def multi(*names: str, **weights: int) -> dict[str, Any]:
    enabled = [{"name": n, **({"weight": weights[n]} if n in weights else {})} for n in names]
    return {"enabled": enabled, "disabled": [{"name": "*"}]}


@pytest.mark.parametrize(
    ("plugins", "filters", "scores", "weights"),
    [
        pytest.param(
            {"multiPoint": multi("Sort", "Bind", "A", "B", A=3)},
            ["A", "B"],
            ["A", "B"],
            {"A": 3, "B": 1},
            id="multiPoint expands where implemented; weight 0 becomes 1",
        ),
        pytest.param(
            {
                "multiPoint": multi("Sort", "Bind", "A", "B"),
                "filter": {"enabled": [{"name": "C"}, {"name": "B"}]},
            },
            ["B", "A", "C"],
            ["A", "B"],
            {"A": 1, "B": 1},
            id="specific override first, multiPoint next, other specific last",
        ),
        pytest.param(
            {"multiPoint": multi("Sort", "Bind", "A", "B"), "score": {"disabled": [{"name": "A"}]}},
            ["A", "B"],
            ["B"],
            {"B": 1},
            id="disabled at one point only",
        ),
        pytest.param(
            {
                "multiPoint": multi("Sort", "Bind", "A", A=2),
                "score": {"enabled": [{"name": "A", "weight": 5}]},
            },
            ["A"],
            ["A"],
            {"A": 5},
            id="score weight wins over multiPoint weight",
        ),
        pytest.param(
            {"multiPoint": multi("Sort", "Bind", "A"), "filter": {"disabled": [{"name": "*"}]}},
            [],
            ["A"],
            {"A": 1},
            id="star at a point stops expansion there",
        ),
    ],
)
def test_expand(
    plugins: dict[str, Any], filters: list[str], scores: list[str], weights: dict[str, int]
) -> None:
    cfg = load_config(config(plugins), registry=REGISTRY)
    (expanded,) = expand_profiles(cfg, REGISTRY)
    assert expanded.points["filter"] == filters
    assert expanded.points["score"] == scores
    assert expanded.score_weights == weights


@pytest.mark.parametrize(
    ("plugins", "path", "fragment"),
    [
        pytest.param(
            {"multiPoint": multi("Sort", "Bind", "Aa")},
            "profiles[0].plugins.multiPoint.enabled[2].name",
            'did you mean "A"',
            id="unknown in multiPoint",
        ),
        pytest.param(
            {"multiPoint": multi("Sort", "Bind"), "score": {"enabled": [{"name": "C"}]}},
            "profiles[0].plugins.score.enabled[0].name",
            "does not extend score",
            id="wrong point",
        ),
        pytest.param(
            {"multiPoint": multi("Sort", "Bind", "A", "A")},
            "profiles[0].plugins.multiPoint.enabled[3].name",
            "already registered",
            id="registered twice",
        ),
        pytest.param(
            {"multiPoint": multi("Bind")},
            "profiles[0].plugins.queueSort",
            "exactly one queue sort",
            id="no queue sort",
        ),
        pytest.param(
            {"multiPoint": multi("Sort")},
            "profiles[0].plugins.bind",
            "at least one bind",
            id="no binder",
        ),
        pytest.param(
            {"multiPoint": multi("Sort", "Bind", "Gen", "Gen2")},
            "profiles[0].plugins.placementGenerate",
            'at most one placement generate plugin is allowed for profile with scheduler name "s"',
            id="two placement generators",
        ),
        pytest.param(
            {"multiPoint": multi("Sort", "Bind"), "placementScore": {"enabled": [{"name": "C"}]}},
            "profiles[0].plugins.placementScore.enabled[0].name",
            "does not extend placementScore",
            id="not a placement scorer",
        ),
    ],
)
def test_expand_errors(plugins: dict[str, Any], path: str, fragment: str) -> None:
    with pytest.raises(ValidationError) as info:
        load_config(config(plugins), registry=REGISTRY)
    assert any(e.path == path and fragment in e.message for e in info.value.errors), [
        str(e) for e in info.value.errors
    ]


def test_pod_group_points_expand_with_their_own_weights() -> None:
    plugins = {
        "multiPoint": multi("Sort", "Bind", "Fit", "Gen", "Count", Fit=4),
        "placementScore": {"enabled": [{"name": "Count", "weight": 3}]},
        "podGroupPostFilter": {"enabled": [{"name": "Sort"}]},
    }
    with pytest.raises(ValidationError) as info:
        load_config(config(plugins), registry=REGISTRY)
    assert [str(e) for e in info.value.errors] == [
        "profiles[0].plugins.podGroupPostFilter.enabled[0].name: "
        'plugin "Sort" does not extend podGroupPostFilter; it extends: queueSort'
    ]
    del plugins["podGroupPostFilter"]
    (expanded,) = expand_profiles(load_config(config(plugins), registry=REGISTRY), REGISTRY)
    assert expanded.points["placementGenerate"] == ["Gen"]
    assert expanded.points["placementScore"] == ["Count", "Fit"]
    assert expanded.points["score"] == ["Fit"]
    assert expanded.score_weights == {"Fit": 4}


def test_disabling_an_unknown_plugin_is_accepted_as_upstream() -> None:
    """Upstream ignores disabled names it does not know (e.g. a removed plugin)."""
    plugins = {"multiPoint": multi("Sort", "Bind"), "filter": {"disabled": [{"name": "EBSLimits"}]}}
    (expanded,) = expand_profiles(load_config(config(plugins), registry=REGISTRY), REGISTRY)
    assert expanded.points["filter"] == []
