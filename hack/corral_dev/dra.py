"""A DRA test driver: publishes ResourceSlices through the API as a DRA driver's kubelet plugin
does, so that kwok nodes (which run no kubelet plugins) offer devices.

Each node gets one pool named after it, published as one ResourceSlice bound to the node
(``nodeName``); republishing a node bumps the pool's generation as drivers do. Attribute values
are typed as the API wants them: ``bool``, ``int``, ``str``, or :class:`Version` for semver.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from corral.k8s import JSON, Client

API_VERSION: Final = "resource.k8s.io/v1"


@dataclass(frozen=True)
class Version:
    """A semantic-version attribute (``version`` in the API)."""

    value: str


@dataclass(frozen=True)
class Device:
    name: str
    attributes: Mapping[str, bool | int | str | Version] = field(default_factory=dict)
    capacity: Mapping[str, str] = field(default_factory=dict)


def _attribute(value: bool | int | str | Version) -> JSON:
    if isinstance(value, Version):
        return {"version": value.value}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    return {"string": value}


def device_json(device: Device) -> JSON:
    out: JSON = {"name": device.name}
    if device.attributes:
        out["attributes"] = {k: _attribute(v) for k, v in device.attributes.items()}
    if device.capacity:
        out["capacity"] = {k: {"value": v} for k, v in device.capacity.items()}
    return out


def device_class(name: str, *selectors: str, config: Sequence[JSON] = ()) -> JSON:
    """A DeviceClass whose devices match every CEL ``selectors`` expression."""
    spec: JSON = {"selectors": [{"cel": {"expression": s}} for s in selectors]}
    if config:
        spec["config"] = list(config)
    return {
        "apiVersion": API_VERSION,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": spec,
    }


class TestDriver:
    """Publishes and withdraws one driver's slices; :meth:`close` removes all it published."""

    __test__ = False  # not a pytest class

    def __init__(self, client: Client, driver: str) -> None:
        self.client = client
        self.driver = driver
        self._generations: dict[str, int] = {}

    def slice_name(self, node: str) -> str:
        return re.sub(r"[^a-z0-9.-]", "-", f"{node}-{self.driver}".lower())

    def publish(self, node: str, devices: Sequence[Device]) -> JSON:
        """Create or replace the node's slice (a new pool generation each time)."""
        generation = self._generations.get(node, 0) + 1
        self._generations[node] = generation
        body: JSON = {
            "apiVersion": API_VERSION,
            "kind": "ResourceSlice",
            "metadata": {"name": self.slice_name(node)},
            "spec": {
                "driver": self.driver,
                "nodeName": node,
                "pool": {"name": node, "generation": generation, "resourceSliceCount": 1},
                "devices": [device_json(d) for d in devices],
            },
        }
        if generation == 1:
            return self.client.create(body)
        current = self.client.get(API_VERSION, "ResourceSlice", self.slice_name(node))
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        path = self.client.path_of(body)
        result: JSON = self.client.request("PUT", path, body=body)
        return result

    def withdraw(self, node: str) -> None:
        if self._generations.pop(node, None) is not None:
            self.client.delete(API_VERSION, "ResourceSlice", self.slice_name(node))

    def close(self) -> None:
        for node in list(self._generations):
            self.withdraw(node)


def gpus(
    count: int, *, model: str = "a100", memory: str = "80Gi", **attributes: Any
) -> list[Device]:
    """``count`` GPU-like devices named gpu-0..: a model, a memory capacity, an index."""
    return [
        Device(f"gpu-{i}", {"model": model, "index": i, **attributes}, {"memory": memory})
        for i in range(count)
    ]
