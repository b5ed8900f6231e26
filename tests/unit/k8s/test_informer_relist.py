"""The informer's relist after 410 Gone, against a scripted client: objects deleted during the
gap are reported DELETED with what the informer kept of them (the UID too: the engine's pod
handler keys pods by UID, and a tombstone without one removed nothing, so the room of every
pod deleted during an expired watch stayed taken), and an object deleted and created again
under its name is two objects, not one update."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from corral.k8s import JSON
from corral.k8s.informer import EventType, Informer


def obj(name: str, uid: str, rv: str) -> JSON:
    return {"metadata": {"name": name, "namespace": "ns", "uid": uid, "resourceVersion": rv}}


class Scripted:
    """Lists answer in turn; the first watch reports 410, the second waits for ever."""

    def __init__(self, *lists: list[JSON]) -> None:
        self.lists = list(lists)
        self.watches = 0

    async def request(self, method: str, path: str, **options: Any) -> JSON:
        items = self.lists.pop(0)
        return {"items": items, "metadata": {"resourceVersion": "100"}}

    async def watch(
        self, path: str, params: Mapping[str, Any], **options: Any
    ) -> AsyncIterator[JSON]:
        self.watches += 1
        if self.watches == 1:
            yield {"type": "ERROR", "object": {"code": 410, "message": "too old"}}
            return
        await asyncio.Event().wait()
        yield {}  # pragma: no cover


def relist(first: list[JSON], second: list[JSON]) -> list[tuple[EventType, str, str]]:
    seen: list[tuple[EventType, str, str]] = []

    def handler(kind: EventType, raw: JSON) -> None:
        seen.append((kind, raw["metadata"]["name"], raw["metadata"].get("uid", "")))

    async def main() -> None:
        client = Scripted(first, second)
        informer = Informer(client, "/api/v1/pods", handler)  # type: ignore[arg-type]
        task = asyncio.create_task(informer.run())
        while client.watches < 2:
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(main())
    return seen[len(first) :]  # what the relist reported


@pytest.mark.parametrize(
    ("second", "reported"),
    [
        pytest.param([obj("a", "u-a", "1")], [("DELETED", "b", "u-b")],
                     id="deleted meanwhile: a tombstone with its UID"),
        pytest.param([obj("a", "u-a", "1"), obj("b", "u-b", "7")], [("MODIFIED", "b", "u-b")],
                     id="changed meanwhile: modified"),
        pytest.param([obj("a", "u-a", "1"), obj("b", "u-b2", "8")],
                     [("DELETED", "b", "u-b"), ("ADDED", "b", "u-b2")],
                     id="deleted and created again under its name: two objects"),
        pytest.param([obj("a", "u-a", "1"), obj("b", "u-b", "2")], [], id="unchanged: nothing"),
    ],
)  # fmt: skip
def test_relist_reports_the_difference(
    second: list[JSON], reported: list[tuple[str, str, str]]
) -> None:
    first = [obj("a", "u-a", "1"), obj("b", "u-b", "2")]
    assert relist(first, second) == reported
