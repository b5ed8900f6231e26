"""One decision of a shadow against the live scheduler's: the outcome, and its evidence.

Contract: :func:`classify` judges a decision from the light summary every shadow cycle gives
(:class:`ShadowDecision`); :func:`evidence` explains one that was not an agreement from the
explanation of a recorded cycle (:mod:`corral.scheduler.framework.explanation`), and reads
nothing else. The rule is the conformance harness's (``bench/conformance/compare.py``): the live
scheduler breaks ties between equally scored nodes at random, so a different node of the same
total score is a tie, not a disagreement; here both totals are the shadow's own, as only its
scores are known.

Outcomes (the ``outcome`` label of ``corral_shadow_decisions_total``):

- ``agreed``: the same node, or both found the pod unschedulable;
- ``tie``: another node, of the same total score as the shadow's choice;
- ``disagreed``: another node, of a lower total, or one the shadow's filters rejected;
- ``live_unschedulable``: the live scheduler found no node, the shadow found one;
- ``shadow_unschedulable``: the live scheduler bound the pod, the shadow found no node.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from corral.scheduler.framework import explanation as x

AGREED: Final = "agreed"
TIE: Final = "tie"
DISAGREED: Final = "disagreed"
LIVE_UNSCHEDULABLE: Final = "live_unschedulable"
SHADOW_UNSCHEDULABLE: Final = "shadow_unschedulable"
# The outcomes whose evidence is kept (a tie has none to give: the totals are equal).
EXPLAINED: Final = frozenset({DISAGREED, LIVE_UNSCHEDULABLE, SHADOW_UNSCHEDULABLE})
NOT_IN_SNAPSHOT: Final = "not in the shadow's snapshot (the node is new or gone)"


@dataclass(frozen=True)
class LiveDecision:
    """What the live scheduler did: the node it bound, or None with its FailedScheduling text."""

    node: str | None
    message: str = ""


@dataclass(frozen=True)
class ShadowDecision:
    """What the shadow's cycle chose, and every feasible node's total score (empty when one
    node was feasible: nothing is scored then, as upstream)."""

    node: str | None
    totals: Mapping[str, int] = field(default_factory=dict)
    message: str = ""  # why no node, when none


def classify(shadow: ShadowDecision, live: LiveDecision) -> str:
    if live.node is None:
        return AGREED if shadow.node is None else LIVE_UNSCHEDULABLE
    if shadow.node is None:
        return SHADOW_UNSCHEDULABLE
    if shadow.node == live.node:
        return AGREED
    best = shadow.totals.get(shadow.node)
    if best is not None and shadow.totals.get(live.node) == best:
        return TIE
    return DISAGREED


@dataclass
class PluginScores:
    """One Score plugin's scores on both nodes (weighted: what the total adds; raw: what Score
    returned). ``None``: the node was not scored (rejected, or the plugin skipped it)."""

    plugin: str
    weight: int
    shadow: int | None = None
    live: int | None = None
    shadow_raw: int | None = None
    live_raw: int | None = None


@dataclass
class Loss:
    """A plugin that scored the live scheduler's node lower than the shadow's, and by how much
    (weighted points)."""

    plugin: str
    by: int


@dataclass
class Rejection:
    """A Filter (or PreFilter) verdict of the shadow that rejected the live scheduler's node."""

    plugin: str
    message: str = ""


@dataclass
class Disagreement:
    pod: str
    outcome: str
    live_node: str | None = None
    shadow_node: str | None = None
    live_total: int | None = None
    shadow_total: int | None = None
    # The plugin that decided it: the first to reject the live node, else the one it lost
    # most points on ("" when neither says: the live scheduler found no node).
    deciding_plugin: str = ""
    lost_on: list[Loss] = field(default_factory=list, metadata={"omitempty": True})
    rejected_by: list[Rejection] = field(default_factory=list, metadata={"omitempty": True})
    scores: list[PluginScores] = field(default_factory=list, metadata={"omitempty": True})
    message: str = ""  # the live scheduler's or the shadow's reason for finding no node
    burst: bool = False  # decided while other pods were in flight (see the observer)
    time: str = ""


def evidence(
    explanation: x.Explanation,
    live: LiveDecision,
    outcome: str,
    *,
    shadow_node: str | None = None,
) -> Disagreement:
    """The evidence of a decision that was not an agreement, from the shadow's recorded cycle.
    ``shadow_node``: the shadow's choice as first decided (the recorded rerun may break a tie
    the other way); defaults to the explanation's."""
    chosen = shadow_node if shadow_node is not None else explanation.selected_node
    out = Disagreement(
        pod=explanation.pod, outcome=outcome, live_node=live.node, shadow_node=chosen
    )
    totals = explanation.totals
    if chosen is not None:
        out.shadow_total = totals.get(chosen)
    if live.node is not None:
        out.live_total = totals.get(live.node)
    for column in explanation.score:
        if column.skipped:
            continue
        on_shadow = column.nodes.get(chosen) if chosen is not None else None
        on_live = column.nodes.get(live.node) if live.node is not None else None
        out.scores.append(
            PluginScores(
                column.plugin,
                column.weight,
                shadow=on_shadow.weighted if on_shadow else None,
                live=on_live.weighted if on_live else None,
                shadow_raw=on_shadow.raw if on_shadow else None,
                live_raw=on_live.raw if on_live else None,
            )
        )
    if live.node is not None:
        out.rejected_by = _rejections(explanation, live.node)
        out.lost_on = sorted(
            (
                Loss(s.plugin, s.shadow - s.live)
                for s in out.scores
                if s.shadow is not None and s.live is not None and s.shadow > s.live
            ),
            key=lambda loss: (-loss.by, loss.plugin),
        )
    if out.rejected_by:
        out.deciding_plugin = out.rejected_by[0].plugin
    elif out.lost_on:
        out.deciding_plugin = out.lost_on[0].plugin
    if live.node is None:
        out.message = live.message
    elif chosen is None and explanation.outcome is not None:
        out.message = explanation.outcome.message
    return out


def _rejections(explanation: x.Explanation, node: str) -> list[Rejection]:
    """Why the shadow's cycle did not find ``node`` feasible, in the order it met the reasons."""
    if explanation.nodes and node not in explanation.nodes:
        return [Rejection("", NOT_IN_SNAPSHOT)]
    out = []
    for result in explanation.pre_filter:
        if result.code not in (x.SUCCESS, x.SKIP):
            out.append(Rejection(result.plugin, result.message))
        elif result.node_names is not None and node not in result.node_names:
            out.append(
                Rejection(
                    result.plugin,
                    f"its PreFilter narrowed the nodes to {len(result.node_names)}, not this one",
                )
            )
    out += [
        Rejection(column.plugin, verdict.message) for column, verdict in explanation.failures(node)
    ]
    return out
