"""The informer against a real API server: initial list, live events, 410 relist with a diff, a
kind the server does not serve."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from corral.k8s import JSON, Client
from corral.k8s.aio import AsyncClient
from corral.k8s.informer import EventType, Informer
from corral.testing import LocalCluster


def pod_template(name: str, namespace: str, value: str) -> JSON:
    # PodTemplates bypass the API server's watch cache in the local cluster (see controlplane),
    # so etcd compaction makes old versions expire exactly as they do under a busy cluster.
    return {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": name, "namespace": namespace, "labels": {"v": value}},
        "template": {"spec": {"containers": [{"name": "c", "image": "pause"}]}},
    }


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[EventType, str]] = []

    def __call__(self, kind: EventType, obj: JSON) -> None:
        self.events.append((kind, obj["metadata"]["name"]))

    async def until(self, count: int, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while len(self.events) < count:
                await asyncio.sleep(0.05)


def run(kube: Client, scenario: Callable[[AsyncClient], Awaitable[None]]) -> None:
    async def main() -> None:
        client = AsyncClient(kube)
        try:
            await scenario(client)
        finally:
            await client.close()

    asyncio.run(main())


def test_lists_then_streams_changes(kube: Client, namespace: str) -> None:
    for name in ("a", "b"):
        kube.create(pod_template(name, namespace, "1"))
    path = f"/api/v1/namespaces/{namespace}/podtemplates"
    recorder = Recorder()

    async def scenario(client: AsyncClient) -> None:
        informer = Informer(client, path, recorder)
        task = asyncio.create_task(informer.run())
        await asyncio.wait_for(informer.synced.wait(), 10)
        assert sorted(recorder.events) == [("ADDED", "a"), ("ADDED", "b")]

        await asyncio.to_thread(kube.create, pod_template("c", namespace, "1"))
        await asyncio.to_thread(kube.apply, pod_template("a", namespace, "2"), field_manager="t")
        await asyncio.to_thread(kube.delete, "v1", "PodTemplate", "b", namespace)
        await recorder.until(5)
        task.cancel()
        assert recorder.events[2:] == [("ADDED", "c"), ("MODIFIED", "a"), ("DELETED", "b")]
        assert len(informer) == 2

    run(kube, scenario)


def test_expired_version_relists_and_reports_only_the_difference(
    kube: Client, namespace: str, cluster: LocalCluster
) -> None:
    for name in ("a", "b", "c"):
        kube.create(pod_template(name, namespace, "1"))
    path = f"/api/v1/namespaces/{namespace}/podtemplates"
    recorder = Recorder()

    async def scenario(client: AsyncClient) -> None:
        informer = Informer(client, path, recorder)
        await informer._list()
        assert len(recorder.events) == 3
        # While "disconnected": one object changes, one goes away; one stays as it was.
        await asyncio.to_thread(kube.apply, pod_template("a", namespace, "2"), field_manager="t")
        await asyncio.to_thread(kube.delete, "v1", "PodTemplate", "b", namespace)
        # The version we hold falls out of etcd's compacted history, as after a long
        # disconnection: resuming from it must get 410 Gone.
        await asyncio.to_thread(cluster.compact_etcd)

        task = asyncio.create_task(informer.run())
        await recorder.until(5)
        await asyncio.sleep(0.3)  # nothing else may arrive
        task.cancel()
        assert informer.lists == 2
        assert sorted(recorder.events[3:]) == [("DELETED", "b"), ("MODIFIED", "a")]

    run(kube, scenario)


def test_an_optional_kind_the_server_does_not_serve_is_synced_empty(kube: Client) -> None:
    """As DeviceTaintRules on an API server older than 1.37: the list answers 404."""
    path = "/apis/resource.k8s.io/v1/nosuchrules"
    recorder = Recorder()

    async def scenario(client: AsyncClient) -> None:
        informer = Informer(client, path, recorder, optional=True)
        task = asyncio.create_task(informer.run())
        await asyncio.wait_for(informer.synced.wait(), 10)
        task.cancel()
        assert informer.lists == 0
        assert recorder.events == []

    run(kube, scenario)
