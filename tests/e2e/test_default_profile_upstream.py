"""The default profile built from Corral's plugin declarations is upstream's, plugin by plugin,
judged by the live binary's ``--write-config-to``; the checks are
:mod:`support.default_profile`'s. Also: the recording the unit tier uses is current."""

from __future__ import annotations

from typing import Any

import pytest

from corral.testing.binaries import ensure_binaries
from support.default_profile import (
    corral,
    live_default_config,
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
def upstream(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("upstream-defaults")
    return live_default_config(ensure_binaries().kube_scheduler, work)


def test_the_recording_is_the_binarys_answer(upstream: dict[str, Any]) -> None:
    assert recorded_default_config() == upstream, "run hack/record-upstream-config"
