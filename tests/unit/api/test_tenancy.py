"""Tenancy is a boundary: a profile with ``tenancy.nodeSelector`` cannot drop the pool.

The pool is NodeAffinity's ``addedAffinity``, checked by its Filter; every way of taking
NodeAffinity out of the filter point is refused with the path of the entry that does it, and
every way of keeping it leaves the pool in force."""

from __future__ import annotations

from typing import Any

import pytest

from corral.api import check_profile, load_profile, scheduler_config_data

POOL = {"key": "pool", "operator": "In", "values": ["team-a"]}
MESSAGE = 'plugin "NodeAffinity" must run at filter when spec.tenancy.nodeSelector is set'


def tenant(plugins: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"tenancy": {"nodeSelector": {"pool": "team-a"}}, **spec}
    if plugins is not None:
        body["plugins"] = plugins
    return {
        "apiVersion": "corral.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": "team-a"},
        "spec": body,
    }


def _off(name: str) -> dict[str, Any]:
    return {"disabled": [{"name": name}]}


@pytest.mark.parametrize(
    ("plugins", "path"),
    [
        pytest.param(
            {"filter": _off("NodeAffinity")},
            "spec.plugins.filter.disabled[0].name",
            id="disabled at filter",
        ),
        pytest.param(
            {"multiPoint": _off("NodeAffinity")},
            "spec.plugins.multiPoint.disabled[0].name",
            id="disabled at multiPoint",
        ),
        pytest.param(
            {"filter": _off("*")}, "spec.plugins.filter.disabled[0].name", id="filter star"
        ),
        pytest.param(
            {"multiPoint": {"disabled": [{"name": "NodePorts"}, {"name": "*"}]}},
            "spec.plugins.multiPoint.disabled[1].name",
            id="multiPoint star",
        ),
        pytest.param(
            {
                "multiPoint": _off("*"),
                "filter": {"enabled": [{"name": "NodeResourcesFit"}]},
            },
            "spec.plugins.multiPoint.disabled[0].name",
            id="star with other filters",
        ),
    ],
)
def test_dropping_the_pool_is_refused(plugins: dict[str, Any], path: str) -> None:
    result, errs = check_profile(tenant(plugins))
    assert result is None
    assert [e.path for e in errs if MESSAGE in e.message] == [path], [str(e) for e in errs]


@pytest.mark.parametrize(
    "plugins",
    [
        pytest.param(None, id="defaults"),
        pytest.param({"preFilter": _off("NodeAffinity")}, id="only preFilter off"),
        pytest.param({"score": _off("NodeAffinity")}, id="only score off"),
        pytest.param(
            {"multiPoint": _off("NodeAffinity"), "filter": {"enabled": [{"name": "NodeAffinity"}]}},
            id="re-enabled at filter",
        ),
        pytest.param(
            {
                "multiPoint": _off("*"),
                "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                "filter": {"enabled": [{"name": "NodeAffinity"}]},
                "bind": {"enabled": [{"name": "DefaultBinder"}]},
            },
            id="star then filter",
        ),
    ],
)
def test_every_accepted_config_keeps_the_pool(plugins: dict[str, Any] | None) -> None:
    config = scheduler_config_data(load_profile(tenant(plugins)))
    (pc,) = config["profiles"][0]["pluginConfig"]
    terms = pc["args"]["addedAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert all(POOL in t["matchExpressions"] for t in terms)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param({"addedAffinity": None}, id="null affinity"),
        pytest.param(
            {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}},
            id="null required",
        ),
        pytest.param(
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
                }
            },
            id="no terms",
        ),
    ],
)
def test_user_args_cannot_widen_the_pool(args: dict[str, Any]) -> None:
    data = tenant(pluginConfig=[{"name": "NodeAffinity", "args": args}])
    result, errs = check_profile(data)
    if result is None:  # refused outright is as good as kept
        assert errs
        return
    config = scheduler_config_data(result)
    (pc,) = config["profiles"][0]["pluginConfig"]
    terms = pc["args"]["addedAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms == [{"matchExpressions": [POOL]}]
