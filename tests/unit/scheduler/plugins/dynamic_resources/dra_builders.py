"""Builders for DRA objects as the API serves them (resource.k8s.io/v1 JSON), named as the
fixtures of upstream's allocator tests (structured/internal/allocatortesting)."""

from __future__ import annotations

from typing import Any

from corral.scheduler.plugins.dynamic_resources.pools import Node

Json = dict[str, Any]
NODE1, NODE2 = "node-1", "node-2"
REGION1, REGION2 = "region-1", "region-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2 = "pool-1", "pool-2"
REQ0, REQ1 = "req-0", "req-1"
CLAIM0, CLAIM1 = "claim-0", "claim-1"


def node(name: str = NODE1, region: str = REGION1) -> Node:
    return Node(name, {"region": region, "planet": "earth"})


def device_class(name: str, driver: str, *config: Json, selectors: tuple[str, ...] = ()) -> Json:
    exprs = selectors or (f'device.driver == "{driver}"',)
    spec: Json = {"selectors": [{"cel": {"expression": e}} for e in exprs]}
    if config:
        spec["config"] = list(config)
    return {"metadata": {"name": name}, "spec": spec}


def opaque(driver: str, attribute: str) -> Json:
    return {"opaque": {"driver": driver, "parameters": {attribute: attribute + "Value"}}}


def device(
    name: str,
    capacity: dict[str, str] | None = None,
    attributes: dict[str, Any] | None = None,
    **extra: Any,
) -> Json:
    out: Json = {"name": name, **extra}
    if capacity:
        out["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if attributes:
        out["attributes"] = attributes
    return out


def resource_slice(
    name: str,
    where: str | Json | None,
    pool: str,
    driver: str,
    *devices: Json,
    generation: int = 1,
    count: int = 1,
    **spec: Any,
) -> Json:
    body: Json = {
        "driver": driver,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
        **spec,
    }
    if isinstance(where, str):
        body["nodeName"] = where
    elif isinstance(where, dict):
        body["nodeSelector"] = where
    if devices:
        body["devices"] = list(devices)
    return {"metadata": {"name": name}, "spec": body}


def one_device_slice(name: str, where: str | Json | None, pool: str, driver: str) -> Json:
    return resource_slice(name, where, pool, driver, device("device-1"))


def request(name: str, cls: str, count: int = 1, *selectors: str, **exactly: Any) -> Json:
    body: Json = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    body.update(exactly)
    if selectors:
        body["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": name, "exactly": body}


def all_request(name: str, cls: str, *selectors: str, **exactly: Any) -> Json:
    out = request(name, cls, 0, *selectors, **exactly)
    out["exactly"]["allocationMode"] = "All"
    del out["exactly"]["count"]
    return out


def sub_request(name: str, cls: str, count: int = 1, *selectors: str, **body: Any) -> Json:
    out: Json = {"name": name, "deviceClassName": cls, "allocationMode": "ExactCount"}
    out["count"] = count
    out.update(body)
    if selectors:
        out["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return out


def first_available(name: str, *subs: Json) -> Json:
    return {"name": name, "firstAvailable": list(subs)}


def claim(
    name: str,
    *requests: Json,
    constraints: list[Json] | None = None,
    config: list[Json] | None = None,
) -> Json:
    devices: Json = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {"metadata": {"name": name}, "spec": {"devices": devices}}


def result(req: str, driver: str, pool: str, dev: str, **extra: Any) -> Json:
    return {"request": req, "driver": driver, "pool": pool, "device": dev, **extra}


def local(node_name: str) -> Json:
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
        ]
    }


def label_selector(key: str, value: str) -> Json:
    return {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
        ]
    }


def allocation(selector: Json | None, *results: Json, config: list[Json] | None = None) -> Json:
    out: Json = {"devices": {"results": list(results)}}
    if config:
        out["devices"]["config"] = config
    if selector is not None:
        out["nodeSelector"] = selector
    return out
