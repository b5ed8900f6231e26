"""The API side of DynamicResources: ResourceClaim reads and writes for the binding cycle.

Implements :class:`corral.scheduler.framework.listers.ResourceClaimWriter` over the engine's
client, paced by the engine's token bucket like bindings. Errors carry the API server's message
(upstream's PreBind wraps it: ``add allocation and reservation to claim ns/name: <message>``).
"""

from __future__ import annotations

from typing import Any, Final, cast

from corral.k8s import CONTENT_JSON, CONTENT_STRATEGIC_MERGE_PATCH, ApiError, Client
from corral.k8s.ratelimit import TokenBucket
from corral.scheduler.framework.api_types import PodStatus, RawObject, ResourceClaim
from corral.scheduler.framework.listers import WriteError

_PATH: Final = "/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{name}"


class ApiClaimWriter:
    def __init__(self, client: Client, bucket: TokenBucket) -> None:
        self.client = client
        self.bucket = bucket

    def get(self, namespace: str, name: str) -> ResourceClaim:
        return _claim(self._call("GET", _path(namespace, name), None))

    def update(self, claim: ResourceClaim) -> ResourceClaim:
        return _claim(self._call("PUT", _path_of(claim), claim))

    def update_status(self, claim: ResourceClaim) -> ResourceClaim:
        return _claim(self._call("PUT", _path_of(claim) + "/status", claim))

    def create(self, claim: ResourceClaim) -> ResourceClaim:
        namespace = (claim.get("metadata") or {}).get("namespace") or ""
        body: ResourceClaim = {**claim, "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim"}
        return _claim(self._call("POST", _path(namespace, "").rstrip("/"), body))

    def delete(self, namespace: str, name: str) -> None:
        try:
            self._call("DELETE", _path(namespace, name), None)
        except WriteError as err:
            if not err.not_found:
                raise

    def patch_pod_status(self, namespace: str, name: str, status: PodStatus) -> None:
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/status"
        self._call("PATCH", path, {"status": status}, CONTENT_STRATEGIC_MERGE_PATCH)

    def _call(
        self, method: str, path: str, body: RawObject | None, content_type: str = CONTENT_JSON
    ) -> RawObject:
        self.bucket.wait(method)
        try:
            result: dict[str, Any] = self.client.request(
                method, path, body=body, content_type=content_type
            )
        except ApiError as err:
            raise WriteError(
                err.message or str(err), conflict=err.conflict, not_found=err.not_found
            ) from err
        return result


def _path(namespace: str, name: str) -> str:
    return _PATH.format(namespace=namespace, name=name)


def _claim(stored: RawObject) -> ResourceClaim:
    """The API server's answer, as the typed view of its JSON."""
    return cast("ResourceClaim", stored)


def _path_of(claim: ResourceClaim) -> str:
    meta = claim.get("metadata") or {}
    return _path(meta.get("namespace") or "", meta.get("name") or "")
