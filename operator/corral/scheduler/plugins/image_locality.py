"""ImageLocality (Score).

For each init container, regular container and image volume whose image (":latest" appended
when it has no tag after the last "/") is among the node's ``status.images[].names``, add
``int(size * nodesWithImage / allNodes)`` (spreading discounts images every node has). The sum
is clamped to [23 MiB, 1000 MiB x #images] and scaled to 0..100 with integer division (1.37
counts image volumes in #images; 1.36 counted only containers). No normalization.

Batch form: per container image, the snapshot's image index gives the nodes holding it and the
size on each; the float arithmetic is the same IEEE double math as upstream's.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from corral.scheduler.framework.cycle_state import CycleState
from corral.scheduler.framework.interface import MAX_NODE_SCORE, Handle, Scores, Slots
from corral.scheduler.framework.snapshot import Snapshot
from corral.scheduler.framework.status import Status
from corral.scheduler.framework.types import NodeInfo, PodInfo
from corral.scheduler.plugins import names

NAME: Final = names.IMAGE_LOCALITY
MB: Final = 1024 * 1024
MIN_THRESHOLD: Final = 23 * MB
MAX_CONTAINER_THRESHOLD: Final = 1000 * MB


def normalized_image_name(name: str) -> str:
    """Upstream ``normalizedImageName``: ``:latest`` when no tag follows the last "/"."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = min(max(sum_scores, MIN_THRESHOLD), max_threshold)
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality:
    name: str = NAME

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        if not pod.images:
            return 0, None
        total = 0
        for image in pod.images:
            found = node.image_states.get(normalized_image_name(image))
            if found is not None and found.total_nodes:
                spread = float(found.num_nodes) / float(found.total_nodes)
                total += int(float(found.size) * spread)
        return calculate_priority(total, len(pod.images)), None

    def score_batch(
        self, state: CycleState, pod: PodInfo, snapshot: Snapshot, slots: Slots
    ) -> tuple[Scores, Status | None]:
        if not pod.images:
            return np.zeros(len(slots), dtype=np.int64), None
        total_nodes = snapshot.num_nodes
        sums = np.zeros(snapshot.capacity, dtype=np.int64)
        for image in pod.images:
            holders = snapshot.images.get(normalized_image_name(image))
            if not holders or not total_nodes:
                continue
            where = np.fromiter(holders.keys(), dtype=np.intp, count=len(holders))
            sizes = np.fromiter(holders.values(), dtype=np.float64, count=len(holders))
            spread = float(len(holders)) / float(total_nodes)
            sums[where] += (sizes * spread).astype(np.int64)
        num = len(pod.images)
        max_threshold = MAX_CONTAINER_THRESHOLD * num
        clamped = np.clip(sums[slots], MIN_THRESHOLD, max_threshold)
        out = MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)
        return out.astype(np.int64), None


def new(args: object, handle: Handle) -> ImageLocality:
    if args is not None:
        raise TypeError(f"{NAME} takes no args")
    return ImageLocality()
