"""config/prometheus agrees with what runs: its dashboards are Grafana-schema JSON built by
hack/dashboards.py, every metric its dashboards and alerts read is one the engine or the
operator exports, and its ServiceMonitors select the Services the renderer makes.
(`promtool` checks and tests the rules in tests/e2e/test_prometheus_rules.py; a real
Prometheus scrapes both components in tests/e2e/operator/test_operator_prometheus.py.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from corral.api import load_profile
from corral.controller.metrics import Metrics
from corral.render import names, render
from corral.scheduler import metrics as m
from corral.scheduler.engine.gc_tuning import GcClock
from corral.scheduler.engine.metrics import EngineMetrics
from corral.scheduler.engine.thread_cpu import ThreadCpu
from corral.scheduler.engine.timing import EngineTiming

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / "config" / "prometheus"
DASHBOARDS = sorted((CONFIG / "dashboards").glob("*.json"))
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
# A metric name in PromQL: a word followed by a selector or a range, not a function or label.
METRIC = re.compile(r"\b([a-z_][a-z0-9_]*)\s*(?=\{|\[)")


def exported() -> set[str]:
    """Every series name the engine's and the operator's /metrics can carry."""
    engine = EngineMetrics()
    for collector in (EngineTiming(), GcClock(), ThreadCpu()):
        engine.registry.register(collector)
    out = {"up"}  # Prometheus' own, per target
    for metric in m.DECLARED:
        out.add(metric.name)
        if metric.kind == "histogram":
            out |= {metric.name + s for s in HISTOGRAM_SUFFIXES}
    for registry in (engine.registry, Metrics().registry):
        for family in text_string_to_metric_families(generate_latest(registry).decode()):
            out.add(family.name)
            out |= {s.name for s in family.samples}
            if family.type == "histogram":
                out |= {family.name + s for s in HISTOGRAM_SUFFIXES}
            if family.type == "counter":
                out.add(family.name + "_total")
    return out


def expressions() -> list[tuple[str, str]]:
    found = []
    for path in DASHBOARDS:
        board = json.loads(path.read_text())
        for panel in board["panels"]:
            for target in panel.get("targets", []):
                found.append((f"{path.name}: {panel['title']}", target["expr"]))
        for var in board["templating"]["list"]:
            if var["type"] == "query":
                found.append((f"{path.name}: ${var['name']}", var["query"]))
    rules = yaml.safe_load((CONFIG / "rules.yaml").read_text())
    for group in rules["spec"]["groups"]:
        for rule in group["rules"]:
            found.append((f"rules: {rule['alert']}", rule["expr"]))
    return found


def test_the_dashboards_are_what_the_generator_builds() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "hack" / "dashboards.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("path", DASHBOARDS, ids=[p.name for p in DASHBOARDS])
def test_a_dashboard_loads_into_grafanas_dashboard_model(path: Path) -> None:
    """Grafana's generated models keep exactly the fields of its dashboard schema: a field it
    does not know, or one nested in the wrong place, is lost on the way through."""
    board: dict[str, Any] = json.loads(path.read_text())
    model = Dashboard.from_json(board)
    assert json.loads(json.dumps(model, cls=JSONEncoder)) == board
    assert model.uid
    assert model.title
    assert {p["type"] for p in board["panels"]} <= {"row", "stat", "timeseries"}
    assert all(p.get("datasource", {}).get("uid", "${datasource}") == "${datasource}"
               for p in board["panels"])  # fmt: skip


@pytest.mark.parametrize(("where", "expr"), expressions(), ids=[w for w, _ in expressions()])
def test_every_metric_read_is_exported(where: str, expr: str) -> None:
    wanted = set(METRIC.findall(expr)) - {"by", "without", "on", "ignoring", "group_left"}
    assert wanted, f"{where}: no metric in {expr!r}"
    assert wanted <= exported(), f"{where}: {sorted(wanted - exported())} not exported"


def test_the_scheduler_monitor_selects_every_rendered_metrics_service() -> None:
    monitors = list(yaml.safe_load_all((CONFIG / "monitors.yaml").read_text()))
    by_name = {mon["metadata"]["name"]: mon for mon in monitors}
    spec = by_name["corral-schedulers"]["spec"]
    profile = load_profile(
        {
            "apiVersion": "corral.dev/v1alpha1",
            "kind": "SchedulerProfile",
            "metadata": {"name": "team-a", "uid": "u"},
            "spec": {"namespace": "team-a-system"},
        }
    )
    services = [o for o in render(profile).objects if o["kind"] == "Service"]
    assert len(services) == 1
    labels = services[0]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    assert spec["namespaceSelector"] == {"any": True}  # spec.namespace may be anywhere
    assert spec["endpoints"][0]["port"] == names.METRICS_PORT_NAME
    source = spec["endpoints"][0]["relabelings"][0]["sourceLabels"][0]
    sanitized = re.sub(r"[^a-zA-Z0-9_]", "_", names.PROFILE_LABEL)
    assert source == f"__meta_kubernetes_service_label_{sanitized}"
    assert labels[names.PROFILE_LABEL] == "team-a"
    assert labels[spec["jobLabel"]] == "corral-scheduler"  # the job the rules read
