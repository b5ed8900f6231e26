"""Plugin registry: in-tree names, duplicates, out-of-tree plugins from entry points."""

from __future__ import annotations

import dataclasses
from importlib import metadata
from typing import Any

import pytest

from corral.scheduler.config.declarations import ENTRY_POINT_GROUP, load_entry_points
from corral.scheduler.framework.registry import Registry, RegistryError
from corral.scheduler.framework.runtime.framework import Framework
from corral.scheduler.plugins import names
from corral.scheduler.plugins.registry import default_profile, in_tree_registry, registry


def test_in_tree_registry_builds_the_default_profile() -> None:
    fwk = Framework(default_profile(), in_tree_registry())
    assert [p.name for p in fwk.filter] == [
        names.NODE_NAME,
        names.NODE_UNSCHEDULABLE,
        names.TAINT_TOLERATION,
        names.NODE_AFFINITY,
        names.NODE_PORTS,
        names.NODE_RESOURCES_FIT,
        names.VOLUME_RESTRICTIONS,
        names.NODE_VOLUME_LIMITS,
        names.VOLUME_BINDING,
        names.VOLUME_ZONE,
        names.POD_TOPOLOGY_SPREAD,
        names.INTER_POD_AFFINITY,
        names.DYNAMIC_RESOURCES,
        names.NODE_DECLARED_FEATURES,
    ]
    assert fwk.score_weights == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "VolumeBinding": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
        "DynamicResources": 2,  # scores prioritized lists (upstream's default weight)
    }
    assert [p.name for p in fwk.post_filter] == [names.DYNAMIC_RESOURCES, names.DEFAULT_PREEMPTION]
    assert set(fwk.events_by_plugin()) >= {
        "NodeResourcesFit",
        "NodeAffinity",
        "TaintToleration",
        "InterPodAffinity",
        "PodTopologySpread",
    }


def test_duplicate_names_are_refused() -> None:
    reg = Registry({"A": lambda _a, _h: None})  # type: ignore[arg-type,return-value]
    with pytest.raises(RegistryError, match="already exists"):
        reg.register("A", lambda _a, _h: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(RegistryError):
        in_tree_registry().merge({names.NODE_NAME: lambda _a, _h: None})  # type: ignore[dict-item]


class _Plugin:
    name = "OutOfTree"

    def filter(self, state: Any, pod: Any, node: Any) -> None:
        return None


def _new(args: object, handle: object) -> _Plugin:
    return _Plugin()


_new.NAME = "OutOfTree"  # type: ignore[attr-defined]
_new.EXTENSION_POINTS = ("filter",)  # type: ignore[attr-defined]


def _entry(name: str, value: str) -> metadata.EntryPoint:
    return metadata.EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP)


def test_out_of_tree_plugins_load_from_entry_points() -> None:
    found, problems = load_entry_points([_entry("OutOfTree", f"{__name__}:_new")])
    assert problems == []
    reg = in_tree_registry().merge(registry(found))
    profile = dataclasses.replace(default_profile(), filter=("OutOfTree",))
    fwk = Framework(profile, reg)
    assert [p.name for p in fwk.filter] == ["OutOfTree"]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param(
            "corral_no_such_module:new",
            "plugin entry point 'Broken' (unknown distribution) ignored: "
            "No module named 'corral_no_such_module'",
            id="import-error",
        ),
        pytest.param(
            f"{__name__}:_Plugin",
            "plugin entry point 'Broken' (unknown distribution) ignored: has no NAME string",
            id="no-declaration",
        ),
    ],
)
def test_broken_entry_point_is_left_out_and_reported(value: str, problem: str) -> None:
    found, problems = load_entry_points([_entry("Broken", value)])
    assert (found, problems) == ([], [problem])


def test_entry_point_reusing_a_name_is_left_out() -> None:
    found, problems = load_entry_points([_entry("X", f"{__name__}:_new")], known=["OutOfTree"])
    assert found == []
    assert problems == [
        "plugin entry point 'X' (unknown distribution) ignored: "
        "'OutOfTree' is already a plugin name"
    ]


@pytest.mark.parametrize("args", [pytest.param({}, id="empty args"), pytest.param(None, id="none")])
def test_an_argless_plugin_listed_in_plugin_config_without_args_starts(args: Any) -> None:
    """``pluginConfig: [{name: VolumeZone}]`` passes validation (upstream ignores an argless
    plugin's args); the engine must then start, as upstream's does."""
    profile = dataclasses.replace(default_profile(), plugin_args={names.VOLUME_ZONE: args})
    fwk = Framework(profile, in_tree_registry())
    assert names.VOLUME_ZONE in fwk.plugins
