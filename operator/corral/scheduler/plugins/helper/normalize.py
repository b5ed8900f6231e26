"""Upstream's default score normalization (``helper.DefaultNormalizeScore``)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework.interface import MAX_NODE_SCORE


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
