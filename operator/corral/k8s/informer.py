"""List + watch one kind of object and hand every change to a handler, as raw JSON.

Semantics follow client-go's reflector:

- a (paginated) list sets the starting ``resourceVersion``; the watch resumes from the last one
  seen (events and ``BOOKMARK``s both advance it), so a dropped connection loses nothing;
- ``410 Gone`` (the HTTP status, or an ``ERROR`` event with code 410) means the version fell out
  of etcd's window: list again and diff against what was known, so objects deleted meanwhile are
  reported ``DELETED`` and unchanged ones are not reported at all. Such a deletion's object is a
  tombstone holding what the informer kept of it: namespace, name, UID and last
  resourceVersion (client-go's ``DeletedFinalStateUnknown`` holds the last object seen);
  handlers that key objects by UID (the engine's pods) find theirs;
- other failures back off (jittered, doubling to 30 s) and resume;
- an ``optional`` kind the server does not serve (``404`` on the list: an older API server) is
  synced as empty, and listed again after each backoff in case it gets served;
- ``protobuf_objects``: the watch travels as protobuf, decoded into the same JSON dicts (lists
  stay JSON: they happen once). An object the decoder's schema does not describe (a newer
  server) switches this informer to JSON for good, and the watch resumes from the last version
  handled, so that object arrives again, as JSON.

The informer keeps only ``key -> (resourceVersion, uid)``: turning JSON into compact records,
and remembering whatever else is needed, is the handler's business.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Mapping
from typing import Final, Literal

from corral.k8s.aio import AsyncClient
from corral.k8s.client import JSON, ApiError
from corral.k8s.protobuf_objects import WireSchemaError

EventType = Literal["ADDED", "MODIFIED", "DELETED"]
Handler = Callable[[EventType, JSON], None]

PAGE_SIZE: Final = 500
MIN_WATCH_SECONDS: Final = 300  # client-go picks a random timeout in [5, 10) minutes
MAX_BACKOFF: Final = 30.0

log = logging.getLogger(__name__)


class ResourceExpiredError(Exception):
    """The resourceVersion we hold is too old: relist."""


def object_key(obj: Mapping[str, object]) -> str:
    meta = obj.get("metadata")
    assert isinstance(meta, Mapping)
    namespace = meta.get("namespace")
    return f"{namespace}/{meta['name']}" if namespace else str(meta["name"])


def _tombstone(key: str, known: tuple[str, str]) -> JSON:
    """What the informer kept of a deleted object: namespace, name, UID, last version."""
    namespace, _, name = key.rpartition("/")
    version, uid = known
    meta: JSON = {"name": name, "uid": uid, "resourceVersion": version}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta}


class Informer:
    def __init__(
        self,
        client: AsyncClient,
        path: str,
        handler: Handler,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        optional: bool = False,
        protobuf_objects: bool = False,
    ) -> None:
        self.client = client
        self.optional = optional
        self.protobuf_objects = protobuf_objects
        self.path = path
        self.handler = handler
        self.selectors: dict[str, str | int | bool] = {}
        if label_selector:
            self.selectors["labelSelector"] = label_selector
        if field_selector:
            self.selectors["fieldSelector"] = field_selector
        self.synced = asyncio.Event()
        self.resource_version = ""
        self.lists = 0  # how many times it listed (1 + relists); for tests and metrics
        self._known: dict[str, tuple[str, str]] = {}  # key -> (resourceVersion, uid)

    def __len__(self) -> int:
        return len(self._known)

    async def run(self) -> None:
        """List (unless already synced), then watch forever (until cancelled)."""
        backoff = 0.0
        need_list = not self.synced.is_set()
        while True:
            try:
                if need_list:
                    await self._list()
                    need_list = False
                await self._watch()
                backoff = 0.0
            except WireSchemaError as exc:
                log.warning("%s: %s; watching as JSON from now on", self.path, exc)
                self.protobuf_objects = False
            except ResourceExpiredError:
                self._expired()
                need_list = True
            except ApiError as exc:
                if exc.status == 410:  # the watch refused outright, not as an ERROR event
                    self._expired()
                    need_list = True
                    continue
                backoff = min(MAX_BACKOFF, max(0.8, backoff * 2))
                delay = backoff * (1 + random.random() * 0.2)
                level = logging.WARNING
                if exc.status == 404 and self.optional and need_list:
                    self.synced.set()  # not served here: nothing to list
                    level = logging.DEBUG
                log.log(level, "%s: %s; retrying in %.1fs", self.path, exc, delay)
                await asyncio.sleep(delay)

    def _expired(self) -> None:
        log.info("%s: resourceVersion %s expired; relisting", self.path, self.resource_version)

    async def _list(self) -> None:
        listed: dict[str, tuple[str, str]] = {}
        params: dict[str, str | int | bool] = {**self.selectors, "limit": PAGE_SIZE}
        while True:
            page = await self.client.request("GET", self.path, params=params)
            for item in page.get("items", []):
                key = object_key(item)
                meta = item["metadata"]
                listed[key] = (meta["resourceVersion"], str(meta.get("uid") or ""))
                previous = self._known.get(key)
                if previous is not None and previous[1] != listed[key][1]:
                    # Deleted and created again under its name meanwhile: two objects.
                    self._emit("DELETED", _tombstone(key, previous))
                    previous = None
                if previous != listed[key]:
                    self._emit("ADDED" if previous is None else "MODIFIED", item)
            meta = page.get("metadata", {})
            token = meta.get("continue")
            if not token:
                self.resource_version = meta.get("resourceVersion", "")
                break
            params = {**self.selectors, "limit": PAGE_SIZE, "continue": token}
        for key in self._known.keys() - listed.keys():
            self._emit("DELETED", _tombstone(key, self._known[key]))
        self._known = listed
        self.lists += 1
        self.synced.set()

    async def _watch(self) -> None:
        params: dict[str, str | int | bool] = {
            **self.selectors,
            "resourceVersion": self.resource_version,
            "allowWatchBookmarks": True,
            "timeoutSeconds": random.randint(MIN_WATCH_SECONDS, 2 * MIN_WATCH_SECONDS - 1),
        }
        async for event in self.client.watch(
            self.path, params, protobuf_objects=self.protobuf_objects
        ):
            kind = event.get("type")
            obj = event.get("object") or {}
            if kind == "ERROR":
                if obj.get("code") == 410:
                    raise ResourceExpiredError(obj.get("message", ""))
                raise ApiError(
                    int(obj.get("code", 0)), obj.get("reason", ""), obj.get("message", "")
                )
            version = obj.get("metadata", {}).get("resourceVersion")
            if version:
                self.resource_version = version
            if kind == "BOOKMARK":
                continue
            key = object_key(obj)
            if kind == "DELETED":
                self._known.pop(key, None)
                self._emit("DELETED", obj)
            elif kind in ("ADDED", "MODIFIED"):
                self._known[key] = (version or "", str(obj["metadata"].get("uid") or ""))
                self._emit(kind, obj)

    def _emit(self, kind: EventType, obj: JSON) -> None:
        try:
            self.handler(kind, obj)
        except Exception:  # a handler bug must not stop the stream for everyone else
            log.exception("%s: handler failed on %s %s", self.path, kind, object_key(obj))
