"""The install (config/) and the image (Dockerfile) agree with what the renderer produces:
the operator holds every permission it grants, and the image runs the rendered command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from corral.api import default_catalog, load_profile
from corral.render import names, render

ROOT = Path(__file__).resolve().parents[3]


def operator_rules() -> set[tuple[str, str, str]]:
    role = yaml.safe_load((ROOT / "config/rbac/cluster_role.yaml").read_text())
    return {
        (g, r, v)
        for rule in role["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
        if not rule.get("resourceNames")
    }


def rendered_rules(spec: dict[str, object]) -> set[tuple[str, str, str]]:
    profile = load_profile(
        {
            "apiVersion": "corral.dev/v1alpha1",
            "kind": "SchedulerProfile",
            "metadata": {"name": "p", "uid": "u"},
            "spec": spec,
        }
    )
    out = set()
    for obj in render(profile).objects:
        for rule in obj.get("rules", []):
            out |= {
                (g, r, v)
                for g in rule["apiGroups"]
                for r in rule["resources"]
                for v in rule["verbs"]
            }
    return out


ALL_PLUGINS = sorted(default_catalog().plugins)


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({}, id="defaults"),
        pytest.param(
            {"tenancy": {"namespaces": ["a"], "namespaceSelector": {"matchLabels": {"t": "a"}}}},
            id="tenant",
        ),
        pytest.param(
            {
                # Coscheduling is the queue sort (a profile has exactly one).
                "plugins": {
                    "multiPoint": {
                        "enabled": [{"name": n} for n in ALL_PLUGINS if n != "PrioritySort"],
                        "disabled": [{"name": "PrioritySort"}],
                    }
                },
                # the args these plugins cannot default (without them the engine cannot start)
                "pluginConfig": [
                    {"name": "CheckPodCountLimit", "args": {"podCountLimit": 1}},
                    {"name": "CheckPodLimitResources", "args": {"limitRatio": {"cpu": 1.0}}},
                    {
                        "name": "NodeMetadata",
                        "args": {
                            "metadataKey": "k",
                            "metadataSource": "Label",
                            "metadataType": "Number",
                            "scoringStrategy": "Highest",
                        },
                    },
                ],
            },
            id="every built-in plugin",
        ),
        pytest.param({"featureGates": {"GenericWorkload": True}}, id="GenericWorkload"),
        pytest.param(
            {"featureGates": {"GenericWorkload": True}, "tenancy": {"namespaces": ["a"]}},
            id="GenericWorkload tenant",
        ),
    ],
)
def test_operator_holds_every_permission_it_grants(spec: dict[str, object]) -> None:
    # RBAC escalation prevention: the API refuses a Role granting what its creator lacks.
    missing = rendered_rules(spec) - operator_rules()
    assert not missing


def test_operator_rbac_has_no_wildcards_and_no_secrets() -> None:
    rules = operator_rules()
    assert not [r for r in rules if "*" in r]
    assert not [r for r in rules if r[1] == "secrets"]


def test_default_kustomization_installs_the_operator_but_not_what_outlives_it() -> None:
    # Deleting config/default must leave the CRDs (config/crd) and the namespace, where the
    # engines of profiles without spec.namespace run (docs/upgrade.md).
    k = yaml.safe_load((ROOT / "config/default/kustomization.yaml").read_text())
    assert k["resources"] == ["../rbac", "../manager"]
    assert k["namespace"] == "corral-system"
    for part in ("rbac", "manager"):
        sub = yaml.safe_load((ROOT / "config" / part / "kustomization.yaml").read_text())
        for name in sub["resources"]:
            for doc in yaml.safe_load_all((ROOT / "config" / part / name).read_text()):
                assert doc["kind"] not in ("Namespace", "CustomResourceDefinition"), name


def test_operator_deployment_runs_the_image_as_the_rendered_user() -> None:
    docs = yaml.safe_load((ROOT / "config/manager/deployment.yaml").read_text())
    pod = docs["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == names.RUN_AS_USER
    assert pod["containers"][0]["command"][:2] == ["corral", "operator"]


def dockerfile_final_stage() -> list[str]:
    text = (ROOT / "Dockerfile").read_text()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    last_from = max(i for i, ln in enumerate(lines) if ln.startswith("FROM "))
    return lines[last_from:]


def test_dockerfile_matches_what_the_templates_render() -> None:
    stage = dockerfile_final_stage()
    text = "\n".join(stage)
    user = next(ln for ln in stage if ln.startswith("USER "))
    assert user.split()[1].split(":")[0] == str(names.RUN_AS_USER)
    assert f"EXPOSE {names.METRICS_PORT}" in stage
    # The rendered command starts with the console script, which pip installs on PATH.
    assert names.ENGINE_COMMAND[0] == "corral"
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^corral = "corral\.cli:main"$', pyproject, re.M)
    assert "COPY --from=build /install /usr/local" in text
    assert not [ln for ln in stage if ln.startswith("ENTRYPOINT")]  # command: replaces CMD
    # The templates ship in the package (package data through the operator/corral/templates
    # symlink), so the build stage needs them beside operator/; nothing points elsewhere.
    whole = (ROOT / "Dockerfile").read_text()
    assert "COPY templates ./templates" in whole
    assert (ROOT / "operator/corral/templates").resolve() == (ROOT / "templates").resolve()
    assert "CORRAL_TEMPLATES" not in text
    assert f"mkdir -p {names.CONFIG_DIR}" in text
    # Pinned: the image installs with the same constraints as the venv and CI.
    assert "-c constraints.txt" in whole
    assert whole.splitlines()[whole.splitlines().index("ARG BASE=python:3.11-slim") + 1] == (
        "FROM ${BASE} AS build"
    )
