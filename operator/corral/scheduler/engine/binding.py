"""Posting Bindings: the ``PodBinder`` DefaultBinder calls, run on the binding threads.

Upstream's DefaultBinder creates ``pods/<name>/binding`` with the pod's UID (so a pod deleted
and recreated under the same name is never bound by mistake) and ``target`` the Node. Every
call takes a token from the engine's shared bucket (``clientConnection.qps``/``burst``).
"""

from __future__ import annotations

from corral.k8s import Client
from corral.k8s.ratelimit import TokenBucket
from corral.scheduler.engine.timing import Tally
from corral.scheduler.framework.types import PodInfo


class ApiBinder:
    def __init__(self, client: Client, bucket: TokenBucket, tally: Tally | None = None) -> None:
        self.client = client
        self.bucket = bucket
        self.tally = tally or Tally()  # the calls' wall and CPU time, rate-limiter wait included

    def __call__(self, pod: PodInfo, node_name: str) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"
        with self.tally.span():
            self.bucket.wait()
            self.client.request("POST", path, body=body)
