"""Helpers for the operator's end-to-end tests: polling, profile bodies, the children of a
profile, and a ``corral operator`` process (killable and restartable)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.k8s import JSON, ApiError, Client
from corral.testing import LocalCluster

ROOT = Path(__file__).resolve().parents[2]
API = "corral.dev/v1alpha1"
KIND = "SchedulerProfile"


def eventually(check: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
    """Poll ``check`` until it returns a truthy value; fail with ``what`` and the last value."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except ApiError as exc:
            last = exc
            if exc.status not in (403, 404):
                raise
        else:
            if last:
                return last
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout:.0f}s waiting for {what or check}: last {last!r}")


def condition(profile: JSON, type_: str) -> JSON:
    for c in profile.get("status", {}).get("conditions", []):
        if c["type"] == type_:
            return dict(c)
    return {}


def is_ready(kube: Client, name: str) -> JSON | None:
    obj = kube.get(API, KIND, name)
    ready = condition(obj, "Ready")
    gen = obj["metadata"]["generation"]
    if ready.get("status") == "True" and obj["status"].get("observedGeneration") == gen:
        return obj
    return None


def profile(name: str, namespace: str, **spec: Any) -> JSON:
    return {
        "apiVersion": API,
        "kind": KIND,
        "metadata": {"name": name},
        "spec": {"namespace": namespace, **spec},
    }


class OperatorProcess:
    """``python -m corral operator`` against the test cluster, logging to a file."""

    def __init__(self, cluster: LocalCluster, log: Path, args: list[str]) -> None:
        self.cluster = cluster
        self.log_path = log
        self.args = args
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> OperatorProcess:
        cmd = [
            sys.executable,
            "-m",
            "corral",
            "operator",
            f"--kubeconfig={self.cluster.kubeconfig}",
            *self.args,
        ]
        out = self.log_path.open("ab")
        env = {**os.environ, "PYTHONPATH": str(ROOT / "operator")}
        self.process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        out.close()
        return self

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


CHILD_KINDS = (
    ("v1", "ServiceAccount"),
    ("v1", "ConfigMap"),
    ("v1", "Service"),
    ("apps/v1", "Deployment"),
    ("policy/v1", "PodDisruptionBudget"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
)


def children(kube: Client, name: str) -> dict[tuple[str, str, str], JSON]:
    out = {}
    for api_version, kind in CHILD_KINDS:
        for obj in kube.list_items(api_version, kind, label_selector=f"corral.dev/profile={name}"):
            meta = obj["metadata"]
            out[(kind, meta.get("namespace", ""), meta["name"])] = obj
    return out


def versions(kube: Client, name: str) -> dict[tuple[str, str, str], str]:
    return {k: v["metadata"]["resourceVersion"] for k, v in children(kube, name).items()}


def events_for(kube: Client, name: str) -> list[JSON]:
    return kube.list_items(
        "v1",
        "Event",
        "default",
        field_selector=f"involvedObject.kind={KIND},involvedObject.name={name}",
    )
