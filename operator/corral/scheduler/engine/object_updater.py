"""API writes plugins make before binding (``ObjectUpdater``), run on the binding threads.

VolumeBinding's PreBind PUTs the PersistentVolumes it binds (``claimRef``) and the claims it
hands to provisioners (``volume.kubernetes.io/selected-node``), as upstream's binder does with
``Update``: the object's ``resourceVersion`` makes a stale write fail with a conflict. Every call
takes a token from the engine's shared bucket. A failure raises with the API server's message
(upstream surfaces the client's error text).
"""

from __future__ import annotations

from corral.k8s import ApiError, Client
from corral.k8s.ratelimit import TokenBucket
from corral.scheduler.framework import listers
from corral.scheduler.framework.api_types import RawObject


def _path(kind: str, obj: RawObject) -> str:
    meta = obj.get("metadata") or {}
    name = meta.get("name", "")
    if kind == listers.PERSISTENT_VOLUME:
        return f"/api/v1/persistentvolumes/{name}"
    if kind == listers.PERSISTENT_VOLUME_CLAIM:
        return f"/api/v1/namespaces/{meta.get('namespace', '')}/persistentvolumeclaims/{name}"
    raise ValueError(f"cannot update objects of kind {kind!r}")


class ApiObjectUpdater:
    def __init__(self, client: Client, bucket: TokenBucket) -> None:
        self.client = client
        self.bucket = bucket

    def update(self, kind: str, obj: RawObject) -> RawObject:
        path = _path(kind, obj)
        self.bucket.wait("PUT")
        try:
            body = {**obj, "apiVersion": "v1", "kind": kind}
            answer: RawObject = self.client.request("PUT", path, body=body)
        except ApiError as exc:
            raise RuntimeError(exc.message or str(exc)) from None
        return answer
