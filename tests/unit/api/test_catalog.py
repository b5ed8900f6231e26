"""The plugin catalog: built-ins, and out-of-tree plugins from the corral.plugins entry point."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import pytest

from corral.api import build_catalog, check_profile, default_catalog
from corral.scheduler.config import DEFAULT_MULTI_POINT


def test_catalog_holds_every_default_plugin_and_corrals_own() -> None:
    catalog = default_catalog()
    for name, _ in DEFAULT_MULTI_POINT:
        assert name in catalog, name
    for name in ("CheckPodCountLimit", "CheckPodLimitResources", "TenantSpread"):
        assert catalog[name].source == "corral"
        assert catalog[name].args_type is not None
    assert catalog["TenantSpread"].extension_points == frozenset({"preScore", "score"})


@dataclass
class GpuArgs:
    min_free: int = 1


def _install_module(name: str, **attrs: Any) -> None:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module


def _new(args: object, handle: object) -> None:
    return None


def _ep(name: str, value: str) -> metadata.EntryPoint:
    return metadata.EntryPoint(name=name, value=value, group="corral.plugins")


@pytest.fixture
def plugin_modules() -> Any:
    _install_module(
        "corral_test_gpu",
        NAME="GpuFit",
        EXTENSION_POINTS=("filter", "score"),
        Args=GpuArgs,
        CLUSTER_READS=(("example.com", "gpus"),),
        new=_new,
    )
    _install_module("corral_test_broken", NAME="Broken", EXTENSION_POINTS=("teleport",), new=_new)
    _install_module("corral_test_clash", NAME="NodeName", EXTENSION_POINTS=("filter",), new=_new)
    _install_module("corral_test_no_factory", NAME="NoFactory", EXTENSION_POINTS=("filter",))
    yield
    for name in (
        "corral_test_gpu",
        "corral_test_broken",
        "corral_test_clash",
        "corral_test_no_factory",
    ):
        sys.modules.pop(name, None)


def test_entry_points_join_the_catalog(plugin_modules: Any) -> None:
    catalog = build_catalog(
        [
            _ep("gpu", "corral_test_gpu"),
            _ep("broken", "corral_test_broken"),
            _ep("clash", "corral_test_clash"),
            _ep("missing", "corral_test_not_installed"),
            _ep("nofactory", "corral_test_no_factory"),
        ]
    )
    assert catalog["GpuFit"].extension_points == frozenset({"filter", "score"})
    assert catalog["GpuFit"].cluster_reads == (("example.com", "gpus"),)
    problems = "\n".join(catalog.problems)
    assert "'broken'" in problems
    assert "teleport" in problems
    assert "'clash'" in problems
    assert "already a plugin name" in problems
    assert "'nofactory'" in problems
    assert "neither a factory nor has a callable new" in problems
    assert "'missing'" in problems
    assert catalog["NodeName"].source == "upstream"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        pytest.param({"minFree": 2}, None, id="valid args"),
        pytest.param(
            {"minFree": "2"},
            "spec.pluginConfig[0].args.minFree: must be an integer, got string",
            id="wrong type",
        ),
        pytest.param(
            {"maxFree": 2},
            'spec.pluginConfig[0].args.maxFree: unknown field; did you mean "minFree"?',
            id="unknown field",
        ),
    ],
)
def test_out_of_tree_args_are_checked(
    plugin_modules: Any, args: dict[str, Any], error: str | None
) -> None:
    catalog = build_catalog([_ep("gpu", "corral_test_gpu")])
    data = {
        "apiVersion": "corral.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": "gpu"},
        "spec": {
            "plugins": {"multiPoint": {"enabled": [{"name": "GpuFit"}]}},
            "pluginConfig": [{"name": "GpuFit", "args": args}],
        },
    }
    profile, errs = check_profile(data, catalog=catalog)
    assert [str(e) for e in errs] == ([error] if error else [])
    assert (profile is None) == bool(error)
