"""Shared plugin helpers: upstream's default score normalization, the missing-state error."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework.interface import MAX_NODE_SCORE
from corral.scheduler.framework.status import Status


def default_normalize_score(
    scores: npt.NDArray[np.int64], *, reverse: bool, max_priority: int = MAX_NODE_SCORE
) -> None:
    """Upstream ``helper.DefaultNormalizeScore``, in place: scale to ``max_priority`` by the
    maximum (integer division), optionally reversed; all-zero scores become 0 (or max if
    reversed)."""
    if len(scores) == 0:
        return
    top = int(scores.max())
    if top <= 0:
        if reverse:
            scores[:] = max_priority
        return
    scaled = max_priority * scores // top
    scores[:] = max_priority - scaled if reverse else scaled


def missing_state(key: str) -> Status:
    """The Error a plugin returns when its own PreFilter/PreScore state is not in the cycle."""
    return Status.error(f"reading {key!r} from cycleState: not found")
