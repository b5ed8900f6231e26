"""DRA allocator benchmark (not a test): one matching device among many, in one search.

    .venv/bin/python -m bench.dra_devices                       # 100,000 devices, 3 repeats
    .venv/bin/python -m bench.dra_devices --devices 20000 --repeat 5

One node's pool of ``--devices`` devices in slices of 128, a DeviceClass selecting the driver,
a claim whose selector matches only the last device (``device.attributes["d"].index == N-1``):
the allocator evaluates both selectors on every device before it finds it. Reported per run:
the search's wall and CPU seconds (the slices' building excluded), and whether every selector
was answered on the fast path (no device's CEL variable built). Upstream's filterTimeout, the
deadline such a search must finish within, is 10 s. Run on an idle machine for figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from corral.scheduler.framework.api_types import DeviceRequest, ResourceClaim
from corral.scheduler.plugins.dynamic_resources.allocator import Allocator
from corral.scheduler.plugins.dynamic_resources.pools import Node

DRIVER, POOL, CLASS, NODE = "driver-a", "pool-1", "class-a", "node-1"
PER_SLICE = 128


def _slices(count: int) -> list[dict[str, Any]]:
    total = -(-count // PER_SLICE)
    return [
        {
            "metadata": {"name": f"slice-{s}"},
            "spec": {
                "driver": DRIVER,
                "pool": {"name": POOL, "generation": 1, "resourceSliceCount": total},
                "nodeName": NODE,
                "devices": [
                    {"name": f"dev-{i}", "attributes": {"index": {"int": i}}}
                    for i in range(s * PER_SLICE, min(count, (s + 1) * PER_SLICE))
                ],
            },
        }
        for s in range(total)
    ]


def run(count: int) -> dict[str, Any]:
    slices = _slices(count)
    cls = {
        "metadata": {"name": CLASS},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }
    wanted = f'device.attributes["{DRIVER}"].index == {count - 1}'
    request: DeviceRequest = {"name": "r", "exactly": {
        "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1,
        "selectors": [{"cel": {"expression": wanted}}]}}  # fmt: skip
    claim: ResourceClaim = {"metadata": {"name": "c"}, "spec": {"devices": {"requests": [request]}}}
    allocator = Allocator({CLASS: cls}, slices, set())
    wall, cpu = time.monotonic(), time.process_time()
    found = allocator.allocate(Node(NODE, {}), [claim])
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    results = (found[0].get("devices") or {}).get("results") or () if found else ()
    device = results[0].get("device") if results else None
    return {"devices": count, "found": device, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
            "fast_path_only": not allocator.variables}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = [run(args.devices) for _ in range(args.repeat)]
    for r in runs:
        print(json.dumps(r))
    print(json.dumps({"median_wall_s": statistics.median(r["wall_s"] for r in runs),
                      "median_cpu_s": statistics.median(r["cpu_s"] for r in runs)}))  # fmt: skip


if __name__ == "__main__":
    main()
