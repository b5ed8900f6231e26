"""Running `corral scheduler` processes against the real control plane (helpers for tests)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml
from prometheus_client.parser import text_string_to_metric_families

from corral.k8s import JSON, Client
from corral.testing import LocalCluster
from corral.testing.processes import free_port


def engine_config(kubeconfig: Path, scheduler_name: str, **top: Any) -> JSON:
    """A KubeSchedulerConfiguration with upstream's default plugins for one profile."""
    config: JSON = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": 500, "burst": 1000},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": scheduler_name}],
    }
    config.update(top)
    return config


def leader_election(name: str, namespace: str, *, lease: float, renew: float, retry: float) -> JSON:
    """``leaderElection`` for engines sharing the Lease ``namespace/name``; timings in seconds,
    written as whole-second durations."""
    return {"leaderElect": True, "leaseDuration": f"{lease:.0f}s",
            "renewDeadline": f"{renew:.0f}s", "retryPeriod": f"{retry:.0f}s",
            "resourceName": name, "resourceNamespace": namespace}  # fmt: skip


class EngineProcess:
    def __init__(
        self,
        config: JSON,
        work: Path,
        name: str,
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
    ) -> None:
        self.env = {**os.environ, "POD_NAME": name, **(env or {})}
        self.args = args
        self.config_path = work / f"{name}.yaml"
        self.config_path.write_text(yaml.safe_dump(config))
        self.log_path = work / f"{name}.log"
        self.port = free_port()
        self.name = name
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> EngineProcess:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "corral", "scheduler", "--config", str(self.config_path),
                 f"--bind-address=127.0.0.1:{self.port}", "--log-level=Debug", *self.args],
                stdout=log, stderr=subprocess.STDOUT, env=self.env,
            )  # fmt: skip
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.alive():
            assert self.process is not None
            self.process.send_signal(sig)
            self.process.wait(timeout=30)


def scheduler_name() -> str:
    return f"corral-{uuid.uuid4().hex[:6]}"


def pod(name: str, namespace: str, scheduler: str, **spec: Any) -> JSON:
    requests = spec.pop("requests", {"cpu": "100m", "memory": "64Mi"})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": spec.pop("labels", {})},
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "c", "image": "pause", "resources": {"requests": requests}}],
            **spec,
        },
    }


def create_all(kube: Client, objects: list[JSON]) -> None:
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(kube.create, objects))


def wait_until(what: str, check: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f}s waiting for {what}"
        time.sleep(0.25)


def pods_in(kube: Client, namespace: str) -> list[JSON]:
    return kube.list_items("v1", "Pod", namespace)


def kubeconfig_of(cluster: LocalCluster) -> Path:
    return cluster.kubeconfig


def all_bound(kube: Client, namespace: str) -> bool:
    return all(p["spec"].get("nodeName") for p in pods_in(kube, namespace))


def schedule_attempts(engine: EngineProcess, profile: str, result: str) -> float:
    """The engine's ``scheduler_schedule_attempts_total`` for one profile and result (0 while it
    is still starting)."""
    url = f"http://127.0.0.1:{engine.port}/metrics"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode()
    except OSError:
        return 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if (
                sample.name == "scheduler_schedule_attempts_total"
                and sample.labels.get("profile") == profile
                and sample.labels.get("result") == result
            ):
                return float(sample.value)
    return 0.0
