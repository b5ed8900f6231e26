"""scheduler-plugins' PodGroup status, kept by corral.controller.podgroup_status against the
local control plane: a group steps Pending → Scheduling → Running → Finished as its pods do
(the test writes the pods' phases, as a kubelet would), with scheduleStartTime and occupiedBy
set; a same-named group in another namespace counts only its own pods."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from corral.controller import podgroup_status as ps
from corral.k8s import CONTENT_MERGE_PATCH, JSON, Client
from corral.k8s.aio import AsyncClient
from support import sp_crds

pytestmark = pytest.mark.e2e


@pytest.fixture
def other_namespace(kube: Client) -> Iterator[str]:
    ns = f"t-pg-{uuid.uuid4().hex[:6]}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    yield ns
    kube.delete("v1", "Namespace", ns)


def _group(name: str, namespace: str, min_member: int) -> JSON:
    return {"apiVersion": sp_crds.SP_SCHEDULING, "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minMember": min_member}}  # fmt: skip


def _pod(name: str, namespace: str, owner_uid: str) -> JSON:
    # A real owner: the garbage collector deletes pods whose owner does not exist.
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "job", "uid": owner_uid}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "ownerReferences": [owner],
                         "labels": {ps.POD_GROUP_LABEL: "pg"}},
            # No scheduler serves it: it stays unbound; the test writes its phase.
            "spec": {"schedulerName": f"nobody-{uuid.uuid4().hex[:6]}",
                     "containers": [{"name": "c", "image": "pause"}]}}  # fmt: skip


def test_podgroup_status_follows_its_pods(
    kube: Client, namespace: str, other_namespace: str
) -> None:
    def status(ns: str) -> dict[str, Any]:
        got = kube.get(sp_crds.SP_SCHEDULING, "PodGroup", "pg", ns).get("status") or {}
        return dict(got)

    def set_phase(ns: str, name: str, phase: str) -> None:
        path = f"/api/v1/namespaces/{ns}/pods/{name}/status"
        body = {"status": {"phase": phase}}
        kube.request("PATCH", path, body=body, content_type=CONTENT_MERGE_PATCH)

    async def until(ns: str, phase: str) -> dict[str, Any]:
        async with asyncio.timeout(30):
            while True:
                got = await asyncio.to_thread(status, ns)
                if got.get("phase") == phase:
                    return got
                await asyncio.sleep(0.2)

    async def scenario(aio: AsyncClient) -> None:
        controller = ps.PodGroupStatusController(aio)
        task = asyncio.create_task(controller.run())
        try:
            for ns in (namespace, other_namespace):
                await asyncio.to_thread(kube.create, _group("pg", ns, 2))
            await until(namespace, ps.PENDING)
            job = {"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "job", "namespace": namespace}}  # fmt: skip
            owner_uid = (await asyncio.to_thread(kube.create, job))["metadata"]["uid"]
            for name in ("a", "b"):
                await asyncio.to_thread(kube.create, _pod(name, namespace, owner_uid))
            got = await until(namespace, ps.SCHEDULING)
            assert got["occupiedBy"] == f"{namespace}/job"
            assert got["scheduleStartTime"]
            # The other namespace's same-named group has no pods of its own.
            assert (await asyncio.to_thread(status, other_namespace))["phase"] == ps.PENDING
            for name in ("a", "b"):
                await asyncio.to_thread(set_phase, namespace, name, "Running")
            got = await until(namespace, ps.RUNNING)
            assert (got["running"], got["succeeded"], got["failed"]) == (2, 0, 0)
            for name in ("a", "b"):
                await asyncio.to_thread(set_phase, namespace, name, "Succeeded")
            got = await until(namespace, ps.FINISHED)
            assert (got["running"], got["succeeded"], got["failed"]) == (0, 2, 0)
            assert (await asyncio.to_thread(status, other_namespace))["phase"] == ps.PENDING
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def main() -> None:
        aio = AsyncClient(kube)
        try:
            await scenario(aio)
        finally:
            await aio.close()

    with sp_crds.pod_group_crd(kube):
        asyncio.run(main())
