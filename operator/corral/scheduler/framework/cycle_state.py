"""Per-cycle scratch space shared by a profile's plugins (upstream ``CycleState``).

Contract: a plugin writes under its own key (by convention ``"PreFilter" + NAME``) and reads it
back at later points of the same cycle. Values that preemption's dry runs may change implement
``clone()``; the cycle state is cloned before such a dry run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from corral.scheduler.framework.explanation import Recorder


class StateData(Protocol):
    def clone(self) -> StateData: ...


_T = TypeVar("_T")


class CycleState:
    """Not thread-safe by design: one cycle runs on one thread (batch plugins need no workers)."""

    __slots__ = (
        "_data",
        "record_plugin_metrics",
        "recorder",
        "skip_filter_plugins",
        "skip_pre_bind_plugins",
        "skip_score_plugins",
    )

    def __init__(self, *, record_plugin_metrics: bool = False) -> None:
        self._data: dict[str, object] = {}
        # This cycle times each plugin call (upstream samples 10% of cycles: the cost of
        # scheduler_plugin_execution_duration_seconds stays small).
        self.record_plugin_metrics = record_plugin_metrics
        # Plugins whose PreFilter/PreScore returned Skip: their Filter/Score is not run.
        self.skip_filter_plugins: frozenset[str] = frozenset()
        self.skip_score_plugins: frozenset[str] = frozenset()
        # Plugins whose PreBindPreFlight returned Skip: their PreBind is not run.
        self.skip_pre_bind_plugins: frozenset[str] = frozenset()
        # Set when the cycle is explained (``--explain``): the runtime's points report to it.
        # A clone (preemption's dry runs) records nothing.
        self.recorder: Recorder | None = None

    def write(self, key: str, value: object) -> None:
        self._data[key] = value

    def read(self, key: str, kind: type[_T]) -> _T | None:
        """The value under ``key`` if present and of ``kind``; ``None`` otherwise."""
        value = self._data.get(key)
        return value if isinstance(value, kind) else None

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        copy = CycleState(record_plugin_metrics=self.record_plugin_metrics)
        for key, value in self._data.items():
            clone = getattr(value, "clone", None)
            copy._data[key] = clone() if callable(clone) else value
        copy.skip_filter_plugins = self.skip_filter_plugins
        copy.skip_score_plugins = self.skip_score_plugins
        copy.skip_pre_bind_plugins = self.skip_pre_bind_plugins
        return copy
