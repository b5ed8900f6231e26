"""The fault tests' control plane and helpers (fixtures in ``tests/e2e/faults/conftest.py``)."""

from __future__ import annotations

import ssl
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import yaml

from corral.k8s import JSON, Client
from corral.k8s.kubeconfig import token_kubeconfig
from corral.testing import LocalCluster
from support.bindings import audit_args
from support.tcpproxy import TcpProxy


@dataclass
class FaultCluster:
    """A control plane the fault tests may break, and where its audit log is."""

    cluster: LocalCluster
    audit_log: Path

    @property
    def kube(self) -> Client:
        return self.cluster.admin


def start_fault_cluster(directory: Path, *extra: str) -> FaultCluster:
    directory.mkdir(parents=True, exist_ok=True)
    audit_log = directory / "audit.log"
    args = [*audit_args(directory / "audit-policy.json", audit_log), *extra]
    cluster = LocalCluster.up(directory / "cluster", with_kube_scheduler=True, apiserver_args=args)
    return FaultCluster(cluster, audit_log)


def create_pods(kube: Client, objects: list[JSON], *, workers: int = 16) -> dict[str, str]:
    """Create ``objects`` (pods) in parallel; name -> UID."""
    with ThreadPoolExecutor(workers) as pool:
        made = list(pool.map(kube.create, objects))
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in made}


def get_text(kube: Client, path: str) -> str:
    """GET a text endpoint (``/metrics``) of the API server as ``kube``'s identity."""
    request = urllib.request.Request(kube.server + path)
    auth = kube.authorization()
    if auth:
        request.add_header("Authorization", auth)
    context = ssl.create_default_context(cafile=kube.ca_file)
    with urllib.request.urlopen(request, timeout=30, context=context) as response:
        return str(response.read().decode())


def api_target(cluster: LocalCluster) -> tuple[str, int]:
    """The API server's host and port (what a fault proxy forwards to)."""
    host, port = cluster.state.server.removeprefix("https://").rsplit(":", 1)
    return host, int(port)


def proxied_kubeconfig(cluster: FaultCluster, proxy: TcpProxy, path: Path) -> Path:
    """The admin's kubeconfig, through ``proxy`` (same token, same trust)."""
    kube = cluster.kube
    token = (kube.authorization() or "").removeprefix("Bearer ")
    server = f"https://{proxy.address}"
    path.write_text(yaml.safe_dump(token_kubeconfig(server, kube.ca_file, token, "admin")))
    path.chmod(0o600)
    return path


def force_delete_pod(kube: Client, namespace: str, name: str) -> None:
    """Delete a pod at once (grace period 0), as a kubelet-less cluster needs."""
    body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
    kube.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}", body=body)
