"""The default profile built from Corral's plugin declarations is upstream's, plugin by plugin:
the checks, run over the pinned binary's defaulted configuration recorded (unit tier,
:data:`RECORDED`, written by ``hack/record-upstream-config``) and live (conformance tier).

Upstream's side is the pinned kube-scheduler's own defaulted configuration
(``--write-config-to``, no API server needed); Corral's side is the same empty configuration
defaulted by :mod:`corral.scheduler.config` and the profile the engine expands from the
declarations. Known divergences are listed with their reason; the test fails when another
difference appears or a listed one disappears.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral.scheduler.config import (
    DEFAULT_MULTI_POINT,
    IN_TREE,
    dump_config,
    load_config,
    parse_duration,
)
from corral.scheduler.plugins.registry import default_profile

ROOT = Path(__file__).resolve().parents[2]
RECORDED = (
    ROOT / "tests" / "unit" / "scheduler" / "config" / "data" / "upstream" / "default-config.yaml"
)
KUBECONFIG_PLACEHOLDER = "@KUBECONFIG@"
# Upstream plugins Corral does not implement yet: (name, reason).
NOT_IMPLEMENTED: dict[str, str] = {}
DURATION_FIELDS = {"filterTimeout", "bindingTimeout"}

_KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: unused}}]
current-context: c
"""


def live_default_config(binary: Path, work: Path) -> dict[str, Any]:
    """kube-scheduler's defaulted configuration of its default profile."""
    kubeconfig, out = work / "kubeconfig", work / "config.yaml"
    kubeconfig.write_text(_KUBECONFIG)
    subprocess.run(
        [str(binary), f"--kubeconfig={kubeconfig}", f"--write-config-to={out}"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    config: dict[str, Any] = yaml.safe_load(Path(out).read_text())
    # Where the binary was told its kubeconfig is: the one part that depends on the run.
    config["clientConnection"]["kubeconfig"] = KUBECONFIG_PLACEHOLDER
    return config


def recorded_default_config(path: Path = RECORDED) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load(path.read_text())
    return config


@pytest.fixture(scope="module")
def corral() -> dict[str, Any]:
    cfg = load_config(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    )
    return dump_config(cfg)


def _multi_point(config: dict[str, Any]) -> list[tuple[str, int]]:
    enabled = config["profiles"][0]["plugins"]["multiPoint"]["enabled"]
    return [(p["name"], p.get("weight") or 0) for p in enabled]


def _normalised(args: dict[str, Any]) -> dict[str, Any]:
    return {k: parse_duration(v) if k in DURATION_FIELDS else v for k, v in args.items()}


def _plugin_config(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {pc["name"]: _normalised(pc["args"]) for pc in config["profiles"][0]["pluginConfig"]}


def test_default_multi_point_set_is_upstreams(upstream: dict[str, Any]) -> None:
    theirs = [p for p in _multi_point(upstream) if p[0] not in NOT_IMPLEMENTED]
    assert [name for name, _ in _multi_point(upstream) if name in NOT_IMPLEMENTED] == list(
        NOT_IMPLEMENTED
    ), "a listed divergence is gone: remove it from NOT_IMPLEMENTED"
    ours = [(name, weight or 0) for name, weight in DEFAULT_MULTI_POINT]
    for i, (mine, upstreams) in enumerate(zip(ours, theirs, strict=True)):
        assert mine == upstreams, f"multiPoint.enabled[{i}]"


def test_defaulted_config_matches_upstream_plugin_by_plugin(
    upstream: dict[str, Any], corral: dict[str, Any]
) -> None:
    assert _multi_point(corral) == [
        p for p in _multi_point(upstream) if p[0] not in NOT_IMPLEMENTED
    ]
    theirs, ours = _plugin_config(upstream), _plugin_config(corral)
    assert sorted(ours) == sorted(theirs)
    for name, args in theirs.items():
        assert ours[name] == args, name


def test_engine_default_profile_runs_every_default_plugin_where_it_extends(
    upstream: dict[str, Any],
) -> None:
    profile = default_profile()
    declared = {d.name: d for d in IN_TREE}
    order = [name for name, _ in _multi_point(upstream) if name not in NOT_IMPLEMENTED]
    points = {
        "preEnqueue": profile.pre_enqueue,
        "queueSort": profile.queue_sort,
        "preFilter": profile.pre_filter,
        "filter": profile.filter,
        "postFilter": profile.post_filter,
        "preScore": profile.pre_score,
        "score": tuple(s.name for s in profile.score),
        "reserve": profile.reserve,
        "permit": profile.permit,
        "preBind": profile.pre_bind,
        "bind": profile.bind,
        "postBind": profile.post_bind,
    }
    for point, names in points.items():
        expected = tuple(n for n in order if point in declared[n].extension_points)
        assert names == expected, point
    weights = dict(_multi_point(upstream))
    assert {s.name: s.weight for s in profile.score} == {
        s.name: weights[s.name] or 1 for s in profile.score
    }
