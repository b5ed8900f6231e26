"""metav1.LabelSelector as upstream's ``LabelSelectorAsSelector`` reads it, on one label map or
on a whole column of pod labels at once.

Contract:
- ``None`` (a nil selector) matches nothing; ``{}`` matches everything (and is *empty*: upstream's
  ``Selector.Empty()``, which some callers treat as "no constraint", e.g. PDBs and spreading).
- ``matchLabels`` pairs and ``matchExpressions`` are ANDed. In needs the key present with one of
  the values; NotIn is also true when the key is absent; Exists / DoesNotExist test presence.
- A selector that does not parse (unknown operator, In/NotIn without values, Exists with values)
  carries ``error`` and matches nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from corral.scheduler.framework.api_types import LabelSelector

IN: Final = "In"
NOT_IN: Final = "NotIn"
EXISTS: Final = "Exists"
DOES_NOT_EXIST: Final = "DoesNotExist"

Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        if self.operator == IN:
            return value is not None and value in self.values
        if self.operator == NOT_IN:
            return value is None or value not in self.values
        if self.operator == EXISTS:
            return value is not None
        return value is None  # DoesNotExist


@dataclass(frozen=True, slots=True)
class Selector:
    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False  # a nil selector, or one that failed to parse
    error: str = ""

    @property
    def empty(self) -> bool:
        """Upstream ``Selector.Empty()``: no requirements (true for ``{}``, false for nil)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        return all(r.matches(labels) for r in self.requirements)

    def with_labels(self, extra: Mapping[str, str]) -> Selector:
        """``extra`` pairs ANDed in (PodTopologySpread's matchLabelKeys merge)."""
        if self.nothing or not extra:
            return self
        added = tuple(Requirement(k, IN, (v,)) for k, v in sorted(extra.items()))
        return Selector(added + self.requirements)


NOTHING: Final = Selector(nothing=True)


def parse(raw: LabelSelector | None) -> Selector:
    if raw is None:
        return NOTHING
    pairs = sorted((raw.get("matchLabels") or {}).items())
    reqs: list[Requirement] = [Requirement(str(k), IN, (str(v),)) for k, v in pairs]
    for expr in raw.get("matchExpressions") or ():
        op = expr.get("operator", "")
        values = tuple(str(v) for v in expr.get("values") or ())
        key = str(expr.get("key", ""))
        if op in (IN, NOT_IN) and not values:
            msg = f"for 'in', 'notin' operators, values set can't be empty ({key})"
            return Selector(nothing=True, error=msg)
        if op in (EXISTS, DOES_NOT_EXIST) and values:
            msg = f"values set must be empty for exists and does not exist ({key})"
            return Selector(nothing=True, error=msg)
        if op not in (IN, NOT_IN, EXISTS, DOES_NOT_EXIST):
            return Selector(nothing=True, error=f"{op!r} is not a valid label selector operator")
        reqs.append(Requirement(key, op, values))
    return Selector(tuple(reqs))


def from_map(selector: Mapping[str, str]) -> Selector:
    """Upstream ``SelectorFromSet``/``SelectorFromValidatedSet`` (Services, RCs): pairs ANDed."""
    return Selector(tuple(Requirement(k, IN, (v,)) for k, v in sorted(selector.items())))


# --- batch: one selector over a table of label columns ------------------------------------------


class ColumnSource:
    """What :func:`mask` needs: per key, a value-id column and the key's value → id map."""

    def __init__(
        self,
        size: int,
        columns: Mapping[str, npt.NDArray[np.int32]],
        ids: Mapping[str, Mapping[str, int]],
    ) -> None:
        self.size = size
        self.columns = columns
        self.ids = ids


def mask(selector: Selector, source: ColumnSource) -> Mask:
    """``selector.matches(labels[row])`` for every row of ``source``."""
    if selector.nothing:
        return np.zeros(source.size, dtype=np.bool_)
    out = np.ones(source.size, dtype=np.bool_)
    for req in selector.requirements:
        column = source.columns.get(req.key)
        if column is None:
            present = np.zeros(source.size, dtype=np.bool_)
            hit = present
        else:
            column = column[: source.size]
            present = column >= 0
            if req.operator in (IN, NOT_IN):
                known = source.ids.get(req.key, {})
                wanted = [known[v] for v in req.values if v in known]
                if len(wanted) == 1:
                    hit = column == wanted[0]
                elif wanted:
                    hit = np.isin(column, wanted)
                else:
                    hit = np.zeros(source.size, dtype=np.bool_)
            else:
                hit = present
        if req.operator == IN:
            out &= hit
        elif req.operator == NOT_IN:
            out &= ~hit
        elif req.operator == EXISTS:
            out &= present
        else:
            out &= ~present
    return out
