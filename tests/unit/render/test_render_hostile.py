"""Hostile strings are either refused with a field path or render to objects that parse back to
exactly the input (property-based)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corral.api import check_profile
from corral.render import dump, render, renderer
from corral.render.quoting import tojson

NASTY = [
    "a\nb: c",
    "\"quoted\" 'single'",
    "{{ spec.image }}",
    "{% raw %}",
    "&anchor *alias",
    "!!python/object:os.system",
    "- item\n- other",
    "key: value # comment",
    "---\n...",
    "ü\u00e9\u4e2d\U0001f600",
    "\x85\u2028\u2029\ufeff",
    "\t\r\x00\x1b[31m",
    "x" * 5000,
    " leading and trailing ",
    "null",
    "true",
    "0o17",
    "1e3",
    "",
]
hostile = st.one_of(st.sampled_from(NASTY), st.text(max_size=200))


def base(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "corral.dev/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {"name": "hostile"},
        "spec": spec,
    }


def deployment_of(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == "Deployment")


def config_of(objects: list[dict[str, Any]]) -> Any:
    cm = next(o for o in objects if o["kind"] == "ConfigMap")
    return yaml.safe_load(cm["data"]["config.yaml"])


# (name, field path a refusal must name, spec builder, reader of the value back from objects)
Case = tuple[str, str, Callable[[str], dict[str, Any]], Callable[[list[dict[str, Any]]], Any]]
CASES: list[Case] = [
    (
        "image",
        "spec.image",
        lambda s: {"image": s},
        lambda objs: deployment_of(objs)["spec"]["template"]["spec"]["containers"][0]["image"],
    ),
    (
        "pod annotation",
        "spec.deployment.podAnnotations",
        lambda s: {"deployment": {"podAnnotations": {"example.com/note": s}}},
        lambda objs: deployment_of(objs)["spec"]["template"]["metadata"]["annotations"][
            "example.com/note"
        ],
    ),
    (
        "extender url",
        "spec.extenders[0].urlPrefix",
        lambda s: {"extenders": [{"urlPrefix": "http://ext.example/" + s, "filterVerb": "f"}]},
        lambda objs: config_of(objs)["extenders"][0]["urlPrefix"][len("http://ext.example/") :],
    ),
    (
        "scheduler name",
        "spec.schedulerName",
        lambda s: {"schedulerName": s},
        lambda objs: config_of(objs)["profiles"][0]["schedulerName"],
    ),
    (
        "tenant namespace",
        "spec.tenancy.namespaces[0]",
        lambda s: {"tenancy": {"namespaces": [s]}},
        lambda objs: next(
            o
            for o in objs
            if o["kind"] == "RoleBinding" and o["metadata"]["namespace"] != "corral-system"
        )["metadata"]["namespace"],
    ),
    (
        "node pool label",
        "spec.tenancy.nodeSelector[pool]",
        lambda s: {"tenancy": {"nodeSelector": {"pool": s}}},
        lambda objs: config_of(objs)["profiles"][0]["pluginConfig"][0]["args"]["addedAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"][0],
    ),
]


@pytest.mark.parametrize(
    ("name", "path", "build", "read"), [pytest.param(*c, id=c[0]) for c in CASES]
)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=hostile.filter(bool))  # "" means "unset" and takes the default
def test_hostile_value_is_refused_or_round_trips(
    name: str,
    path: str,
    build: Callable[[str], dict[str, Any]],
    read: Callable[[list[dict[str, Any]]], Any],
    value: str,
) -> None:
    profile, errs = check_profile(base(build(value)))
    if profile is None:
        assert errs
        assert all(e.path.startswith(path) for e in errs), [str(e) for e in errs]
        return
    stream = dump(render(profile).objects)
    objects = list(yaml.safe_load_all(stream))
    assert read(objects) == value


@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | hostile,
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(hostile, children, max_size=4)
        ),
        max_leaves=20,
    )
)
@settings(max_examples=200, deadline=None)
def test_tojson_output_parses_back_as_yaml(value: Any) -> None:
    assert yaml.safe_load("key: " + tojson(value)) == {"key": value}


@pytest.mark.parametrize(
    "value",
    [pytest.param(v, id=f"nasty-{i}") for i, v in enumerate(NASTY) if v]
    + [pytest.param("lone \ud800 surrogate", id="lone surrogate")],
)
def test_templates_render_alike_through_libyaml_and_pure_python(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    spec = {"deployment": {"podAnnotations": {"example.com/note": value}}, "image": value}
    profile, errs = check_profile(base(spec))
    if profile is None:  # an image the API refuses: the annotation alone
        profile, errs = check_profile(base({"deployment": spec["deployment"]}))
    assert profile is not None, [str(e) for e in errs]
    fast = render(profile).objects
    monkeypatch.setattr(renderer, "_TEMPLATE_LOADER", yaml.SafeLoader)
    assert render(profile).objects == fast
    assert (
        deployment_of(fast)["spec"]["template"]["metadata"]["annotations"]["example.com/note"]
        == value
    )
