"""config/prometheus as users enable it: a kustomize Component of config/default, under a
`namespace:` overlay, renders every object in that namespace, binds the reader identity there,
and points the ServiceMonitors' token at the Secret it makes."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from corral.testing import ensure_binaries

ROOT = Path(__file__).resolve().parents[2]


def build(tmp_path: Path, namespace: str) -> list[dict[str, Any]]:
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "namespace": namespace,
                "resources": [str(Path("..") / "root" / "config" / "default")],
                "components": [str(Path("..") / "root" / "config" / "prometheus")],
            }
        )
    )
    (tmp_path / "root").symlink_to(ROOT)  # kustomize takes relative paths only
    out = subprocess.run(
        [str(ensure_binaries().kubectl), "kustomize", str(overlay)],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout  # fmt: skip
    return [o for o in yaml.safe_load_all(out) if o]


def test_the_component_follows_a_namespace_overlay(tmp_path: Path) -> None:
    objects = build(tmp_path, "platform-sched")
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append(obj)
    assert {"ServiceMonitor", "PrometheusRule", "Secret", "Service"} <= set(by_kind)
    assert len(by_kind["ServiceMonitor"]) == 2
    for obj in objects:
        if obj["kind"] not in {"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
                               "Namespace"}:  # fmt: skip
            assert obj["metadata"]["namespace"] == "platform-sched", obj["metadata"]
    (reader,) = [o for o in by_kind["ClusterRoleBinding"] if o["metadata"]["name"] ==
                 "corral:metrics-reader"]  # fmt: skip
    assert reader["subjects"] == [
        {"kind": "ServiceAccount", "name": "corral-metrics-reader", "namespace": "platform-sched"}
    ]
    secrets = {o["metadata"]["name"] for o in by_kind["Secret"]}
    for monitor in by_kind["ServiceMonitor"]:
        for endpoint in monitor["spec"]["endpoints"]:
            assert endpoint["authorization"]["credentials"]["name"] in secrets
    dashboards = [o for o in by_kind["ConfigMap"] if o["metadata"]["name"] == "corral-dashboards"]
    assert sorted(dashboards[0]["data"]) == ["corral-operator.json", "corral-scheduler.json"]
    assert dashboards[0]["metadata"]["labels"]["grafana_dashboard"] == "1"
