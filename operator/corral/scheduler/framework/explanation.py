"""What one scheduling cycle evaluated for one pod: the data behind ``--explain``.

Contract: an :class:`Explanation` is plain data (JSON through :func:`to_json`, back through
:func:`from_json`; its schema is ``docs/explain.md``'s, versioned by :data:`API_VERSION`), built
by :class:`~corral.scheduler.framework.runtime.recording.CycleRecording` from the runtime's own
points while the cycle runs, never by evaluating plugins a second time. So it holds exactly what
the cycle did: a plugin whose PreFilter said Skip has no Filter verdicts (``skipped``); a
per-node Filter plugin has verdicts only for the nodes it was run on (up to each node's first
rejection, and until enough feasible nodes were found); a batch Filter plugin has one for every
node it was asked about; Score plugins only for the feasible nodes they scored.

Renderers (the ``--explain`` table, ``-o json``, later ``corral explain POD`` and an HTML
report) read only this module. Code words are upstream's ``Code.String()``: ``Success``,
``Error``, ``Unschedulable``, ``UnschedulableAndUnresolvable``, ``Wait``, ``Skip``,
``Pending``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from corral.scheduler.config import FieldError, ValidationError
from corral.scheduler.config.decode import decode, encode
from corral.scheduler.config.errors import FieldPath

API_VERSION: Final = "corral.dev/v1alpha1"
KIND: Final = "Explanation"
SUCCESS: Final = "Success"
SKIP: Final = "Skip"
PLUGIN: Final = "plugin"
EXTENDER: Final = "extender"
# The with-nominated-pods pass: nodes where pods nominated there (by an earlier preemption)
# leave no room, a stage of its own after the plugins (upstream RunFilterPluginsWithNominatedPods).
NOMINATED: Final = "nominated"
_LIST: Final = {"omitempty": True}


@dataclass
class PointResult:
    """One plugin's status at a point that is not per node (PreFilter, PreScore, PostFilter,
    Reserve, Permit)."""

    plugin: str
    code: str
    message: str = ""
    # PreFilter: the nodes its PreFilterResult narrowed the cycle to (None: all nodes).
    node_names: list[str] | None = None
    # PostFilter: the node it nominated for the pod ("" clears a nomination).
    nominated_node_name: str | None = None
    # Permit: how long a Wait may last.
    timeout_seconds: float | None = None


@dataclass
class NodeVerdict:
    code: str
    message: str = ""


@dataclass
class FilterColumn:
    """One Filter plugin (or extender, or the nominated-pods pass) and its verdict per node
    it evaluated; ``skipped``: its PreFilter said Skip, so it ran on no node."""

    plugin: str
    source: str = PLUGIN
    skipped: bool = False
    nodes: dict[str, NodeVerdict] = field(default_factory=dict)


@dataclass
class NodeScore:
    raw: int  # what Score returned (an extender: its 0-10 priority)
    normalized: int  # after NormalizeScore (extenders: scaled to 0-100)
    weighted: int  # normalized x weight: what the total adds


@dataclass
class ScoreColumn:
    plugin: str
    weight: int
    source: str = PLUGIN
    skipped: bool = False  # its PreScore said Skip
    nodes: dict[str, NodeScore] = field(default_factory=dict)


@dataclass
class Victim:
    pod: str
    priority: int


@dataclass
class PreemptionCandidate:
    node: str
    victims: list[Victim] = field(default_factory=list)
    pdb_violations: int = 0


@dataclass
class Preemption:
    """What DefaultPreemption's dry run found: the candidate nodes with the victims each would
    need, the one chosen, and by which of upstream's rules it won (``why``)."""

    candidates: list[PreemptionCandidate] = field(default_factory=list)
    chosen: str | None = None
    why: str = ""


@dataclass
class Outcome:
    code: str  # Success (bound), Unschedulable, UnschedulableAndUnresolvable, Error
    node: str | None = None
    message: str = ""


@dataclass
class Explanation:
    api_version: str = field(default=API_VERSION, metadata={"json": "apiVersion"})
    kind: str = KIND
    pod: str = ""  # namespace/name
    profile: str = ""  # the schedulerName whose profile ran the cycle
    attempt: int = 0  # which scheduling attempt of the pod this cycle was (from 1)
    # Every node of the snapshot, in the order the cycle took them (its rotation).
    nodes: list[str] = field(default_factory=list)
    pre_filter: list[PointResult] = field(default_factory=list)
    filter: list[FilterColumn] = field(default_factory=list)
    # The nodes the Filter stage looked at (it stops once it found enough), and those that
    # passed every plugin and extender.
    processed_nodes: list[str] = field(default_factory=list)
    feasible_nodes: list[str] = field(default_factory=list)
    pre_score: list[PointResult] = field(default_factory=list)
    score: list[ScoreColumn] = field(default_factory=list)
    totals: dict[str, int] = field(default_factory=dict)
    selected_node: str | None = None
    post_filter: list[PointResult] = field(default_factory=list)
    preemption: Preemption | None = None
    reserve: list[PointResult] = field(default_factory=list)
    permit: list[PointResult] = field(default_factory=list)
    outcome: Outcome | None = None

    def filter_of(self, plugin: str, source: str = PLUGIN) -> FilterColumn:
        for column in self.filter:
            if column.plugin == plugin and column.source == source:
                return column
        column = FilterColumn(plugin, source)
        self.filter.append(column)
        return column

    def failures(self, node: str) -> list[tuple[FilterColumn, NodeVerdict]]:
        """The verdicts that rejected ``node``, in the order the cycle met them."""
        out = []
        for column in self.filter:
            verdict = column.nodes.get(node)
            if verdict is not None and verdict.code != SUCCESS:
                out.append((column, verdict))
        return out


def to_json(explanation: Explanation) -> dict[str, Any]:
    body = encode(explanation)
    assert isinstance(body, dict)
    return body


def from_json(data: Mapping[str, Any]) -> Explanation:
    """An explanation read back (``corral explain``, a report); raises :class:`ValidationError`."""
    errors: list[FieldError] = []
    explanation = decode(Explanation, data, FieldPath(), errors)
    if explanation is None or errors:
        raise ValidationError(errors or [FieldError("<root>", "not an Explanation")])
    return explanation


class Recorder(Protocol):
    """What a plugin may add to the explanation of the cycle it runs in (``CycleState.recorder``,
    ``None`` unless the cycle is being explained). DefaultPreemption reports its candidates."""

    def preemption(self, preemption: Preemption) -> None: ...
