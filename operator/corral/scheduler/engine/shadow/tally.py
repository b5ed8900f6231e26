"""What a shadow has counted: the data of a SchedulerProfile's ``status.shadow``.

Contract: :class:`ShadowStatus` is plain data, written by the shadow engine (:func:`to_json`,
a merge patch of ``status.shadow``) and read back by it when it starts again with the same
configuration (its counts go on) and by ``corral shadow report`` (:func:`from_json`). Counts are
of decisions: a pod the live scheduler first found unschedulable and later bound is two. A
decision made while other pods of the live scheduler were in flight is also counted in
``burst``: the cluster the live scheduler saw then may differ from the one the shadow judged on
(see :mod:`.observer`). ``byPlugin`` counts every explained decision (disagreed, and either
side unschedulable) by its deciding plugin since ``since``; ``lastDisagreements`` keeps the
newest :data:`KEEP` with their evidence.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from corral.scheduler.config import FieldError, ValidationError
from corral.scheduler.config.decode import decode, encode
from corral.scheduler.config.errors import FieldPath
from corral.scheduler.engine.shadow import compare as c

KEEP: Final = 10
UNKNOWN_PLUGIN: Final = "(none named)"


@dataclass
class Counts:
    observed: int = 0
    agreed: int = 0
    ties: int = 0
    disagreed: int = 0
    live_unschedulable: int = 0
    shadow_unschedulable: int = 0

    def add(self, outcome: str) -> None:
        self.observed += 1
        name = _FIELD[outcome]
        setattr(self, name, getattr(self, name) + 1)

    @property
    def agreement(self) -> float | None:
        """Agreed and ties over all decisions (None: none yet)."""
        return None if not self.observed else (self.agreed + self.ties) / self.observed


_FIELD: Final = {
    c.AGREED: "agreed",
    c.TIE: "ties",
    c.DISAGREED: "disagreed",
    c.LIVE_UNSCHEDULABLE: "live_unschedulable",
    c.SHADOW_UNSCHEDULABLE: "shadow_unschedulable",
}


@dataclass
class PluginCount:
    plugin: str
    decisions: int = 0


@dataclass
class ShadowStatus:
    scheduler_name: str = ""  # the live scheduler shadowed
    config_hash: str = ""  # of the shadow's configuration: counts go on only for the same
    since: str = ""
    last_update: str = ""
    summary: str = ""  # the printer column: "297/300 agree (99.0%)"
    observed: int = 0
    agreed: int = 0
    ties: int = 0
    disagreed: int = 0
    live_unschedulable: int = 0
    shadow_unschedulable: int = 0
    burst: Counts = field(default_factory=Counts)
    by_plugin: list[PluginCount] = field(default_factory=list, metadata={"omitempty": True})
    last_disagreements: list[c.Disagreement] = field(
        default_factory=list, metadata={"omitempty": True}
    )

    @property
    def counts(self) -> Counts:
        return Counts(
            self.observed,
            self.agreed,
            self.ties,
            self.disagreed,
            self.live_unschedulable,
            self.shadow_unschedulable,
        )


def summary(counts: Counts) -> str:
    rate = counts.agreement
    if rate is None:
        return "no decisions yet"
    return f"{counts.agreed + counts.ties}/{counts.observed} agree ({100 * rate:.1f}%)"


def to_json(status: ShadowStatus) -> dict[str, Any]:
    body = encode(status)
    assert isinstance(body, dict)
    return body


def from_json(data: Mapping[str, Any]) -> ShadowStatus:
    """Raises :class:`ValidationError` when ``data`` is not a shadow status."""
    errors: list[FieldError] = []
    status = decode(ShadowStatus, data, FieldPath.root("status", "shadow"), errors)
    if status is None or errors:
        raise ValidationError(errors or [FieldError("status.shadow", "not a shadow status")])
    return status


class Tally:
    """The running counts, thread-safe: decisions come from the shadow's worker thread, the
    status is read on the event loop."""

    def __init__(self, scheduler_name: str, config_hash: str, since: str) -> None:
        self._lock = threading.Lock()
        self._status = ShadowStatus(
            scheduler_name=scheduler_name, config_hash=config_hash, since=since
        )
        self._counts = Counts()
        self._by_plugin: dict[str, int] = {}
        self._recent: list[c.Disagreement] = []
        self.generation = 0  # bumped by every decision: the writer patches only on change

    def resume(self, previous: ShadowStatus) -> bool:
        """Go on from a status this same shadow wrote (same live scheduler, same config);
        False (nothing taken) for any other."""
        mine = self._status
        if (previous.scheduler_name, previous.config_hash) != (
            mine.scheduler_name,
            mine.config_hash,
        ):
            return False
        with self._lock:
            self._counts = previous.counts
            mine.burst = previous.burst
            mine.since = previous.since or mine.since
            self._by_plugin = {p.plugin: p.decisions for p in previous.by_plugin}
            self._recent = list(previous.last_disagreements[-KEEP:])
            self.generation += 1
        return True

    def record(self, outcome: str, disagreement: c.Disagreement | None, *, burst: bool) -> None:
        with self._lock:
            self._counts.add(outcome)
            if burst:
                self._status.burst.add(outcome)
            if disagreement is not None:
                plugin = disagreement.deciding_plugin or UNKNOWN_PLUGIN
                self._by_plugin[plugin] = self._by_plugin.get(plugin, 0) + 1
                self._recent = [*self._recent, disagreement][-KEEP:]
            self.generation += 1

    def status(self, now: str) -> ShadowStatus:
        with self._lock:
            s = self._status
            counts = self._counts
            by_plugin = sorted(self._by_plugin.items(), key=lambda kv: (-kv[1], kv[0]))
            return ShadowStatus(
                scheduler_name=s.scheduler_name,
                config_hash=s.config_hash,
                since=s.since,
                last_update=now,
                summary=summary(counts),
                observed=counts.observed,
                agreed=counts.agreed,
                ties=counts.ties,
                disagreed=counts.disagreed,
                live_unschedulable=counts.live_unschedulable,
                shadow_unschedulable=counts.shadow_unschedulable,
                burst=Counts(**vars(s.burst)),
                by_plugin=[PluginCount(p, n) for p, n in by_plugin],
                last_disagreements=list(self._recent),
            )
