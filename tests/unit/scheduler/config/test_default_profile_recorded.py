"""The default profile built from Corral's plugin declarations is upstream's, plugin by plugin,
judged by the binary's recorded ``--write-config-to`` (``data/upstream/default-config.yaml``;
the conformance tier checks it against the live binary); the checks are
:mod:`support.default_profile`'s."""

from __future__ import annotations

from typing import Any

import pytest

from support.default_profile import (
    corral,
    recorded_default_config,
    test_default_multi_point_set_is_upstreams,
    test_defaulted_config_matches_upstream_plugin_by_plugin,
    test_engine_default_profile_runs_every_default_plugin_where_it_extends,
)

__all__ = [
    "corral",
    "test_default_multi_point_set_is_upstreams",
    "test_defaulted_config_matches_upstream_plugin_by_plugin",
    "test_engine_default_profile_runs_every_default_plugin_where_it_extends",
]


@pytest.fixture(scope="module")
def upstream() -> dict[str, Any]:
    return recorded_default_config()
