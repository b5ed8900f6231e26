"""Plugin verdicts: ``Code`` and ``Status``, as in the upstream Scheduling Framework.

Contract: a plugin returns ``None`` for success (upstream's nil status) or a :class:`Status`.
Each code's comment states what it does to the pod's cycle and its requeueing.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final


class Code(enum.IntEnum):
    """Status codes, numbered as upstream's so that logs and metrics line up."""

    # The plugin ran and found nothing wrong.
    SUCCESS = 0
    # Internal failure: the cycle aborts and the pod goes to backoffQ without a rejector plugin.
    ERROR = 1
    # Not schedulable here now; preemption may help. The pod waits for an event of a rejector.
    UNSCHEDULABLE = 2
    # Not schedulable here and preemption cannot help (the node is skipped by PostFilter).
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    # Permit only: the pod waits (bounded by a timeout) for approval before binding.
    WAIT = 4
    # PreFilter/PreScore/Bind: the plugin has nothing to do for this pod; its later points are
    # skipped for this cycle (Bind: the next bind plugin is asked).
    SKIP = 5
    # The pod waits for something outside the scheduler; it is not retried by backoff but by the
    # rejector's events only.
    PENDING = 6

    @property
    def label(self) -> str:
        """Upstream's ``Code.String()``: ``UnschedulableAndUnresolvable``, ``Skip``, ..."""
        return "".join(part.capitalize() for part in self.name.split("_"))


@dataclass(frozen=True, slots=True)
class Status:
    """A plugin's verdict: a code, human-readable reasons, and the plugin that returned it."""

    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @classmethod
    def of(cls, code: Code, *reasons: str) -> Status:
        return cls(code=code, reasons=reasons)

    @classmethod
    def error(cls, message: str) -> Status:
        return cls(code=Code.ERROR, reasons=(message,))

    def with_plugin(self, plugin: str) -> Status:
        # Built directly: every failed Filter passes here, and ``replace`` cost twice as much.
        return self if self.plugin == plugin else Status(self.code, self.reasons, plugin)

    @property
    def message(self) -> str:
        """Reasons joined as upstream's ``Status.Message()`` does."""
        return ", ".join(self.reasons)

    @property
    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def is_skip(self) -> bool:
        return self.code is Code.SKIP

    @property
    def is_wait(self) -> bool:
        return self.code is Code.WAIT

    @property
    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending: the pod cannot go here now."""
        return self.code in _REJECTED


_REJECTED: Final = frozenset(
    {Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING}
)


def is_success(status: Status | None) -> bool:
    """``None`` is success, as upstream's nil status."""
    return status is None or status.code is Code.SUCCESS


def code_of(status: Status | None) -> Code:
    return Code.SUCCESS if status is None else status.code


class StatusError(Exception):
    """Carries an Error status out of a cycle (upstream's ``status.AsError()``)."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status
