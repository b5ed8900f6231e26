"""The API catalog lists every in-tree plugin with exactly the extension points it implements."""

from __future__ import annotations

import importlib

from corral.scheduler.config import IN_TREE
from corral.scheduler.plugins.registry import in_tree_registry

METHODS = {
    "pre_enqueue": "preEnqueue",
    "less": "queueSort",
    "pre_filter": "preFilter",
    "filter": "filter",
    "filter_batch": "filter",
    "post_filter": "postFilter",
    "pre_score": "preScore",
    "score": "score",
    "score_batch": "score",
    "reserve": "reserve",
    "permit": "permit",
    "pre_bind": "preBind",
    "bind": "bind",
    "post_bind": "postBind",
}

POD_GROUP_POINTS = {"placementGenerate", "placementScore", "podGroupPostFilter"}

ARGS = {
    "CheckPodCountLimit": {"podCountLimit": 3},
    "CheckPodLimitResources": {"limitRatio": {"cpu": 0.7}},
    "TenantSpread": {"labelKey": "tenant"},
    "NodeMetadata": {
        "metadataKey": "k",
        "metadataSource": "Label",
        "metadataType": "Number",
        "scoringStrategy": "Highest",
    },
}


def test_catalog_matches_registry() -> None:
    registry = in_tree_registry()
    catalog = {info.name: info.extension_points for info in IN_TREE}
    assert set(catalog) == set(registry)
    for name, factory in registry.items():
        plugin = factory(ARGS.get(name), None)  # type: ignore[arg-type]
        implemented = {point for method, point in METHODS.items() if hasattr(plugin, method)}
        # The pod-group points are declared (accepted and validated), never run: no method.
        assert implemented == catalog[name] - POD_GROUP_POINTS, name


def test_every_declaration_names_its_own_module() -> None:
    for declaration in IN_TREE:
        assert isinstance(declaration.factory, str)
        module = importlib.import_module(declaration.factory.partition(":")[0])
        assert declaration.name == module.NAME
