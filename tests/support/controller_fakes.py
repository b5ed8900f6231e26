"""A fake of the few :class:`corral.k8s.Client` calls the controller makes; it fails on any
other call (kopf's ``k8s_mocked`` idea)."""

from __future__ import annotations

import copy
from typing import Any

from corral.controller.state import key_of
from corral.k8s import ApiError, ResourceInfo


class FakeClient:
    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        self.calls: list[tuple[str, Any]] = []
        self.rv = 100
        self.fail: dict[tuple[str, str], ApiError] = {}  # (verb, kind) -> error
        self.profiles: dict[str, dict[str, Any]] = {}  # what status patches apply to
        self.pods: list[dict[str, Any]] = []  # what list_items("v1", "Pod") returns

    def _bump(self) -> str:
        self.rv += 1
        return str(self.rv)

    def apply(self, obj: dict[str, Any], *, field_manager: str, force: bool) -> dict[str, Any]:
        assert field_manager == "corral"
        assert force
        self.calls.append(("apply", key_of(obj)))
        if ("apply", obj["kind"]) in self.fail:
            raise self.fail[("apply", obj["kind"])]
        key = key_of(obj)
        old = self.objects.get(key)
        new = copy.deepcopy(obj)
        if old is not None and {k: v for k, v in old.items() if k != "metadata"} == {
            k: v for k, v in new.items() if k != "metadata"
        }:
            return copy.deepcopy(old)  # the API server persists no no-op apply
        new["metadata"]["resourceVersion"] = self._bump()
        self.objects[key] = new
        return copy.deepcopy(new)

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        self.calls.append(("delete", (api_version, kind, namespace or "", name)))
        self.objects.pop((api_version, kind, namespace or "", name), None)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Any:
        self.calls.append(("get", (api_version, kind, namespace or "", name)))
        raise ApiError(404, "NotFound", f"{kind} {name} not found")

    def list_items(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> list[dict[str, Any]]:
        """Only the engine pods of a namespace, matched on equality selectors."""
        assert (api_version, kind, field_selector) == ("v1", "Pod", None)
        self.calls.append(("list", (kind, namespace, label_selector)))
        wanted = dict(p.split("=", 1) for p in (label_selector or "").split(",") if p)
        return [
            copy.deepcopy(pod)
            for pod in self.pods
            if pod["metadata"].get("namespace") == namespace
            and wanted.items() <= pod["metadata"].get("labels", {}).items()
        ]

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("create", obj.get("kind")))
        return obj

    def resource(self, api_version: str, kind: str) -> ResourceInfo:
        return ResourceInfo(api_version, kind, kind.lower() + "s", namespaced=False)

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """Only status merge patches of profiles: ``.../<name>/status``."""
        self.calls.append((method, path))
        assert method == "PATCH"
        assert path.endswith("/status")
        profile = self.profiles[path.split("/")[-2]]
        status = profile.setdefault("status", {})
        for key, value in kwargs["body"]["status"].items():
            if value is None:
                status.pop(key, None)
            else:
                status[key] = copy.deepcopy(value)
        profile["metadata"]["resourceVersion"] = self._bump()
        return copy.deepcopy(profile)

    def writes(self) -> list[tuple[str, Any]]:
        return [c for c in self.calls if c[0] in ("apply", "delete", "PATCH", "create")]
