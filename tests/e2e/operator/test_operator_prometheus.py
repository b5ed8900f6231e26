"""A real Prometheus scrapes a profile's engine and the operator, both over HTTPS with the
token of config/prometheus' corral-metrics-reader (delegated auth), loads the shipped alert
rules, and answers every query of the shipped dashboards without an error."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from corral.k8s import JSON, Client
from corral.testing.processes import free_port
from corral_dev.builds import ensure_prometheus
from support.engine_process import pod
from support.operator_process import ROOT, OperatorProcess, eventually, is_ready, profile

CONFIG = ROOT / "config" / "prometheus"


@pytest.fixture
def reader(kube: Client, namespace: str) -> Iterator[str]:
    """The shipped corral-metrics-reader (ServiceAccount, ClusterRole, binding, token Secret),
    made in the test's namespace under unique cluster-scoped names; yields its token."""
    suffix = namespace[-6:]
    objects = list(yaml.safe_load_all((CONFIG / "metrics_reader.yaml").read_text()))
    for obj in objects:
        meta = obj["metadata"]
        if "namespace" in meta:
            meta["namespace"] = namespace
        if obj["kind"].startswith("ClusterRole"):
            meta["name"] = f"{meta['name']}-{suffix}"
        if obj["kind"] == "ClusterRoleBinding":
            obj["roleRef"]["name"] = f"{obj['roleRef']['name']}-{suffix}"
            obj["subjects"][0]["namespace"] = namespace
        kube.create(obj)

    def token() -> str:
        data = kube.get("v1", "Secret", "corral-metrics-reader-token", namespace).get("data")
        return str((data or {}).get("token") or "")

    yield base64.b64decode(eventually(token, what="the reader's token Secret filled")).decode()
    for obj in objects:
        if obj["kind"].startswith("ClusterRole"):
            kube.delete(obj["apiVersion"], obj["kind"], obj["metadata"]["name"])


def port_in(log: Callable[[], str], pattern: str) -> int:
    found = re.search(pattern, log())
    return int(found.group(1)) if found else 0


def engine_log(engine_dir: Path, name: str) -> str:
    return "".join(p.read_text() for p in (engine_dir / name).glob("*.log"))


class Prometheus:
    def __init__(self, work: Path, config: JSON) -> None:
        self.work = work
        self.port = free_port()
        (work / "prometheus.yml").write_text(yaml.safe_dump(config))
        self.log = work / "prometheus.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Prometheus:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [str(ensure_prometheus() / "prometheus"),
                 f"--config.file={self.work / 'prometheus.yml'}",
                 f"--storage.tsdb.path={self.work / 'data'}",
                 f"--web.listen-address=127.0.0.1:{self.port}"],
                stdout=log, stderr=subprocess.STDOUT, cwd=self.work,
            )  # fmt: skip
        eventually(self._ready, what=f"Prometheus ready ({self.log})")
        return self

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2):
                return True
        except OSError:
            return False

    def api(self, path: str, **params: str) -> Any:
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                return json.load(answer)
        except urllib.error.HTTPError as err:
            return json.load(err)

    def query(self, expr: str) -> list[JSON]:
        answer = self.api("query", query=expr)
        assert answer["status"] == "success", (expr, answer)
        return list(answer["data"]["result"])


def scrape_job(name: str, port: int, token_file: Path, **labels: str) -> JSON:
    return {
        "job_name": name,
        "scheme": "https",
        "scrape_interval": "2s",
        "authorization": {"type": "Bearer", "credentials_file": str(token_file)},
        "tls_config": {"insecure_skip_verify": True},  # as the ServiceMonitors (monitors.yaml)
        "static_configs": [{"targets": [f"127.0.0.1:{port}"], "labels": labels}],
    }


