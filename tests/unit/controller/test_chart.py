"""The Helm chart stands alone and documents itself: its files/ are byte-identical copies of the
kustomize sources (``hack/sync-chart``), it holds no symlink, and every value is in the schema
and in the chart's README. (Rendering, ``helm lint`` and ``helm package`` are in
tests/e2e/test_install_paths.py, which needs the helm binary.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
CHART = ROOT / "charts" / "corral"
COPIES = {
    "files/crds/schedulerprofiles.corral.dev.yaml": "crds/schedulerprofiles.corral.dev.yaml",
    "files/crds/clusterkopfpeerings.kopf.dev.yaml": "crds/clusterkopfpeerings.kopf.dev.yaml",
    **{
        f"files/crds-scheduler-plugins/{name}": f"crds/scheduler-plugins/{name}"
        for name in (
            "podgroups.scheduling.x-k8s.io.yaml",
            "elasticquotas.scheduling.x-k8s.io.yaml",
            "noderesourcetopologies.topology.node.k8s.io.yaml",
        )
    },
    "files/cluster_role.yaml": "config/rbac/cluster_role.yaml",
    "files/schedulerprofile_viewer_role.yaml": "config/rbac/schedulerprofile_viewer_role.yaml",
    "files/schedulerprofile_editor_role.yaml": "config/rbac/schedulerprofile_editor_role.yaml",
    "files/deployment.yaml": "config/manager/deployment.yaml",
    **{
        f"files/prometheus/{name}": f"config/prometheus/{name}"
        for name in (
            "metrics_reader.yaml",
            "monitors.yaml",
            "operator_service.yaml",
            "rules.yaml",
            "dashboards/corral-scheduler.json",
            "dashboards/corral-operator.json",
        )
    },
}


@pytest.mark.parametrize(("copy", "source"), [pytest.param(c, s, id=c) for c, s in COPIES.items()])
def test_chart_files_are_copies_of_the_kustomize_sources(copy: str, source: str) -> None:
    assert (CHART / copy).read_bytes() == (ROOT / source).read_bytes(), (
        f"charts/corral/{copy} differs from {source}: run hack/sync-chart"
    )


@pytest.mark.parametrize(
    ("source", "copies"),
    [
        pytest.param("crds", "crds", id="corral"),
        pytest.param("crds/scheduler-plugins", "crds-scheduler-plugins", id="scheduler-plugins"),
    ],
)
def test_every_crd_is_in_the_chart(source: str, copies: str) -> None:
    sources = {p.name for p in (ROOT / source).glob("*.yaml") if p.name != "kustomization.yaml"}
    assert {p.name for p in (CHART / "files" / copies).glob("*.yaml")} == sources
    assert {c for c in COPIES if c.startswith(f"files/{copies}/")} == {
        f"files/{copies}/{name}" for name in sources
    }


def test_every_prometheus_object_is_in_the_chart() -> None:
    sources = ROOT / "config" / "prometheus"
    copied = {str(p.relative_to(sources)) for p in sources.rglob("*.*")} - {"kustomization.yaml"}
    assert {c.removeprefix("files/prometheus/") for c in COPIES if "prometheus" in c} == copied


def test_chart_has_no_symlink() -> None:
    assert not [p for p in CHART.rglob("*") if p.is_symlink()]


def leaves(values: dict[str, Any], schema: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Value paths down to where the schema stops naming properties, with their schemas."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        node = schema.get("properties", {}).get(key)
        assert node is not None, f"values.yaml: {prefix}{key} is not in values.schema.json"
        if "properties" in node and isinstance(value, dict) and value:
            out |= leaves(value, node, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = node
    return out


VALUES = yaml.safe_load((CHART / "values.yaml").read_text())
SCHEMA = json.loads((CHART / "values.schema.json").read_text())


def test_every_value_has_a_described_schema() -> None:
    for path, node in leaves(VALUES, SCHEMA).items():
        assert node.get("description"), f"values.schema.json: {path} has no description"
        assert node.get("type"), f"values.schema.json: {path} has no type"


def test_the_readme_lists_every_value() -> None:
    readme = (CHART / "README.md").read_text()
    rows = set(re.findall(r"^\| `([^`]+)` \|", readme, re.M))
    assert rows == set(leaves(VALUES, SCHEMA))


def test_schema_refuses_unknown_keys_everywhere() -> None:
    def walk(node: dict[str, Any], path: str) -> None:
        if "properties" in node:
            assert node.get("additionalProperties") is False, path
            for key, child in node["properties"].items():
                walk(child, f"{path}.{key}")

    walk(SCHEMA, "values")
