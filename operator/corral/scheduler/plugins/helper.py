"""Shared plugin helpers: args coercion and upstream's default score normalization."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework.interface import MAX_NODE_SCORE
from corral.scheduler.framework.status import Status

_A = TypeVar("_A")


def coerce_args(args: object, kind: type[_A], decode: Callable[[Mapping[str, Any]], _A]) -> _A:
    """The plugin's args: ``None`` → defaults; its dataclass as is; a raw mapping decoded."""
    if args is None:
        return kind()
    if isinstance(args, kind):
        return args
    if isinstance(args, Mapping):
        return decode(args)
    raise TypeError(f"args are not of type {kind.__name__}, got {type(args).__name__}")


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