def test_prometheus_scrapes_the_engine_and_the_operator(
    kube: Client,
    namespace: str,
    fake_nodes: Callable[..., list[str]],
    start_operator: Callable[..., OperatorProcess],
    profiles: Any,
    reader: str,
    tmp_path: Path,
) -> None:
    name = profiles("prom")
    pool = {"pool": f"pool-{name}"}
    fake_nodes(2, labels=pool)
    engine_dir = tmp_path / "engines"
    op = start_operator(
        "--local-engines", f"--engine-dir={engine_dir}", "--metrics-address=127.0.0.1:0"
    )
    kube.create(profile(name, namespace, replicas=1,
                        tenancy={"namespaces": [namespace], "nodeSelector": pool}))  # fmt: skip
    eventually(lambda: is_ready(kube, name), timeout=90, what=f"{name} Ready")
    kube.create(pod("w", namespace, name))
    eventually(lambda: kube.get("v1", "Pod", "w", namespace)["spec"].get("nodeName"),
               what="the pod bound")  # fmt: skip

    op_port = eventually(
        lambda: port_in(op.log, r"serving metrics on https://[\d.]+:(\d+)/metrics"),
        what="the operator's metrics port",
    )
    engine_port = eventually(
        lambda: port_in(lambda: engine_log(engine_dir, name),
                        r"serving health and metrics on [\d.]+:(\d+)"),
        what="the engine's port",
    )  # fmt: skip
    token_file = tmp_path / "token"
    token_file.write_text(reader)
    groups = yaml.safe_load((CONFIG / "rules.yaml").read_text())["spec"]["groups"]
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}))
    prometheus = Prometheus(
        tmp_path,
        {
            "global": {"scrape_interval": "2s", "evaluation_interval": "2s"},
            "rule_files": [str(tmp_path / "rules.yaml")],
            "scrape_configs": [
                # The labels the ServiceMonitors' relabeling gives (job, namespace, profile).
                scrape_job(
                    "corral-scheduler",
                    engine_port,
                    token_file,
                    namespace=namespace,
                    schedulerprofile=name,
                ),
                scrape_job("corral-operator", op_port, token_file, namespace=namespace),
            ],
        },
    ).start()
    try:

        def up() -> bool:
            got = {r["metric"]["job"]: r["value"][1] for r in prometheus.query("up")}
            return got == {"corral-scheduler": "1", "corral-operator": "1"}

        eventually(up, timeout=60, what=f"both targets up ({prometheus.log})")

        def has(expr: str) -> bool:
            return bool(prometheus.query(expr))

        mine = f'schedulerprofile="{name}"'
        for expr in (
            f'scheduler_schedule_attempts_total{{{mine}, result="scheduled"}} >= 1',
            f"scheduler_pod_scheduling_sli_duration_seconds_count{{{mine}}} >= 1",
            "scheduler_framework_extension_point_duration_seconds_count"
            f'{{{mine}, extension_point="Bind"}} >= 1',
            'rest_client_requests_total{job="corral-scheduler", code="201"} >= 1',
            'rest_client_requests_total{job="corral-operator"} >= 1',
            'process_resident_memory_bytes{job="corral-operator"} > 0',
            f'corral_profile_condition{{profile="{name}", type="Ready"}} == 1',
            "corral_operator_active == 1",
        ):
            eventually(lambda e=expr: has(e), timeout=60, what=expr)

        # Every dashboard query, with its variables set, runs without an error.
        for path in sorted((CONFIG / "dashboards").glob("*.json")):
            board = json.loads(path.read_text())
            for panel in board["panels"]:
                for target in panel.get("targets", []):
                    expr = (
                        target["expr"]
                        .replace("$__rate_interval", "1m")
                        .replace("$schedulerprofile", name)
                    )
                    prometheus.query(expr)  # asserts success
        # The shipped rules loaded and evaluate cleanly.
        rules = prometheus.api("rules")["data"]["groups"]
        assert sorted(g["name"] for g in rules) == ["corral-operator", "corral-schedulers"]
        for group in rules:
            for rule in group["rules"]:
                assert rule["health"] in ("ok", "unknown"), rule
        time.sleep(4)  # two more evaluations
        states = {
            r["name"]: r["state"] for g in prometheus.api("rules")["data"]["groups"]
            for r in g["rules"]
        }  # fmt: skip
        assert states["CorralSchedulerNoLeader"] == "inactive"  # the engine leads
        assert states["CorralOperatorNoLeader"] == "inactive"
    finally:
        prometheus.stop()
