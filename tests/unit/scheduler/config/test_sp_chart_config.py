"""The KubeSchedulerConfiguration scheduler-plugins' Helm chart renders (as-a-second-scheduler,
its values' defaults: Coscheduling, CapacityScheduling, NodeResourceTopologyMatch,
NodeResourcesAllocatable enabled by multiPoint, PrioritySort disabled, Coscheduling's
``permitWaitingTimeSeconds: 10``) loads unchanged in the engine's loader (what ``corral
scheduler --config`` runs), and as a SchedulerProfile it validates, renders, and the rendered
configuration resolves to the same profile: plugin names per extension point, weights, args.

Not yet run end to end (an engine started on the local control plane with this file)."""

from __future__ import annotations

from typing import Any

import yaml

from corral.api import check_profile
from corral.render import render
from corral.render.names import CONFIG_KEY
from corral.scheduler.config import plugin_args
from corral.scheduler.config.declarations import BY_NAME
from corral.scheduler.engine.frameworks import load_engine_config
from corral.scheduler.framework.profile import ResolvedProfile
from support import sp_chart

NAMESPACE = "scheduler-plugins"


def chart_config() -> dict[str, Any]:
    return sp_chart.scheduler_config(sp_chart.CHART_VALUES, NAMESPACE)


def _points(profile: ResolvedProfile) -> dict[str, Any]:
    return {
        "queueSort": profile.queue_sort,
        "preFilter": profile.pre_filter,
        "filter": profile.filter,
        "postFilter": profile.post_filter,
        "score": tuple((s.name, s.weight) for s in profile.score),
        "reserve": profile.reserve,
        "permit": profile.permit,
        "postBind": profile.post_bind,
        "bind": profile.bind,
    }


def test_corral_has_every_plugin_the_chart_enables() -> None:
    enabled = sp_chart.CHART_VALUES["plugins"]["enabled"]
    assert [p for p in enabled if p not in BY_NAME] == []


def test_the_chart_config_loads_in_the_engine() -> None:
    engine = load_engine_config(chart_config())
    (profile,) = engine.profiles
    assert profile.scheduler_name == "scheduler-plugins-scheduler"
    points = _points(profile)
    # Coscheduling replaces PrioritySort; the NUMA plugin filters and scores; SP's score plugin
    # joins upstream's with weight 1.
    assert points["queueSort"] == ("Coscheduling",)
    for point in ("preFilter", "postFilter", "permit", "reserve"):
        assert "Coscheduling" in points[point], point
    for point in ("preFilter", "filter", "reserve", "postBind"):
        assert "NodeResourceTopologyMatch" in points[point], point
    # CapacityScheduling's PostFilter runs beside DefaultPreemption's (the chart keeps it).
    for point in ("preFilter", "postFilter", "reserve"):
        assert "CapacityScheduling" in points[point], point
    assert "DefaultPreemption" in points["postFilter"]
    scores = dict(points["score"])
    assert scores["NodeResourceTopologyMatch"] == 1
    assert scores["NodeResourcesAllocatable"] == 1
    assert "PrioritySort" not in str(points)

    def args(name: str) -> Any:
        return plugin_args(name, profile.plugin_args.get(name))

    assert args("Coscheduling").permit_waiting_time_seconds == 10
    assert args("NodeResourceTopologyMatch").scoring_strategy.type == "LeastAllocated"
    assert args("NodeResourcesAllocatable").mode == "Least"
    assert engine.config.leader_election.leader_elect is False
    assert engine.config.leader_election.resource_name == "scheduler-plugins-scheduler"
    assert engine.config.leader_election.resource_namespace == NAMESPACE


def test_the_chart_profile_as_a_scheduler_profile_renders_the_same_profile() -> None:
    config = chart_config()
    raw = sp_chart.scheduler_profile(config, "sp-chart")
    profile, errs = check_profile(raw)
    assert errs == [], [str(e) for e in errs]
    assert profile is not None
    (configmap,) = [o for o in render(profile).objects if o["kind"] == "ConfigMap"]
    rendered = yaml.safe_load(configmap["data"][CONFIG_KEY])
    (from_chart,) = load_engine_config(config).profiles
    (from_profile,) = load_engine_config(rendered).profiles
    assert from_profile.scheduler_name == from_chart.scheduler_name
    assert _points(from_profile) == _points(from_chart)
    assert from_profile.plugin_args == from_chart.plugin_args
    # The multiPoint layout the chart writes is what the profile keeps.
    (rendered_profile,) = rendered["profiles"]
    assert (
        rendered_profile["plugins"]["multiPoint"] == config["profiles"][0]["plugins"]["multiPoint"]
    )


def test_chart_overrides_render_as_helm_set_would() -> None:
    """``--set scheduler.name=numa,scheduler.leaderElect=true`` and a NodeResourceTopologyMatch
    pluginConfig (the chart's commented example: MostAllocated)."""
    chart = sp_chart.values(
        scheduler={"name": "numa", "leaderElect": True},
        pluginConfig=[
            {"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}},
            {"name": "NodeResourceTopologyMatch",
             "args": {"scoringStrategy": {"type": "MostAllocated"}}},
        ],
    )  # fmt: skip
    config = sp_chart.scheduler_config(chart, NAMESPACE)
    (profile,) = load_engine_config(config).profiles
    assert profile.scheduler_name == "numa"
    typed = plugin_args(
        "NodeResourceTopologyMatch", profile.plugin_args["NodeResourceTopologyMatch"]
    )
    assert typed.scoring_strategy.type == "MostAllocated"
