"""The CRD in crds/: self-documenting, and in step with corral.api's model and defaults."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral.api import defaults as api_defaults
from corral.api import types as api
from corral.scheduler import config as cfg
from corral.scheduler.config.decode import json_name
from corral.scheduler.engine.shadow import compare as shadow_compare
from corral.scheduler.engine.shadow import tally as shadow_tally

ROOT = Path(__file__).resolve().parents[3]
CRD = yaml.safe_load((ROOT / "crds" / "schedulerprofiles.corral.dev.yaml").read_text())
SCHEMA = CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
SPEC = SCHEMA["properties"]["spec"]
SHADOW = SCHEMA["properties"]["status"]["properties"]["shadow"]
DISAGREEMENT = SHADOW["properties"]["lastDisagreements"]["items"]


def walk(node: dict[str, Any], path: str) -> typing.Iterator[tuple[str, dict[str, Any]]]:
    yield path, node
    for key, child in node.get("properties", {}).items():
        yield from walk(child, f"{path}.{key}")
    if isinstance(node.get("items"), dict):
        yield from walk(node["items"], f"{path}[]")


def test_identity() -> None:
    assert CRD["metadata"]["name"] == "schedulerprofiles.corral.dev"
    assert CRD["spec"]["scope"] == "Cluster"
    names = CRD["spec"]["names"]
    assert (names["kind"], names["plural"]) == (api.KIND, api.PLURAL)
    assert names["shortNames"]
    assert names["categories"]
    version = CRD["spec"]["versions"][0]
    assert version["name"] == api.VERSION
    assert version["subresources"] == {"status": {}}
    columns = {c["name"] for c in version["additionalPrinterColumns"]}
    assert {
        "Scheduler",
        "Replicas",
        "Ready",
        "Reason",
        "Leader",
        "Shadow",
        "Age",
        "Message",
    } <= columns
    # A profile is cluster-scoped: no column may read as if it had a namespace.
    assert "Namespace" not in columns


def test_every_field_has_a_description() -> None:
    missing = [
        path
        for path, node in walk(SCHEMA, "")
        if path != ".metadata"
        and not node.get("description")
        and not (path.endswith("[]") and node.get("type") != "object")  # scalar list items
    ]
    assert missing == []


def schema_keys(node: dict[str, Any]) -> set[str]:
    return set(node.get("properties", {}))


def model_keys(cls: type[Any]) -> set[str]:
    return {json_name(f) for f in dataclasses.fields(cls)}


@pytest.mark.parametrize(
    ("node", "cls"),
    [
        pytest.param(SPEC, api.SchedulerProfileSpec, id="spec"),
        pytest.param(
            SPEC["properties"]["leaderElection"], api.LeaderElectionSpec, id="leaderElection"
        ),
        pytest.param(SPEC["properties"]["tenancy"], api.Tenancy, id="tenancy"),
        pytest.param(SPEC["properties"]["deployment"], api.DeploymentSpec, id="deployment"),
        pytest.param(SPEC["properties"]["plugins"], cfg.Plugins, id="plugins"),
        pytest.param(SPEC["properties"]["extenders"]["items"], api.ProfileExtender, id="extender"),
        pytest.param(
            SPEC["properties"]["deployment"]["properties"]["tolerations"]["items"],
            api.Toleration,
            id="toleration",
        ),
        pytest.param(SPEC["properties"]["shadow"], api.ShadowSpec, id="shadow"),
        # What a shadow's engine writes: a field missing here would be pruned by the API server.
        pytest.param(SHADOW, shadow_tally.ShadowStatus, id="status.shadow"),
        pytest.param(SHADOW["properties"]["burst"], shadow_tally.Counts, id="status.shadow.burst"),
        pytest.param(
            SHADOW["properties"]["byPlugin"]["items"], shadow_tally.PluginCount, id="byPlugin"
        ),
        pytest.param(DISAGREEMENT, shadow_compare.Disagreement, id="lastDisagreements"),
        pytest.param(
            DISAGREEMENT["properties"]["scores"]["items"], shadow_compare.PluginScores, id="scores"
        ),
        pytest.param(
            DISAGREEMENT["properties"]["lostOn"]["items"], shadow_compare.Loss, id="lostOn"
        ),
        pytest.param(
            DISAGREEMENT["properties"]["rejectedBy"]["items"],
            shadow_compare.Rejection,
            id="rejectedBy",
        ),
    ],
)
def test_schema_matches_model(node: dict[str, Any], cls: type[Any]) -> None:
    assert schema_keys(node) == model_keys(cls)


def test_schema_defaults_match_api_defaults() -> None:
    props = SPEC["properties"]
    assert props["replicas"]["default"] == api_defaults.DEFAULT_REPLICAS
    assert props["logLevel"]["default"] == api_defaults.DEFAULT_LOG_LEVEL
    le = props["leaderElection"]["properties"]
    assert le["leaderElect"]["default"] is True
    assert le["leaseDuration"]["default"] == api_defaults.DEFAULT_LEASE_DURATION
    assert le["renewDeadline"]["default"] == api_defaults.DEFAULT_RENEW_DEADLINE
    assert le["retryPeriod"]["default"] == api_defaults.DEFAULT_RETRY_PERIOD


def test_cel_rules_cover_the_issue_list() -> None:
    rules = [
        r["rule"] for _, node in walk(SCHEMA, "") for r in node.get("x-kubernetes-validations", [])
    ]
    text = "\n".join(rules)
    assert "self.replicas <= 1" in text
    assert "duration(self.leaseDuration) > duration(self.renewDeadline)" in text
    assert "duration(self.renewDeadline) > duration(self.retryPeriod)" in text
    assert "self != 'default-scheduler'" in text
    assert "self.weight >= 0 && self.weight <= 100" in text
    assert "self.podMaxBackoffSeconds >= self.podInitialBackoffSeconds" in text
    assert all(
        r.get("message") for _, n in walk(SCHEMA, "") for r in n.get("x-kubernetes-validations", [])
    )


# The keys apiextensions.k8s.io/v1 JSONSchemaProps accepts (a typo'd or broken YAML key would
# otherwise be dropped silently by the API server).
SCHEMA_KEYS = {
    "type", "format", "description", "properties", "items", "required", "enum", "default",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
    "minItems", "maxItems", "minProperties", "maxProperties", "pattern", "nullable",
    "additionalProperties", "x-kubernetes-validations", "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys", "x-kubernetes-map-type", "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource", "anyOf", "oneOf", "allOf",
    "not", "uniqueItems", "multipleOf", "title", "example", "externalDocs",
}  # fmt: skip


def _schema_nodes(node: object, path: str) -> list[tuple[str, dict[str, object]]]:
    if not isinstance(node, dict):
        return []
    found = [(path, node)]
    for name, child in (node.get("properties") or {}).items():
        found += _schema_nodes(child, f"{path}.{name}")
    if isinstance(node.get("items"), dict):
        found += _schema_nodes(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        found += _schema_nodes(node["additionalProperties"], f"{path}{{}}")
    return found


def test_every_schema_node_uses_only_json_schema_keys() -> None:
    schema = CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    bad = [(path, sorted(set(node) - SCHEMA_KEYS)) for path, node in _schema_nodes(schema, "")]
    assert [b for b in bad if b[1]] == []
