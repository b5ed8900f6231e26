"""scheduler-plugins' ElasticQuota status, kept by corral.controller.elasticquota_status against
the local control plane: ``status.used`` is what the namespace's Running pods request (the test
writes the pods' phases, as a kubelet would), zero for what the quota names and none runs; a pod
that stops running stops counting; pods of another namespace never count."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from corral.controller import elasticquota_status as es
from corral.k8s import CONTENT_MERGE_PATCH, JSON, Client
from corral.k8s.aio import AsyncClient
from support import sp_crds

pytestmark = pytest.mark.e2e


@pytest.fixture
def other_namespace(kube: Client) -> Iterator[str]:
    ns = f"t-eq-{uuid.uuid4().hex[:6]}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    yield ns
    kube.delete("v1", "Namespace", ns)


def _quota(namespace: str) -> JSON:
    return {"apiVersion": sp_crds.SP_SCHEDULING, "kind": "ElasticQuota",
            "metadata": {"name": "quota", "namespace": namespace},
            "spec": {"min": {"cpu": "1"}, "max": {"cpu": "4", "memory": "4Gi"}}}  # fmt: skip


def _pod(name: str, namespace: str, cpu: str) -> JSON:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            # No scheduler serves it: it stays unbound; the test writes its phase.
            "spec": {"schedulerName": f"nobody-{uuid.uuid4().hex[:6]}",
                     "containers": [{"name": "c", "image": "pause",
                                     "resources": {"requests": {"cpu": cpu,
                                                                "memory": "1Gi"}}}]}}  # fmt: skip


def test_elasticquota_status_counts_the_running_pods(
    kube: Client, namespace: str, other_namespace: str
) -> None:
    def used() -> dict[str, Any]:
        got = kube.get(sp_crds.SP_SCHEDULING, "ElasticQuota", "quota", namespace)
        return dict((got.get("status") or {}).get("used") or {})

    def set_phase(ns: str, name: str, phase: str) -> None:
        path = f"/api/v1/namespaces/{ns}/pods/{name}/status"
        body = {"status": {"phase": phase}}
        kube.request("PATCH", path, body=body, content_type=CONTENT_MERGE_PATCH)

    async def until(want: dict[str, str]) -> None:
        got: dict[str, Any] = {}
        try:
            async with asyncio.timeout(30):
                while (got := await asyncio.to_thread(used)) != want:
                    await asyncio.sleep(0.2)
        except TimeoutError:
            raise AssertionError(f"status.used is {got}, not {want}") from None

    async def scenario(aio: AsyncClient) -> None:
        controller = es.ElasticQuotaStatusController(aio)
        task = asyncio.create_task(controller.run())
        try:
            await asyncio.to_thread(kube.create, _quota(namespace))
            await until({"cpu": "0", "memory": "0"})
            for name, cpu in (("a", "1"), ("b", "500m")):
                await asyncio.to_thread(kube.create, _pod(name, namespace, cpu))
            await asyncio.to_thread(kube.create, _pod("elsewhere", other_namespace, "2"))
            await asyncio.to_thread(set_phase, other_namespace, "elsewhere", "Running")
            await asyncio.to_thread(set_phase, namespace, "a", "Running")
            await until({"cpu": "1", "memory": "1Gi"})  # b is still Pending
            await asyncio.to_thread(set_phase, namespace, "b", "Running")
            await until({"cpu": "1500m", "memory": "2Gi"})
            await asyncio.to_thread(set_phase, namespace, "a", "Succeeded")
            await until({"cpu": "500m", "memory": "1Gi"})
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def main() -> None:
        aio = AsyncClient(kube)
        try:
            await scenario(aio)
        finally:
            await aio.close()

    with sp_crds.elastic_quota_crd(kube):
        asyncio.run(main())
