"""The informer's reflector semantics (k8s/informer.py), against a scripted client (upstream
tests its reflector against a fake ListerWatcher the same way): list then watch from the list's
resourceVersion, bookmarks advance it, a closed stream resumes from the last version, 410 Gone
relists and diffs, pages are followed, an optional kind not served is synced empty, and a
handler that raises does not stop the stream."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from corral.k8s.client import JSON, ApiError
from corral.k8s.informer import Informer


class _Done(BaseException):
    """The script ran out: ends ``Informer.run`` (which retries every Exception)."""


def _obj(name: str, rv: str, namespace: str = "ns") -> JSON:
    return {"metadata": {"name": name, "namespace": namespace, "resourceVersion": rv}}


def _page(rv: str, *items: JSON, more: str = "") -> JSON:
    meta: JSON = {"resourceVersion": rv}
    if more:
        meta["continue"] = more
    return {"metadata": meta, "items": list(items)}


def _event(kind: str, obj: JSON) -> JSON:
    return {"type": kind, "object": obj}


class Scripted:
    """Answers each list and watch with the next scripted page or event stream (or error)."""

    def __init__(self, lists: list[JSON | ApiError], watches: list[list[JSON] | ApiError]) -> None:
        self.lists, self.watches = list(lists), list(watches)
        self.list_params: list[Mapping[str, Any]] = []
        self.watch_params: list[Mapping[str, Any]] = []

    async def request(self, method: str, path: str, params: Mapping[str, Any]) -> JSON:
        self.list_params.append(dict(params))
        if not self.lists:
            raise _Done
        answer = self.lists.pop(0)
        if isinstance(answer, ApiError):
            raise answer
        return answer

    async def watch(
        self, path: str, params: Mapping[str, Any], *, protobuf_objects: bool = False
    ) -> AsyncIterator[JSON]:
        self.watch_params.append(dict(params))
        if not self.watches:
            raise _Done
        script = self.watches.pop(0)
        if isinstance(script, ApiError):
            raise script
        for event in script:
            yield event


def _run(client: Scripted, *, optional: bool = False) -> tuple[Informer, list[tuple[str, str]]]:
    seen: list[tuple[str, str]] = []

    def handler(kind: str, obj: JSON) -> None:
        seen.append((kind, f"{obj['metadata']['name']}@{obj['metadata'].get('resourceVersion')}"))

    informer = Informer(client, "/api/v1/services", handler, optional=optional)  # type: ignore[arg-type]
    with pytest.raises(_Done):
        asyncio.run(informer.run())
    return informer, seen


def test_lists_then_watches_from_the_lists_version_and_resumes_after_bookmarks() -> None:
    client = Scripted(
        lists=[_page("10", _obj("a", "5"))],
        watches=[
            [_event("ADDED", _obj("b", "11")), _event("BOOKMARK", _obj("", "15"))],
            [_event("MODIFIED", _obj("a", "16"))],
        ],
    )
    informer, seen = _run(client)
    assert seen == [("ADDED", "a@5"), ("ADDED", "b@11"), ("MODIFIED", "a@16")]
    assert [p["resourceVersion"] for p in client.watch_params] == ["10", "15", "16"]
    assert all(p["allowWatchBookmarks"] is True for p in client.watch_params)
    assert informer.lists == 1
    assert informer.synced.is_set()
    assert len(informer) == 2


@pytest.mark.parametrize(
    "gone",
    [
        pytest.param([_event("ERROR", {"code": 410, "message": "too old"})], id="ERROR event 410"),
        pytest.param(ApiError(410, "Expired", "too old"), id="status 410"),
    ],
)
def test_gone_relists_and_reports_only_what_changed(
    gone: list[JSON] | ApiError, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="corral.k8s.informer")
    client = Scripted(
        lists=[
            _page("10", _obj("a", "5"), _obj("b", "6"), _obj("c", "7")),
            # Meanwhile: b deleted, c changed, d created; a unchanged.
            _page("30", _obj("a", "5"), _obj("c", "21"), _obj("d", "22")),
        ],
        watches=[gone],
    )
    informer, seen = _run(client)
    # b's tombstone carries what the informer kept of it: its last version (and UID:
    # test_informer_relist.py).
    assert seen[3:] == [("MODIFIED", "c@21"), ("ADDED", "d@22"), ("DELETED", "b@6")]
    assert informer.lists == 2
    assert [p["resourceVersion"] for p in client.watch_params] == ["10", "30"]
    # Either way the relist is said (the fault tests count these lines).
    assert [r.getMessage() for r in caplog.records if "expired" in r.getMessage()] == [
        f"{informer.path}: resourceVersion 10 expired; relisting"
    ]


def test_a_paginated_list_follows_continue_tokens() -> None:
    client = Scripted(
        lists=[_page("", _obj("a", "1"), more="t1"), _page("9", _obj("b", "2"))], watches=[]
    )
    informer, seen = _run(client)
    assert seen == [("ADDED", "a@1"), ("ADDED", "b@2")]
    assert client.list_params[1]["continue"] == "t1"
    assert client.watch_params[0]["resourceVersion"] == "9"
    assert informer.lists == 1


def test_an_optional_kind_not_served_is_synced_empty() -> None:
    client = Scripted(lists=[ApiError(404, "NotFound", "no such kind")], watches=[])
    informer, seen = _run(client, optional=True)
    assert informer.synced.is_set()
    assert (seen, len(informer), informer.lists) == ([], 0, 0)


def test_a_handler_that_raises_does_not_stop_the_stream() -> None:
    client = Scripted(
        lists=[_page("1")],
        watches=[[_event("ADDED", _obj("boom", "2")), _event("ADDED", _obj("fine", "3"))]],
    )
    names: list[str] = []

    def handler(kind: str, obj: JSON) -> None:
        names.append(obj["metadata"]["name"])
        if obj["metadata"]["name"] == "boom":
            raise RuntimeError("handler bug")

    informer = Informer(client, "/api/v1/services", handler)  # type: ignore[arg-type]
    with pytest.raises(_Done):
        asyncio.run(informer.run())
    assert names == ["boom", "fine"]
    assert informer.resource_version == "3"
