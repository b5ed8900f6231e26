"""ImageLocality: upstream 1.37's TestImageLocalityPriority table (image_locality_test.go), per node
and batch. Since 1.37 an image volume counts like a container image in the threshold too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from corral.scheduler.backend.records import pod_from_json
from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.plugins import image_locality
from corral.testing.builders import node, snapshot_of
from corral.testing.framework import FakeHandle

MB = 1024 * 1024

# Node name -> its status.images, as upstream's fixtures (sizes in MiB).
IMAGES: dict[str, tuple[tuple[tuple[str, ...], int], ...]] = {
    "40-300-2000": (
        (("gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"), 40),
        (("gcr.io/300:latest", "gcr.io/300:v1"), 300),
        (("gcr.io/2000:latest",), 2000),
    ),
    "250-10": ((("gcr.io/250:latest",), 250), (("gcr.io/10:latest", "gcr.io/10:v1"), 10)),
    "600-40-900": (
        (("gcr.io/600:latest",), 600),
        (("gcr.io/40:latest",), 40),
        (("gcr.io/900:latest",), 900),
    ),
    "300-600-900": (
        (("gcr.io/300:latest",), 300),
        (("gcr.io/600:latest",), 600),
        (("gcr.io/900:latest",), 900),
    ),
    "4000-30": ((("gcr.io/4000:latest",), 4000), (("gcr.io/30:latest",), 30)),
    "20-30-40": (
        (("gcr.io/20:latest",), 20),
        (("gcr.io/30:latest",), 30),
        (("gcr.io/40:latest",), 40),
    ),
    "none": (),
}


def image_node(name: str, images: str) -> dict[str, Any]:
    raw = node(name)
    raw["status"]["images"] = [
        {"names": list(names), "sizeBytes": size * MB} for names, size in IMAGES[images]
    ]
    return raw


def spec(*images: str, init: Sequence[str] = (), volumes: Sequence[str] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {
        "containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)]
    }
    if init:
        out["initContainers"] = [{"name": f"i{i}", "image": im} for i, im in enumerate(init)]
    if volumes:
        out["volumes"] = [
            {"name": f"v{i}", "image": {"reference": ref}} for i, ref in enumerate(volumes)
        ]
    return out


@pytest.mark.parametrize(
    ("pod_spec", "nodes", "want"),
    [
        pytest.param(
            spec("gcr.io/40", "gcr.io/250"),
            ["40-300-2000", "250-10"],
            [0, 5],
            id="two images spread on two nodes, prefer the larger image one",
        ),
        pytest.param(
            spec("gcr.io/40", "gcr.io/300"),
            ["40-300-2000", "250-10"],
            [7, 0],
            id="two images on one node, prefer this node",
        ),
        pytest.param(
            spec("gcr.io/10", "gcr.io/4000"),
            ["4000-30", "250-10"],
            [100, 0],
            id="if exceed limit, use limit",
        ),
        pytest.param(
            spec("gcr.io/10", "gcr.io/4000"),
            ["4000-30", "250-10", "none"],
            [66, 0, 0],
            id="if exceed limit, use limit (with node which has no images present)",
        ),
        pytest.param(
            spec("gcr.io/300", "gcr.io/600", "gcr.io/900"),
            ["600-40-900", "300-600-900", "none"],
            [32, 36, 0],
            id="pod with multiple large images, node2 is preferred",
        ),
        pytest.param(
            spec("gcr.io/30", "gcr.io/40"),
            ["20-30-40", "4000-30"],
            [1, 0],
            id="pod with multiple small images",
        ),
        pytest.param(
            spec("gcr.io/30", volumes=["gcr.io/300"]),
            ["300-600-900", "4000-30"],
            [6, 0],
            id="pod with ImageVolume",
        ),
        pytest.param(
            spec("gcr.io/30", "gcr.io/300"),
            ["300-600-900", "4000-30"],
            [6, 0],
            id="same images as ImageVolume pod but as regular container images",
        ),
        pytest.param(
            spec("gcr.io/30", init=["gcr.io/300"]),
            ["40-300-2000", "20-30-40"],
            [6, 0],
            id="include InitContainers: two images spread on two nodes, "
            "prefer the larger image one",
        ),
    ],
)
def test_image_locality_priority(
    pod_spec: dict[str, Any], nodes: list[str], want: list[int]
) -> None:
    snapshot = snapshot_of([image_node(f"node{i + 1}", n) for i, n in enumerate(nodes)])
    incoming = pod_from_json(
        {"metadata": {"name": "p", "namespace": "d", "uid": "p"}, "spec": pod_spec}
    )
    plugin = image_locality.new(None, FakeHandle())
    state = CycleState()
    slots = np.array([snapshot.slot_of[f"node{i + 1}"] for i in range(len(nodes))])
    single = [plugin.score(state, incoming, snapshot.node_info(int(s)))[0] for s in slots]
    batch, status = plugin.score_batch(state, incoming, snapshot, slots)
    assert status is None
    assert single == want
    assert batch.tolist() == want
